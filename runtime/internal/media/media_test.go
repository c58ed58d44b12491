package media

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/provider"
)

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a.png", "\x89PNG\r\n\x1a\n\x00\x00", "image png image/png"},
		{"a.jpg", "\xff\xd8\xff\xe0JFIF", "image jpeg image/jpeg"},
		{"a.gif", "GIF89a....", "image gif image/gif"},
		{"a.gif", "GIF87a....", "image gif image/gif"},
		{"a.webp", "RIFF\x10\x00\x00\x00WEBPVP8 ", "image webp image/webp"},
		{"a.wav", "RIFF\x10\x00\x00\x00WAVEfmt ", "audio wav audio/wav"},
		{"a.flac", "fLaC\x00\x00", "audio flac audio/flac"},
		{"a.opus", "OggS\x00\x02" + strings.Repeat("\x00", 20) + "\x01\x13OpusHead", "audio opus audio/opus"},
		{"a.mp3", "ID3\x04\x00", "audio mp3 audio/mpeg"},
		{"a.mp3", "\xff\xfb\x90\x64", "audio mp3 audio/mpeg"},
		{"a.aac", "\xff\xf1\x50\x80", "audio aac audio/aac"},
		{"a.pcm", "\x01\x02\x03\x04", "audio pcm16 audio/pcm"},
		// Not recognized: nothing, text, an Ogg that is not Opus, PCM of
		// odd length, a .pcm extension on nothing.
		{"a.png", "", ""},
		{"a.png", "hello", ""},
		{"a.ogg", "OggS\x00\x02vorbis", ""},
		{"a.pcm", "\x01\x02\x03", ""},
		{"a.pcm", "", ""},
		{"a.mp4", "\x00\x00\x00\x18ftypmp42", ""},
	} {
		typ, name, mime, ok := Sniff([]byte(tc.data), tc.name)
		got := ""
		if ok {
			got = typ + " " + name + " " + mime
		}
		if got != tc.want {
			t.Errorf("Sniff(%q, %q) = %q, want %q", tc.data, tc.name, got, tc.want)
		}
	}
}

func workspace(t *testing.T) (string, *confine.Root) {
	t.Helper()
	dir := t.TempDir()
	root, err := confine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, root
}

func TestLoad(t *testing.T) {
	dir, root := workspace(t)
	png := []byte("\x89PNG\r\n\x1a\nrest-of-image")
	os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
	os.WriteFile(filepath.Join(dir, "refs", "one.png"), png, 0o644)
	sum := sha256.Sum256(png)
	want := provider.Media{Type: "image", MIMEType: "image/png", Format: "png", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(png)), Data: png}
	for _, p := range []string{"refs/one.png", filepath.Join(dir, "refs", "one.png"), "./refs/../refs/one.png"} {
		got, err := Load(root, 0, Ref{Type: "image", Path: p})
		if err != nil {
			t.Fatalf("Load(%q): %v", p, err)
		}
		if got.SHA256 != want.SHA256 || string(got.Data) != string(png) || got.MIMEType != want.MIMEType || got.Format != "png" || got.Bytes != want.Bytes {
			t.Errorf("Load(%q) = %+v", p, got)
		}
	}
}

func TestLoadRefusals(t *testing.T) {
	dir, root := workspace(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.png"), []byte("\x89PNG\r\n\x1a\n"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(dir, "link.png"))
	os.WriteFile(filepath.Join(dir, "real.png"), []byte("\x89PNG\r\n\x1a\n"), 0o644)
	os.Symlink("real.png", filepath.Join(dir, "inner-link.png"))
	os.Mkdir(filepath.Join(dir, "dir.png"), 0o755)
	syscall.Mkfifo(filepath.Join(dir, "pipe.wav"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.png"), []byte("just text"), 0o644)
	os.WriteFile(filepath.Join(dir, "song.wav"), []byte("RIFF\x10\x00\x00\x00WAVEfmt "), 0o644)
	big, _ := os.Create(filepath.Join(dir, "big.png"))
	big.Write([]byte("\x89PNG\r\n\x1a\n"))
	big.Truncate(MaxImageBytes + 1)
	big.Close()
	bigAudio, _ := os.Create(filepath.Join(dir, "big.wav"))
	bigAudio.Truncate(MaxAudioBytes + 1)
	bigAudio.Close()

	for _, tc := range []struct {
		ref      Ref
		category error
		says     string
	}{
		{Ref{"video", "real.png"}, ErrInvalid, `media[0].type must be "image" or "audio"`},
		{Ref{"image", filepath.Join(outside, "secret.png")}, ErrInvalid, "outside the workspace"},
		{Ref{"image", "../secret.png"}, ErrInvalid, "outside the workspace"},
		{Ref{"image", "link.png"}, ErrInvalid, "symbolic link"},
		{Ref{"image", "inner-link.png"}, ErrInvalid, "symbolic link"},
		{Ref{"image", "missing.png"}, ErrInvalid, "does not exist"},
		{Ref{"image", "dir.png"}, ErrInvalid, "is a directory"},
		{Ref{"audio", "pipe.wav"}, ErrInvalid, "is not a regular file"},
		{Ref{"image", "notes.png"}, ErrInvalid, "is not a PNG"},
		{Ref{"image", "song.wav"}, ErrInvalid, "declared image but holds audio (wav)"},
		{Ref{"image", "big.png"}, ErrTooLarge, "an image may have at most 5242880"},
		{Ref{"audio", "big.wav"}, ErrTooLarge, "an audio clip may have at most 20971520"},
	} {
		_, err := Load(root, 0, tc.ref)
		if !errors.Is(err, tc.category) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Load(%+v) = %v, want %v saying %q", tc.ref, err, tc.category, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), outside) {
			t.Errorf("the error names a host path outside the workspace: %v", err)
		}
	}
}
