package prepare

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/resources"
)

// BenchmarkResourceLayers100Skills is what resource layers add to a run's
// start (target: <= 5 ms): resolving the user layer, a trusted
// workspace's .octet and one explicit root holding 100 skills between them
// and three AGENTS.md files, formatting the system prompt, and closing the
// layers. The built-in docs skill is offered without touching its files.
func BenchmarkResourceLayers100Skills(b *testing.B) { benchLayers(b, 0) }

// BenchmarkResourceLayers100Skills20Extensions is the same with 20
// extension folders beside the skills (one in three has a shadowed twin a
// layer below), so extension discovery is part of the figure (target:
// layers with 100 skills and 20 extensions add <= 5 ms).
func BenchmarkResourceLayers100Skills20Extensions(b *testing.B) { benchLayers(b, 20) }

func benchLayers(b *testing.B, nExt int) {
	home, ws, root := b.TempDir(), b.TempDir(), b.TempDir()
	dirs := []string{filepath.Join(home, ".octet"), filepath.Join(ws, ".octet"), root}
	for i := range 100 {
		n := fmt.Sprintf("skill-%03d", i)
		writeRes(b, filepath.Join(dirs[i%3], "skills", n, "SKILL.md"),
			"---\nname: "+n+"\ndescription: "+strings.Repeat("Does a thing. ", 15)+"\nlicense: MIT\n---\n\n"+strings.Repeat("Body line.\n", 200))
	}
	findings := 0
	for i := range nExt {
		n := fmt.Sprintf("ext-%02d", i)
		m := `{"name":"` + n + `","version":"1.0.0","description":"` + strings.Repeat("Does a thing. ", 15) +
			`","api_version":"0.3","command":["node","dist/index.js","--stdio"]}`
		writeRes(b, filepath.Join(dirs[i%3], "extensions", n, "extension.json"), m)
		findings++
		if i%3 != 0 {
			writeRes(b, filepath.Join(dirs[i%3-1], "extensions", n, "extension.json"), m)
			findings++
		}
	}
	for _, d := range []string{filepath.Join(home, ".octet"), ws, root} {
		writeRes(b, filepath.Join(d, "AGENTS.md"), strings.Repeat("Project rule.\n", 300))
	}
	cfg := testConfig(home)
	cfg.ResourceRoots = []string{root}
	wsRoot, err := confine.Open(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer wsRoot.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// The host's docs skill, built for each run as the engine builds it.
		docs := []resources.Skill{resources.Builtin("octet-docs", "The host's documentation.", func() (*confine.Root, error) {
			return nil, errors.New("the benchmark never opens the docs skill")
		})}
		r := LoadResources(cfg, wsRoot, true, docs, "run-1")
		if len(r.SkillNames) != 101 || len(r.Extensions) != findings {
			b.Fatalf("%d skills, %d extension findings", len(r.SkillNames), len(r.Extensions))
		}
		r.Set.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/run-start")
}
