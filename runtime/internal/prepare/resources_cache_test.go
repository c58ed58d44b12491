package prepare

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/confine"
)

// TestResourceCacheNextRun: the agent's runs share one scan of the layers,
// and a changed skill (content and mtime), a removed skill and a new
// extension are seen at the next run; runs starting concurrently share the
// cache safely (run with -race).
func TestResourceCacheNextRun(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	user := filepath.Join(home, ".octet")
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\nBody.\n"
	}
	writeRes(t, filepath.Join(user, "skills", "alpha", "SKILL.md"), skill("alpha", "first"))
	writeRes(t, filepath.Join(user, "skills", "beta", "SKILL.md"), skill("beta", "second"))
	writeRes(t, filepath.Join(user, "extensions", "ext-a", "extension.json"),
		`{"name":"ext-a","version":"1.0.0","description":"d","api_version":"0.3","command":["x"]}`)
	cfg := testConfig(home)
	wsRoot, err := confine.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer wsRoot.Close()
	run := func() Resources {
		r := LoadResources(cfg, wsRoot, true, nil, "run-1")
		r.Set.Close()
		return r
	}
	time.Sleep(100 * time.Millisecond) // the files settle (see resources.Cache)
	run()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				if p := run(); len(p.SkillNames) != 2 || len(p.Extensions) != 1 {
					t.Errorf("concurrent run: %v, %d extension findings", p.SkillNames, len(p.Extensions))
				}
			}
		})
	}
	wg.Wait()

	alpha := filepath.Join(user, "skills", "alpha", "SKILL.md")
	writeRes(t, alpha, skill("alpha", "first, edited"))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(alpha, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(user, "skills", "beta")); err != nil {
		t.Fatal(err)
	}
	writeRes(t, filepath.Join(ws, ".octet", "extensions", "ext-b", "extension.json"),
		`{"name":"ext-b","version":"1.0.0","description":"d","api_version":"0.3","command":["x"]}`)
	p := run()
	if !slices.Equal(p.SkillNames, []string{"alpha"}) {
		t.Fatalf("skills after removing beta: %v", p.SkillNames)
	}
	if !strings.Contains(p.Prompt, "first, edited") {
		t.Fatalf("the edited skill's description is not offered:\n%s", p.Prompt)
	}
	if len(p.Extensions) != 2 || p.Extensions[1].Extension != "ext-b" {
		t.Fatalf("extension findings after adding ext-b: %+v", p.Extensions)
	}
}
