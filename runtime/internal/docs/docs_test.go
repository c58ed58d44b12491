package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var files = map[string][]byte{"README.md": []byte("# readme\n"), "docs/sessions.md": []byte("# sessions\n")}

// other is files as another build carries them: a file changed, one
// dropped, one added.
var other = map[string][]byte{"README.md": []byte("# readme v2\n"), "docs/recovery.md": []byte("# recovery\n")}

// holds reports whether dir holds exactly want and its stamp, nothing else.
func holds(t *testing.T, dir string, want map[string][]byte) {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[stampFile]) != Digest(want)+"\n" {
		t.Errorf("stamp %q, want the digest of the content", got[stampFile])
	}
	delete(got, stampFile)
	if len(got) != len(want) {
		t.Errorf("%s holds %d files, want %d: %v", dir, len(got), len(want), keys(got))
	}
	for n, b := range want {
		if !bytes.Equal(got[n], b) {
			t.Errorf("%s: %q, want %q", n, got[n], b)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// only reports whether parent holds dir alone: no temporary left behind.
func only(t *testing.T, parent string) {
	t.Helper()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "docs" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want [docs]", parent, names)
	}
}

// TestMaterializeFirstUse: the folder is created with the content, and a
// second call with the same content rewrites nothing.
func TestMaterializeFirstUse(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "octet")
	dir := filepath.Join(parent, "docs")
	if err := Materialize(dir, files); err != nil {
		t.Fatal(err)
	}
	holds(t, dir, files)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "README.md"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := Materialize(dir, files); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "README.md")); !fi.ModTime().Equal(old) {
		t.Error("the README was rewritten although it was current")
	}
	only(t, parent)
}

// TestMaterializeRefreshes: other content (another build's) replaces the
// folder whole: the changed file is new, the dropped one is gone, and so
// is a tree of the older per-version layout inside it.
func TestMaterializeRefreshes(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "docs")
	if err := Materialize(dir, files); err != nil {
		t.Fatal(err)
	}
	// What a build that kept one folder per version left there.
	if err := os.MkdirAll(filepath.Join(dir, "v0.9.0", "spec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v0.9.0", "README.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Materialize(dir, other); err != nil {
		t.Fatal(err)
	}
	holds(t, dir, other)
	only(t, parent)
	// And back: a folder without a stamp (the old layout alone) is stale too.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "devel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Materialize(dir, files); err != nil {
		t.Fatal(err)
	}
	holds(t, dir, files)
	only(t, parent)
}

// TestMaterializeSweepsStaleTemporaries: the temporary of a process that
// died while writing goes once it is old; a fresh one (a writer at work)
// stays.
func TestMaterializeSweepsStaleTemporaries(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "docs")
	stale, fresh := filepath.Join(parent, ".tmp-docs-123"), filepath.Join(parent, ".tmp-docs-456")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Materialize(dir, files); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the fresh temporary was taken: %v", err)
	}
}

// TestMaterializeUnwritable: a data home that cannot be written fails with
// an error, and leaves nothing.
func TestMaterializeUnwritable(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "share")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A path through a regular file cannot be created, whoever runs this
	// (a read-only mode would not stop root).
	if err := Materialize(filepath.Join(file, "octet", "docs"), files); err == nil {
		t.Fatal("materialized under a regular file")
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(home, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		if err := Materialize(filepath.Join(ro, "octet", "docs"), files); err == nil {
			t.Fatal("materialized in a read-only data home")
		}
	}
}

// TestMaterializeConcurrently: many materializations at once, of two
// contents, all succeed, and the folder ends complete with one of them.
func TestMaterializeConcurrently(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "docs")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		content := files
		if i%2 == 1 {
			content = other
		}
		wg.Go(func() {
			err := Materialize(dir, content)
			if err == nil && !Complete(dir) {
				err = fmt.Errorf("the folder is incomplete after a materialization returned")
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
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) == string(other["README.md"]) {
		holds(t, dir, other)
	} else {
		holds(t, dir, files)
	}
	only(t, parent)
}

// TestMaterializeTwoProcesses: two processes (this test binary, run again)
// materialize two contents into one folder over and over at once; every
// call succeeds, the folder is always complete when one returns, and it
// ends holding one content whole, with no temporary left.
func TestMaterializeTwoProcesses(t *testing.T) {
	if dir := os.Getenv("OCTET_DOCS_RACE_DIR"); dir != "" {
		content := files
		if os.Getenv("OCTET_DOCS_RACE_CONTENT") == "other" {
			content = other
		}
		n, _ := strconv.Atoi(os.Getenv("OCTET_DOCS_RACE_N"))
		for i := 0; i < n; i++ {
			if err := Materialize(dir, content); err != nil {
				fmt.Fprintln(os.Stderr, "materialize:", err)
				os.Exit(1)
			}
			if !Complete(dir) {
				fmt.Fprintln(os.Stderr, "incomplete after a materialization")
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "docs")
	var wg sync.WaitGroup
	for _, which := range []string{"files", "other"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMaterializeTwoProcesses$")
		cmd.Env = append(os.Environ(), "OCTET_DOCS_RACE_DIR="+dir, "OCTET_DOCS_RACE_CONTENT="+which, "OCTET_DOCS_RACE_N=50")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		wg.Go(func() {
			if err := cmd.Run(); err != nil {
				t.Errorf("process %s: %v: %s", which, err, stderr.String())
			}
		})
	}
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) == string(other["README.md"]) {
		holds(t, dir, other)
	} else {
		holds(t, dir, files)
	}
	only(t, parent)
}
