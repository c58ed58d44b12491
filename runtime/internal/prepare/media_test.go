package prepare

import (
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/provider"
)

// TestLoadMedia: a type the route cannot take is refused before any file
// is read; an image the route takes is read beneath the workspace; a
// missing file is media_invalid.
func TestLoadMedia(t *testing.T) {
	ws := t.TempDir()
	writeRes(t, filepath.Join(ws, "img", "a.png"), "\x89PNG\r\n\x1a\n"+strings.Repeat("\x00", 64))
	root, err := confine.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	text := catalog.Model{ID: "text-only", InputModalities: []string{"text"}}
	vision := catalog.Model{ID: "seer", InputModalities: []string{"text", "image"}}
	refs := []protocol.Media{{Type: provider.MediaImage, Path: "img/a.png"}, {Type: provider.MediaImage, Path: "missing.png"}}

	if _, err := LoadMedia(root, &text, refs); err == nil || err.Code != protocol.CodeMediaUnsupported || !strings.Contains(err.Message, `model "text-only" takes text`) {
		t.Fatalf("an image on a text route: %v", err)
	}
	if _, err := LoadMedia(root, &vision, refs); err == nil || err.Code != protocol.CodeMediaInvalid {
		t.Fatalf("a missing image: %v", err)
	}
	got, rerr := LoadMedia(root, &vision, refs[:1])
	if rerr != nil || len(got) != 1 || got[0].Type != provider.MediaImage || len(got[0].Data) != int(got[0].Bytes) || got[0].SHA256 == "" {
		t.Fatalf("an image read: %d inputs, %v", len(got), rerr)
	}
	if _, err := LoadMedia(root, &text, []protocol.Media{{Type: provider.MediaAudio, Path: "x.wav"}}); err == nil || err.Code != protocol.CodeMediaUnsupported {
		t.Errorf("audio on a text route: %v", err)
	}
}
