package opfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/opfile/opfiletest"
)

func TestReadRefuses(t *testing.T) {
	for _, tc := range opfiletest.Cases(CredentialLimit) {
		for _, links := range []Links{Follow, NoFollow} {
			t.Run(tc.Name+"/"+map[Links]string{Follow: "follow", NoFollow: "nofollow"}[links], func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "d", "f.json")
				tc.Make(t, p)
				done := make(chan error, 1)
				go func() { _, err := Read(p, "~/f.json", CredentialLimit, links); done <- err }()
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("Read blocked")
				}
				want := tc.Want
				if links == NoFollow && tc.Name == "dev zero link" {
					want = "is a symbolic link"
				}
				var oe *Error
				if !errors.As(err, &oe) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "~/f.json ") {
					t.Fatalf("err = %v; want an *Error with %q naming the path", err, want)
				}
				switch {
				case tc.Name == "sparse oversized":
					if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64 KiB") {
						t.Fatalf("err = %v; want ErrTooLarge naming 64 KiB", err)
					}
				case links == NoFollow && tc.Name == "dev zero link":
					if !errors.Is(err, ErrSymlink) {
						t.Fatalf("err = %v; want ErrSymlink", err)
					}
				default:
					if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "not a regular file") {
						t.Fatalf("err = %v; want ErrNotRegular", err)
					}
				}
			})
		}
	}
}

func TestReadNormal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := os.WriteFile(p, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, links := range []Links{Follow, NoFollow} {
		if b, err := Read(p, "f", 16, links); err != nil || string(b) != `{"a":1}` {
			t.Fatalf("Read = %q, %v", b, err)
		}
	}
	// Exactly the limit is fine; empty too.
	if b, err := Read(p, "f", 7, Follow); err != nil || len(b) != 7 {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	if _, err := Read(p, "f", 6, Follow); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	os.WriteFile(p, nil, 0o600)
	if b, err := Read(p, "f", 16, Follow); err != nil || len(b) != 0 {
		t.Fatalf("empty: %q, %v", b, err)
	}
	// A link to a regular file is followed with Follow only.
	l := filepath.Join(dir, "link.json")
	os.WriteFile(p, []byte("x"), 0o600)
	os.Symlink(p, l)
	if b, err := Read(l, "f", 16, Follow); err != nil || string(b) != "x" {
		t.Fatalf("followed link: %q, %v", b, err)
	}
	if _, err := Read(l, "f", 16, NoFollow); !errors.Is(err, ErrSymlink) {
		t.Fatalf("NoFollow link: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), "f", 16, Follow); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

// TestReadGiB: a 1 GiB sparse file is refused by its size, before any
// allocation.
func TestReadGiB(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	opfiletest.GiB(t, p)
	allocs := testing.AllocsPerRun(1, func() { Read(p, "big", SettingsLimit, Follow) })
	if _, err := Read(p, "big", SettingsLimit, Follow); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("err = %v", err)
	}
	if allocs > 10 {
		t.Fatalf("%v allocations for a refused file", allocs)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
