package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider"
)

func TestMediaObjects(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "with.media", Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("\x89PNG\r\n\x1a\nimage bytes")
	digest, err := s.PutMedia(data)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.PutMedia(data); err != nil || again != digest {
		t.Fatalf("second put: %s, %v", again, err)
	}
	if got := s.MediaDir(); got != filepath.Join(dir, "with~2emedia.media") {
		t.Errorf("MediaDir = %s", got)
	}
	ref := provider.Media{Type: "image", MIMEType: "image/png", Format: "png", SHA256: digest, Bytes: int64(len(data)), Data: data}
	if err := s.Append(Record{Body: Message{RunID: "r", Message: provider.Message{Role: provider.RoleUser, Text: "look", Media: []provider.Media{ref}}}}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(s.Path())
	if strings.Contains(string(raw), "image bytes") {
		t.Error("media bytes in the session file")
	}
	s.Close()

	// Reopened: the reference comes back without bytes; the bytes come
	// from the object, checked against the digest.
	s, err = Open(dir, "with.media", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs := s.Messages()
	if len(msgs) != 1 || len(msgs[0].Media) != 1 || msgs[0].Media[0].Data != nil || msgs[0].Media[0].SHA256 != digest {
		t.Fatalf("messages %+v", msgs)
	}
	if got, err := s.Media(digest); err != nil || string(got) != string(data) {
		t.Fatalf("Media = %q, %v", got, err)
	}

	// Altered, missing, linked, or not a digest: ErrMediaMissing.
	obj := filepath.Join(s.MediaDir(), digest)
	os.WriteFile(obj, []byte("tampered"), 0o600)
	if _, err := s.Media(digest); !errors.Is(err, ErrMediaMissing) {
		t.Errorf("altered object: %v", err)
	}
	os.Remove(obj)
	if _, err := s.Media(digest); !errors.Is(err, ErrMediaMissing) {
		t.Errorf("missing object: %v", err)
	}
	other := filepath.Join(t.TempDir(), "x")
	os.WriteFile(other, data, 0o600)
	os.Symlink(other, obj)
	if _, err := s.Media(digest); !errors.Is(err, ErrMediaMissing) {
		t.Errorf("linked object: %v", err)
	}
	if _, err := s.Media("../../etc/passwd"); !errors.Is(err, ErrMediaMissing) {
		t.Errorf("path as digest: %v", err)
	}
}

func TestMediaReferenceValidated(t *testing.T) {
	s, err := Open(t.TempDir(), "v", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, m := range []provider.Media{
		{Type: "video", MIMEType: "video/mp4", SHA256: strings.Repeat("a", 64)},
		{Type: "image", MIMEType: "image/png", SHA256: "../x"},
		{Type: "image", MIMEType: "image/png", SHA256: strings.Repeat("A", 64)},
		{Type: "image", SHA256: strings.Repeat("a", 64)},
	} {
		err := s.Append(Record{Body: Message{Message: provider.Message{Role: provider.RoleUser, Media: []provider.Media{m}}}})
		if !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("media %+v: %v", m, err)
		}
	}
}
