package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/opfile"
	"octet.dev/host/runtime/internal/opfile/opfiletest"
)

// TestLoadSettingsHostile: ~/.octet/settings.json that is a FIFO, a link
// to /dev/zero, a directory, a socket or a sparse file past 1 MiB (or of 1
// GiB) is an ErrSettings naming the file and what it is, at once.
func TestLoadSettingsHostile(t *testing.T) {
	cases := append(opfiletest.Cases(opfile.SettingsLimit), opfiletest.Case{Name: "GiB", Make: opfiletest.GiB, Want: "is larger than 1 MiB"})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), ".octet", "settings.json")
			tc.Make(t, p)
			done := make(chan error, 1)
			go func() { _, err := LoadSettings(p, "~/.octet/settings.json"); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "~/.octet/settings.json "+tc.Want) {
					t.Fatalf("err = %v; want ErrSettings saying %q", err, tc.Want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("LoadSettings blocked")
			}
		})
	}
	// A link to a regular file is followed, as before.
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte(`{"trusted_workspaces":["/w"]}`), 0o600)
	link := filepath.Join(dir, "settings.json")
	os.Symlink(real, link)
	if s, err := LoadSettings(link, "x"); err != nil || !s.Trusts("/w") {
		t.Fatalf("linked settings: %v %v", s, err)
	}
}
