package testbin

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// small is the smallest command of the module, to keep the builds of
// these tests cheap.
var small = Soak

func TestBuildSharedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command")
	}
	root := t.TempDir()
	t.Setenv("OCTET_TESTBIN_DIR", root)
	env, err := loadEnv()
	if err != nil {
		t.Fatal(err)
	}
	if env.private {
		t.Skip("this checkout's builds are not shared (go.work or a local replace)")
	}
	// Concurrent callers (each with its own lock descriptor, as separate
	// processes have) get one build.
	paths := make([]string, 4)
	var wg sync.WaitGroup
	for i := range paths {
		wg.Go(func() {
			p, err := Build(small)
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	for _, p := range paths[1:] {
		if p != paths[0] {
			t.Fatalf("paths %q differ", paths)
		}
	}
	key := env.key(small)
	if want := filepath.Join(root, key, "octet-soak"); paths[0] != want {
		t.Errorf("path %s, want %s", paths[0], want)
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != key || names[1] != key+".lock" {
		t.Errorf("cache holds %q, want the key directory and its lock only", names)
	}
	// The binary runs (a usage error: exit 2).
	if err := exec.Command(paths[0]).Run(); err == nil || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("running %s: %v", paths[0], err)
	}
	info, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}

	// A crashed build (a temporary directory with half a binary) and a
	// key directory without its binary are never trusted.
	if err := os.RemoveAll(filepath.Join(root, key)); err != nil {
		t.Fatal(err)
	}
	crashed := filepath.Join(root, tempPrefix+key+"-crashed")
	os.Mkdir(crashed, 0o700)
	os.WriteFile(filepath.Join(crashed, "octet-soak"), []byte("\x7fELF half"), 0o755)
	os.Mkdir(filepath.Join(root, key), 0o700)
	p, err := Build(small)
	if err != nil {
		t.Fatal(err)
	}
	again, err := os.Stat(p)
	if err != nil || again.Size() != info.Size() {
		t.Fatalf("rebuilt binary %v, %v; want %d bytes", again, err, info.Size())
	}
	if err := exec.Command(p).Run(); err == nil || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("running the rebuilt %s: %v", p, err)
	}

	// Another Spec is another key.
	race := small
	race.Tags = []string{"sometag"}
	if env.key(race) == key {
		t.Error("tags do not change the key")
	}
}

// TestHashTree: the tree's hash changes with a file's content, name, or
// executable bit, and with a new file; .git is left out.
func TestHashTree(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	sum := func() string {
		h := sha256.New()
		if err := hashTree(h, dir); err != nil {
			t.Fatal(err)
		}
		return string(h.Sum(nil))
	}
	write("go.mod", "module x\n", 0o644)
	write("a/a.go", "package a\n", 0o644)
	seen := map[string]string{sum(): "start"}
	step := func(what string) {
		t.Helper()
		s := sum()
		if prev, ok := seen[s]; ok {
			t.Errorf("%s: the hash is the one of %s", what, prev)
		}
		seen[s] = what
	}
	write("a/a.go", "package b\n", 0o644)
	step("content")
	write("a/a.go", "package b\n", 0o755)
	step("mode")
	os.Rename(filepath.Join(dir, "a/a.go"), filepath.Join(dir, "a/b.go"))
	step("rename")
	write("a/fixtures/.hidden", "x", 0o644)
	step("new file")
	os.Symlink("b.go", filepath.Join(dir, "a/c.go"))
	step("link")
	before := sum()
	write(".git/index", "anything", 0o644)
	if sum() != before {
		t.Error(".git changes the hash")
	}
}

func TestLocalReplace(t *testing.T) {
	for mod, want := range map[string]bool{
		"module x\nrequire y v1.0.0\n":                       false,
		"module x\nreplace y => z v1.2.0\n":                  false,
		"module x\nreplace y => ../y\n":                      true,
		"module x\nreplace (\n\ty v1.0.0 => /src/y\n)\n":     true,
		"module x\nreplace y => \"./vendor y\"\n":            true,
		"module x\n// replace y => ../y in a comment, too\n": true, // over-cautious: not shared
	} {
		p := filepath.Join(t.TempDir(), "go.mod")
		os.WriteFile(p, []byte(mod), 0o644)
		if got, err := localReplace(p); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", mod, got, err, want)
		}
	}
}

// TestPrune: unused key directories and old temporary directories go,
// fresh ones and the key in use stay.
func TestPrune(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-keepUnused - time.Hour)
	mk := func(name string, mtime time.Time) {
		p := filepath.Join(root, name)
		os.Mkdir(p, 0o700)
		os.WriteFile(filepath.Join(p, "bin"), nil, 0o700)
		os.Chtimes(p, mtime, mtime)
	}
	mk("aaaa", old)                     // unused: goes
	mk("bbbb", time.Now())              // used lately: stays
	mk("cccc", old)                     // the key just built: stays
	mk("dddd", old)                     // locked by another process: stays
	mk(tempPrefix+"eeee-1", old)        // a crashed build: goes
	mk(tempPrefix+"ffff-1", time.Now()) // a build under way: stays
	mk("not-a-key", old)                // not ours: stays
	os.WriteFile(filepath.Join(root, "aaaa.lock"), nil, 0o600)
	unlock, err := lock(filepath.Join(root, "dddd.lock"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	prune(root, "cccc")
	var got []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"bbbb", "cccc", "dddd", "dddd.lock", "not-a-key", tempPrefix + "ffff-1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("left %q, want %q", got, want)
	}
}

// TestLockFollowsFile: a lock taken on a lock file another process
// removed is retaken on the file now at the path.
func TestLockFollowsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k.lock")
	unlock, err := lock(p, true)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func())
	go func() {
		u, err := lock(p, true)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	time.Sleep(50 * time.Millisecond) // the second caller waits on the old file
	os.Remove(p)
	unlock()
	u := <-got
	defer u()
	// The path's file is held: a third caller cannot take it.
	if u3, err := lock(p, false); err == nil {
		u3()
		t.Error("a lock on the removed file was trusted")
	}
}
