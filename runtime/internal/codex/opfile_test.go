package codex

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/credfile"
	"octet.dev/host/runtime/internal/opfile/opfiletest"
)

// TestHostileCredentialFiles: auth.json and codex.json that are a FIFO, a
// link to /dev/zero (a link is not followed), a directory, a socket or a
// sparse file past 64 KiB are refused at once with what they are; nothing
// blocks or reads the whole file.
func TestHostileCredentialFiles(t *testing.T) {
	for _, file := range []string{"auth.json", "codex.json"} {
		for _, tc := range opfiletest.Cases(credfile.MaxFileBytes) {
			t.Run(file+"/"+tc.Name, func(t *testing.T) {
				home := t.TempDir()
				p := newPaths(home)
				target := p.source
				if file == "codex.json" {
					target = p.file
				}
				tc.Make(t, target)
				want := tc.Want
				if tc.Name == "dev zero link" {
					want = "symbolic link"
				}
				done := make(chan error, 1)
				go func() {
					_, err := newStore(t, home, "http://127.0.0.1:1/unused").Credential(context.Background())
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("err = %v; want it to say %q", err, want)
					}
					if file == "codex.json" && !errors.Is(err, ErrInvalidStore) {
						t.Fatalf("err = %v; want ErrInvalidStore", err)
					}
					if file == "auth.json" && !errors.Is(err, ErrNoCredential) {
						t.Fatalf("err = %v; want ErrNoCredential", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the credential read blocked")
				}
			})
		}
	}
}
