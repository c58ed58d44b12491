package confine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheck(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		tests := []struct {
			path, rel string
			err       error
		}{
			{path: "a.txt", rel: "a.txt"},
			{path: "", rel: "."},
			{path: ".", rel: "."},
			{path: "sub/deep", rel: "sub/deep"},
			{path: filepath.Join(ws, "sub", "b.txt"), rel: "sub/b.txt"},
			// Missing, partly missing or through a file: the operation's to
			// report, not the gate's.
			{path: "missing.txt", rel: "missing.txt"},
			{path: "missing/dir/new.txt", rel: "missing/dir/new.txt"},
			{path: "a.txt/x", rel: "a.txt/x"},
			{path: "../outside/secret.txt", err: ErrEscape},
			{path: "sub/../..", err: ErrEscape},
			{path: filepath.Join(tmp, "outside", "secret.txt"), err: ErrEscape},
			{path: "/etc/passwd", err: ErrEscape},
			{path: "a\x00", err: ErrInvalidPath},
			// Links refuse, final or not, pointing in or out, dangling.
			{path: "link_out_file", err: ErrSymlink},
			{path: "link_out_abs", err: ErrSymlink},
			{path: "link_out_dir", err: ErrSymlink},
			{path: "link_out_dir/inner.txt", err: ErrSymlink},
			{path: "link_out_dir/new.txt", err: ErrSymlink},
			{path: "link_in_file", err: ErrSymlink},
			{path: "link_in_dir/b.txt", err: ErrSymlink},
			{path: "sub/link_up", err: ErrSymlink},
			{path: "dangling", err: ErrSymlink},
			{path: "dangling/new.txt", err: ErrSymlink},
		}
		for _, tt := range tests {
			rel, err := r.Check(tt.path)
			checkErr(t, tmp, err, tt.err)
			if tt.err == nil && rel != tt.rel {
				t.Errorf("Check(%q) = %q, want %q", tt.path, rel, tt.rel)
			}
		}
	})
}

// TestCheckIsNotTheGuard: a link swapped in after Check passed is refused by
// the operation itself, with the same category.
func TestCheckIsNotTheGuard(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		if _, err := r.Check("sub/b.txt"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub.old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(tmp, "outside"), filepath.Join(ws, "sub")); err != nil {
			t.Fatal(err)
		}
		_, err := r.ReadFile("sub/b.txt")
		checkErr(t, tmp, err, ErrSymlink)
		err = r.WriteFileAtomic("sub/new.txt", []byte("x"), 0o644)
		checkErr(t, tmp, err, ErrSymlink)
		assertOutsideIntact(t, tmp)
	})
}
