package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenDir(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "a/b"), 0o755)
	os.WriteFile(filepath.Join(ws, "a/b/f.txt"), []byte("in b"), 0o644)
	os.WriteFile(filepath.Join(ws, "a/sibling.txt"), []byte("sibling"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "a/link"))
	os.Symlink(outside, filepath.Join(ws, "a/b/inner-link"))
	for _, walk := range []bool{false, true} {
		r, err := open(ws, walk)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := r.OpenDir("a/b")
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the sub root stays valid
		if b, err := sub.ReadFile("f.txt"); err != nil || string(b) != "in b" {
			t.Errorf("walk=%v: read %q %v", walk, b, err)
		}
		for p, want := range map[string]error{"../sibling.txt": ErrEscape, filepath.Join(ws, "a/b/f.txt"): ErrEscape,
			"inner-link/x": ErrSymlink, "inner-link": ErrSymlink} {
			if _, err := sub.ReadFile(p); !errors.Is(err, want) {
				t.Errorf("walk=%v: %s: %v, want %v", walk, p, err, want)
			}
		}
		sub.Close()
		r, _ = open(ws, walk)
		if _, err := r.OpenDir("a/link"); !errors.Is(err, ErrSymlink) {
			t.Errorf("walk=%v: a link opened as a directory: %v", walk, err)
		}
		if _, err := r.OpenDir("a/b/f.txt"); !errors.Is(err, ErrNotDir) {
			t.Errorf("walk=%v: a file opened as a directory: %v", walk, err)
		}
		if _, err := r.OpenDir("../x"); !errors.Is(err, ErrEscape) {
			t.Errorf("walk=%v: ..: %v", walk, err)
		}
		r.Close()
	}
}
