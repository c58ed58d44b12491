package resources

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/protocol"
)

// cachedEnv is an env whose resolutions share one cache whose clock is
// a minute ahead, so that what the test wrote has settled (racyWindow).
func cachedEnv(t *testing.T) (*env, *Cache) {
	e := newEnv(t, 1)
	c := NewCache()
	c.now = func() time.Time { return time.Now().Add(time.Minute) }
	return e, c
}

// scan resolves the layers through c and returns what a run's start reads.
func (e *env) scan(t *testing.T, c *Cache) ([]Skill, []ExtensionFinding) {
	t.Helper()
	s := Resolve(Options{Home: e.home, Workspace: e.wsRoot, TrustWorkspace: true, Roots: e.roots, Cache: c})
	defer s.Close()
	return s.Skills(), s.Extensions()
}

func manifestVersion(name, version string) string {
	return manifestJSON(name, map[string]string{"version": `"` + version + `"`})
}

func skillNames(skills []Skill) []string {
	var out []string
	for _, k := range skills {
		out = append(out, k.Name)
	}
	return out
}

// writeAtomic replaces path's content by a rename, as an editor saves.
func writeAtomic(t testing.TB, path, content string) {
	t.Helper()
	write(t, path+".tmp", content)
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Error(err)
	}
}

func descOf(skills []Skill, name string) string {
	for _, k := range skills {
		if k.Name == name {
			return k.Description
		}
	}
	return "(absent)"
}

// TestCacheSeesChanges: an unchanged tree is served from the cache (no
// folder listed, no file read again), and a changed skill (content and
// mtime), a skill rewritten with the same size and mtime, a removed skill,
// a new extension and a changed manifest are all seen at the next scan.
func TestCacheSeesChanges(t *testing.T) {
	e, c := cachedEnv(t)
	user := filepath.Join(e.home, ".octet")
	write(t, filepath.Join(user, "skills", "alpha", "SKILL.md"), skillMD("alpha", "first one"))
	write(t, filepath.Join(e.roots[0], "skills", "beta", "SKILL.md"), skillMD("beta", "second one"))
	write(t, filepath.Join(e.ws, ".octet", "extensions", "ext-a", "extension.json"), manifestVersion("ext-a", "1.0.0"))

	skills, exts := e.scan(t, c)
	if got := skillNames(skills); strings.Join(got, ",") != "alpha,beta" || len(exts) != 1 {
		t.Fatalf("first scan: %v %v", got, exts)
	}
	before := c.reads.Load()
	skills2, exts2 := e.scan(t, c)
	if n := c.reads.Load() - before; n != 0 {
		t.Fatalf("an unchanged tree read %d folders or files again", n)
	}
	if strings.Join(skillNames(skills2), ",") != "alpha,beta" || len(exts2) != 1 || exts2[0] != exts[0] {
		t.Fatalf("cached scan differs: %v %v", names(skills2), exts2)
	}
	// A cached skill opens its folder beneath the new run's layer.
	set := Resolve(Options{Home: e.home, Workspace: e.wsRoot, TrustWorkspace: true, Roots: e.roots, Cache: c})
	r, err := set.Skills()[0].OpenDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stat("SKILL.md"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	set.Close()

	// Content and mtime changed.
	alpha := filepath.Join(user, "skills", "alpha", "SKILL.md")
	write(t, alpha, skillMD("alpha", "first one, edited"))
	later := time.Now().Add(-time.Hour)
	if err := os.Chtimes(alpha, later, later); err != nil {
		t.Fatal(err)
	}
	skills, _ = e.scan(t, c)
	if d := descOf(skills, "alpha"); d != "first one, edited" {
		t.Fatalf("edited skill: description %q", d)
	}

	// Same size, and the mtime put back: the change time still moves.
	fi, err := os.Stat(alpha)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past a coarse timestamp tick
	write(t, alpha, skillMD("alpha", "FIRST ONE, EDITED"))
	if err := os.Chtimes(alpha, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	skills, _ = e.scan(t, c)
	if d := descOf(skills, "alpha"); d != "FIRST ONE, EDITED" {
		t.Fatalf("same-size rewrite with its mtime put back: description %q", d)
	}

	// A removed skill.
	if err := os.RemoveAll(filepath.Join(e.roots[0], "skills", "beta")); err != nil {
		t.Fatal(err)
	}
	skills, _ = e.scan(t, c)
	if got := strings.Join(skillNames(skills), ","); got != "alpha" {
		t.Fatalf("after removing beta: %s", got)
	}

	// A new extension, in a layer that had no extensions folder, and a
	// changed manifest (renamed over: a new inode).
	write(t, filepath.Join(e.roots[0], "extensions", "ext-b", "extension.json"), manifestVersion("ext-b", "2.0.0"))
	m := filepath.Join(e.ws, ".octet", "extensions", "ext-a", "extension.json")
	writeAtomic(t, m, manifestVersion("ext-a", "1.0.1"))
	_, exts = e.scan(t, c)
	if len(exts) != 2 || exts[0].Extension != "ext-a" || !strings.Contains(exts[0].Message, `"1.0.1"`) ||
		exts[1].Extension != "ext-b" || exts[1].Code != protocol.CodeNotStarted {
		t.Fatalf("after adding ext-b and changing ext-a: %+v", exts)
	}
}

// TestCacheRacyWindow: a result read while its file's times are within
// racyWindow of the clock is not kept, so a same-size rewrite in the same
// timestamp tick cannot go unseen.
func TestCacheRacyWindow(t *testing.T) {
	e := newEnv(t, 0)
	c := NewCache() // the real clock: what was just written has not settled
	write(t, filepath.Join(e.home, ".octet", "skills", "alpha", "SKILL.md"), skillMD("alpha", "first one"))
	e.scan(t, c)
	before := c.reads.Load()
	e.scan(t, c)
	if c.reads.Load() == before {
		t.Fatal("a skill written just now was served from the cache")
	}
	c.now = func() time.Time { return time.Now().Add(time.Minute) }
	e.scan(t, c)
	before = c.reads.Load()
	e.scan(t, c)
	if n := c.reads.Load() - before; n != 0 {
		t.Fatalf("settled tree read %d again", n)
	}
}

// TestCacheConcurrent: runs start concurrently on one agent and share its
// cache while the tree changes (run with -race).
func TestCacheConcurrent(t *testing.T) {
	e, c := cachedEnv(t)
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5"} {
		write(t, filepath.Join(e.home, ".octet", "skills", n, "SKILL.md"), skillMD(n, "skill "+n))
	}
	write(t, filepath.Join(e.roots[0], "extensions", "ext-a", "extension.json"), manifestVersion("ext-a", "1.0.0"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				if g == 0 && i%5 == 0 {
					writeAtomic(t, filepath.Join(e.home, ".octet", "skills", "a1", "SKILL.md"), skillMD("a1", "skill a1 v"+string(rune('0'+i/5))))
				}
				s := Resolve(Options{Home: e.home, Workspace: e.wsRoot, TrustWorkspace: true, Roots: e.roots, Cache: c})
				if k := s.Skills(); len(k) != 5 {
					t.Errorf("%d skills", len(k))
				}
				if x := s.Extensions(); len(x) != 1 {
					t.Errorf("%d extension findings", len(x))
				}
				s.Close()
			}
		})
	}
	wg.Wait()
	skills, _ := e.scan(t, c)
	if d := descOf(skills, "a1"); d != "skill a1 v3" {
		t.Fatalf("a1 after the writes: %q", d)
	}
}
