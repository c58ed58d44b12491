package docs

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var files = map[string][]byte{"README.md": []byte("# readme\n"), "spec/CONTRACT.md": []byte("# contract\n")}

func TestMaterializeOnce(t *testing.T) {
	base := filepath.Join(t.TempDir(), "octet", "docs")
	dir, err := Materialize(base, "v1.2.3", files)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(base, "v1.2.3") {
		t.Errorf("dir %s", dir)
	}
	for n, want := range files {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != string(want) {
			t.Errorf("%s: %q %v", n, b, err)
		}
	}
	// A second call reuses the directory: nothing is rewritten.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "README.md"), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Materialize(base, "v1.2.3", files); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "README.md")); !fi.ModTime().Equal(old) {
		t.Error("the README was rewritten although it was current")
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 {
		t.Errorf("base holds %d entries (a temporary left behind?)", len(ents))
	}
}

func TestMaterializeRefreshes(t *testing.T) {
	base := t.TempDir()
	if _, err := Materialize(base, "v1", files); err != nil {
		t.Fatal(err)
	}
	// Another version gets its own directory.
	v2 := map[string][]byte{"README.md": []byte("# readme v2\n")}
	dir2, err := Materialize(base, "v2", v2)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir2, "README.md")); string(b) != "# readme v2\n" {
		t.Errorf("v2 README %q", b)
	}
	// The same version with other content (a rebuilt development binary)
	// replaces the stale tree whole: the file it no longer has is gone.
	dir1, err := Materialize(base, "v1", v2)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir1, "README.md")); string(b) != "# readme v2\n" {
		t.Errorf("refreshed README %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir1, "spec/CONTRACT.md")); !os.IsNotExist(err) {
		t.Errorf("the stale tree's file survived: %v", err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 2 {
		t.Errorf("base holds %d entries", len(ents))
	}
}

// TestMaterializeConcurrently: many materializations at once (as two hosts
// starting together) all succeed, and every reader sees a complete tree.
func TestMaterializeConcurrently(t *testing.T) {
	base := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		content := files
		if i%2 == 1 {
			content = map[string][]byte{"README.md": []byte("# readme\n"), "spec/CONTRACT.md": []byte("# contract\n"), "x.md": []byte("x")}
		}
		wg.Go(func() {
			dir, err := Materialize(base, "v9", content)
			if err == nil {
				// Whatever won, the tree is complete: it has its stamp.
				if _, serr := os.Stat(filepath.Join(dir, stampFile)); serr != nil {
					err = serr
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 {
		t.Errorf("base holds %d entries", len(ents))
	}
}

func TestVersionDir(t *testing.T) {
	for in, want := range map[string]string{"": "devel", "(devel)": "devel", "v0.2.0": "v0.2.0",
		"v0.0.0-20261201-abc+dirty": "v0.0.0-20261201-abc+dirty", "../x": ".._x", "..": "devel", "a/b c": "a_b_c"} {
		if got := VersionDir(in); got != want {
			t.Errorf("VersionDir(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Materialize("relative", "v1", files); err == nil {
		t.Error("a relative base was accepted")
	}
	if _, err := Materialize(t.TempDir(), "v1", map[string][]byte{"../escape": nil}); err == nil {
		t.Error("a name with .. was accepted")
	}
}
