package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"octet.dev/host/runtime/internal/confine"
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
	a, err := New(Options{Home: home, ResourceRoots: []string{root}, Docs: fstest.MapFS{"README.md": {Data: []byte("x")}},
		Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	wsRoot, err := confine.Open(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer wsRoot.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := &prepared{root: wsRoot}
		a.loadResources(p, true)
		if len(p.skillNames) != 101 || len(p.extensions) != findings {
			b.Fatalf("%d skills, %d extension findings", len(p.skillNames), len(p.extensions))
		}
		p.resources.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/run-start")
}
