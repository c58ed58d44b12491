package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStatForChange: one fstatat beneath the root, a final link described
// rather than followed, and no path that leaves the root lexically.
func TestStatForChange(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var st unix.Stat_t
	if err := r.StatForChange("f", &st); err != nil || st.Size != 3 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Fatalf("f: %v %+v", err, st)
	}
	if err := r.StatForChange("l", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Fatalf("l: %v, mode %o", err, st.Mode)
	}
	for _, p := range []string{"../x", "/etc/passwd", ""} {
		if err := r.StatForChange(p, &st); !errors.Is(err, ErrEscape) {
			t.Errorf("%q: %v, want ErrEscape", p, err)
		}
	}
}
