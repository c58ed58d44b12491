package copilot

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/credfile"
	"octet.dev/host/runtime/internal/opfile"
	"octet.dev/host/runtime/internal/opfile/opfiletest"
)

// within runs fn and fails the test when it does not return in 5 s.
func within(t *testing.T, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("blocked")
		return nil
	}
}

// TestHostileIdentityFile: the identity's ~/.octet/settings.json that is a
// FIFO, a link to /dev/zero, a directory, a socket or a sparse file past
// 1 MiB is an error naming it, at once.
func TestHostileIdentityFile(t *testing.T) {
	for _, tc := range opfiletest.Cases(opfile.SettingsLimit) {
		t.Run(tc.Name, func(t *testing.T) {
			home := t.TempDir()
			tc.Make(t, filepath.Join(home, ".octet", "settings.json"))
			err := within(t, func() error { _, err := LoadIdentity(home); return err })
			if err == nil || !strings.Contains(err.Error(), "~/.octet/settings.json "+tc.Want) {
				t.Fatalf("err = %v; want %q", err, tc.Want)
			}
		})
	}
}

// TestHostileCredentialStore: copilot.json that is a FIFO, a link (not
// followed), a directory, a socket or a sparse file past 64 KiB is
// ErrInvalidStore saying what it is, at once.
func TestHostileCredentialStore(t *testing.T) {
	for _, tc := range opfiletest.Cases(credfile.MaxFileBytes) {
		t.Run(tc.Name, func(t *testing.T) {
			h := &FileHost{Home: t.TempDir()}
			tc.Make(t, h.paths().File)
			want := tc.Want
			if tc.Name == "dev zero link" {
				want = "is a symbolic link"
			}
			err := within(t, func() error { _, err := h.LoadCredential(context.Background()); return err })
			if !errors.Is(err, ErrInvalidStore) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v; want ErrInvalidStore saying %q", err, want)
			}
		})
	}
}
