package octethost

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's package map and dependency table name every package and
// every direct requirement of the module; these tests fail when one is
// added without a line there.

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmePackageMap(t *testing.T) {
	text := readme(t)
	pkgs := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && path != filepath.Base(path) {
			pkgs[filepath.ToSlash(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 50 {
		t.Fatalf("found %d package directories; the walk is missing them", len(pkgs))
	}
	for p := range pkgs {
		if !strings.Contains(text, "| `"+p+"` |") {
			t.Errorf("the README's package map has no row for %s", p)
		}
	}
}

func TestReadmeDependencies(t *testing.T) {
	text := readme(t)
	f, err := os.Open("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			in = true
			continue
		case line == ")":
			in = false
			continue
		}
		if !in || line == "" {
			continue
		}
		mod, _, _ := strings.Cut(line, " ")
		n++
		want := "| `" + mod + "`"
		if strings.HasSuffix(line, "// indirect") {
			want = "`" + mod + "`"
		}
		if !strings.Contains(text, want) {
			t.Errorf("the README's dependencies do not name %s", mod)
		}
	}
	if n < 10 {
		t.Fatalf("read %d requirements from go.mod", n)
	}
}
