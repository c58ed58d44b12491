package opfiletest

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Case is one hostile file: Make puts it at path (creating the parent
// directory), and the refusal's message contains Want.
type Case struct {
	Name string
	Make func(t *testing.T, path string)
	Want string
}

// Cases returns a FIFO, a link to /dev/zero, a directory, a socket and a
// sparse file of limit+1 bytes (no data is written).
func Cases(limit int64) []Case {
	return []Case{
		{"FIFO", func(t *testing.T, p string) {
			parent(t, p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe (FIFO)"},
		{"dev zero link", func(t *testing.T, p string) {
			parent(t, p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "is a character device"},
		{"directory", func(t *testing.T, p string) {
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
		{"socket", func(t *testing.T, p string) {
			parent(t, p)
			// A socket path is at most 108 bytes: bind through a short
			// relative name in the parent directory.
			wd, _ := os.Getwd()
			if err := os.Chdir(filepath.Dir(p)); err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("unix", filepath.Base(p))
			os.Chdir(wd)
			if err != nil {
				t.Skip("no unix socket here:", err)
			}
			t.Cleanup(func() { l.Close() })
		}, "is a socket"},
		{"sparse oversized", func(t *testing.T, p string) {
			parent(t, p)
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(limit + 1); err != nil {
				t.Fatal(err)
			}
		}, "is larger than"},
	}
}

// GiB makes a 1 GiB sparse file at path (no data is written).
func GiB(t *testing.T, path string) {
	parent(t, path)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
}

func parent(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
}
