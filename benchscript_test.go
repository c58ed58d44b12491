package octethost

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBenchScriptFindsItsBenchmarks: every `run -bench 'PATTERN' ... ./PKG/`
// line of scripts/bench names a package that defines a benchmark the
// pattern matches (each |-alternative and each sub-benchmark prefix counts
// by its top-level name), so that moving or renaming a benchmark cannot
// leave a figure of the summary silently empty.
func TestBenchScriptFindsItsBenchmarks(t *testing.T) {
	script, err := os.ReadFile("scripts/bench")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^\s*(?:[A-Z_]+=\S+\s+)?run -bench '([^']+)'.*\s(\./\S+)\s*$`)
	decl := regexp.MustCompile(`(?m)^func (Benchmark\w+)\(b \*testing\.B\)`)
	calls := line.FindAllStringSubmatch(string(script), -1)
	if n := strings.Count(string(script), "run -bench"); len(calls) != n || n == 0 {
		t.Fatalf("read %d of the %d run -bench lines of scripts/bench; the pattern no longer reads the script", len(calls), n)
	}
	for _, c := range calls {
		pattern, pkg := c[1], strings.TrimSuffix(c[2], "/")
		// go test matches the pattern against the top-level name (the
		// part before the first /).
		top := strings.Split(pattern, "/")[0]
		files, _ := filepath.Glob(filepath.Join(pkg, "*_test.go"))
		if len(files) == 0 {
			t.Errorf("scripts/bench: %s has no test files (pattern %q)", pkg, pattern)
			continue
		}
		var names []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
				names = append(names, m[1])
			}
		}
		// Each top-level alternative of the pattern must match a
		// benchmark of the package on its own.
		for _, alt := range topLevelAlternatives(top) {
			altRE, err := regexp.Compile(alt)
			if err != nil {
				t.Errorf("scripts/bench: pattern %q: alternative %q: %v", pattern, alt, err)
				continue
			}
			found := false
			for _, n := range names {
				if altRE.MatchString(n) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("scripts/bench: no benchmark in %s matches %q (alternative %q)", pkg, pattern, alt)
			}
		}
	}
}

// topLevelAlternatives splits a pattern at the | that no parenthesis
// encloses.
func topLevelAlternatives(p string) []string {
	var alts []string
	depth, from := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				alts = append(alts, p[from:i])
				from = i + 1
			}
		}
	}
	return append(alts, p[from:])
}
