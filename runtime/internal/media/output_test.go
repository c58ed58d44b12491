package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"octet.dev/host/runtime/provider"
)

// A spool decodes base64 written in odd pieces (with line breaks and
// without padding), hashes and sniffs the bytes, and leaves one file.
func TestSpool(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x.media") // created by the spool
	img := append([]byte("\xff\xd8\xff\xe0JFIF"), bytes.Repeat([]byte{1, 2, 3, 4, 5}, 100001)...)
	enc := base64.RawStdEncoding.EncodeToString(img)
	sp, err := NewSpool(dir, provider.MediaImage, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(enc); i += 7777 {
		if _, err := sp.Write([]byte(enc[i:min(i+7777, len(enc))] + "\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	m, err := sp.Finish()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(img)
	got, _ := os.ReadFile(m.Spool)
	if m.MIMEType != "image/jpeg" || m.Format != "jpeg" || m.Bytes != int64(len(img)) || m.SHA256 != hex.EncodeToString(sum[:]) || !bytes.Equal(got, img) {
		t.Fatalf("media %+v", m)
	}
	if filepath.Dir(m.Spool) != dir {
		t.Fatalf("spool %s not in %s", m.Spool, dir)
	}
}

// Invalid base64, data after padding and a clip over its cap fail and
// leave no file; Abort removes the file.
func TestSpoolFailures(t *testing.T) {
	dir := t.TempDir()
	for name, input := range map[string]string{"invalid": "QUJD*", "after padding": "QQ==" + string(bytes.Repeat([]byte("QUJD"), encChunk/4)), "truncated": "QUJDR"} {
		sp, err := NewSpool(dir, provider.MediaImage, false)
		if err != nil {
			t.Fatal(err)
		}
		_, werr := sp.Write([]byte(input))
		if _, err := sp.Finish(); !errors.Is(err, ErrOutputInvalid) && !errors.Is(werr, ErrOutputInvalid) {
			t.Errorf("%s: %v %v", name, werr, err)
		}
	}
	sp, _ := NewSpool(dir, provider.MediaImage, false)
	_, _ = sp.Write([]byte("QUJD"))
	sp.Abort()
	if d := Discard(provider.MediaImage); d.Discarding() {
		if _, err := d.Write(bytes.Repeat([]byte("A"), MaxOutputImageBytes/3*4+8)); !errors.Is(err, ErrOutputTooLarge) {
			t.Errorf("discard over the cap: %v", err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

// The MIME type is sniffed, never declared: raw PCM only where asked for.
func TestOutputMIME(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n....")
	wav := []byte("RIFF\x00\x00\x00\x00WAVEfmt ")
	for _, c := range []struct {
		typ  string
		head []byte
		pcm  bool
		want string
	}{
		{provider.MediaImage, png, false, "image/png"},
		{provider.MediaImage, wav, false, OctetStream}, // audio bytes in an image
		{provider.MediaAudio, wav, true, "audio/wav"},
		{provider.MediaAudio, []byte{1, 2, 3, 4}, true, "audio/pcm"},
		{provider.MediaAudio, []byte{1, 2, 3, 4}, false, OctetStream},
		{provider.MediaImage, []byte("GIF89a"), false, "image/gif"},
	} {
		if got, _ := OutputMIME(c.typ, c.head, c.pcm); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.typ, c.head, got, c.want)
		}
	}
}
