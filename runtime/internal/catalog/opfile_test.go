package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/opfile"
	"octet.dev/host/runtime/internal/opfile/opfiletest"
)

// TestLoadHostileModelsFile: ~/.octet/models.json that is a FIFO, a link to
// /dev/zero, a directory, a socket or a sparse file past 1 MiB fails at
// once, naming the file and what it is.
func TestLoadHostileModelsFile(t *testing.T) {
	cases := append(opfiletest.Cases(opfile.ModelsLimit), opfiletest.Case{Name: "GiB", Make: opfiletest.GiB, Want: "is larger than 1 MiB"})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			home := t.TempDir()
			tc.Make(t, filepath.Join(home, ".octet", "models.json"))
			done := make(chan error, 1)
			go func() { _, err := Load(home); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.HasPrefix(err.Error(), ConfigDisplayPath+": "+tc.Want) {
					t.Fatalf("err = %v; want %q", err, ConfigDisplayPath+": "+tc.Want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Load blocked")
			}
		})
	}
	// A linked regular file still works.
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".octet"), 0o700)
	real := filepath.Join(home, "real.json")
	os.WriteFile(real, []byte(`{"providers":{}}`), 0o600)
	os.Symlink(real, filepath.Join(home, ".octet", "models.json"))
	if _, err := Load(home); err != nil {
		t.Fatalf("linked models.json: %v", err)
	}
}
