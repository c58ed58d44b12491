package tools

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/confine"
)

// Bench script note. BenchmarkGrepLargeTree reports MB/s for our grep and,
// when a grep binary is on PATH, for `grep -r` over the same tree, so one
// run gives comparable figures:
//
//	go test -run '^$' -bench GrepLargeTree -benchmem ./runtime/internal/tools/
//
// To keep the tree for other tools (ripgrep, hyperfine), set
// OCTET_GREP_BENCH_DIR to a directory: the tree is generated there once and
// reused by later runs.

// OCTET_GREP_BENCH_MB sets the tree's total size (default 20 MB; the bench
// script uses 200).
var benchFileBytes = func() int {
	mb, err := strconv.Atoi(os.Getenv("OCTET_GREP_BENCH_MB"))
	if err != nil || mb < 1 {
		mb = 20
	}
	return mb << 20 / benchFiles
}()

const (
	benchFiles   = 2000
	benchLiteral = "needle_token_7f3a"
	benchRegexp  = `func [A-Z][a-z]+Handler\(`
)

// genBenchTree writes a deterministic tree of benchFiles Go-like files of
// about benchFileBytes each under dir (40 directories of 50 files, some two
// levels deep) and returns the total size. Every 97th file holds the
// literal; about one line in 300 matches the regexp.
func genBenchTree(tb testing.TB, dir string) int64 {
	tb.Helper()
	words := strings.Fields("the quick brown fox jumps over lazy dog return value error context string int byte slice map chan select range func type struct interface package import const var defer go")
	rng := rand.New(rand.NewPCG(1, 2))
	var total int64
	for i := range benchFiles {
		sub := fmt.Sprintf("pkg%02d", i%40)
		if i%3 == 0 {
			sub = filepath.Join(sub, fmt.Sprintf("inner%d", i%5))
		}
		p := filepath.Join(dir, sub, fmt.Sprintf("file%04d.go", i))
		var b strings.Builder
		b.WriteString("package bench\n\n")
		for b.Len() < benchFileBytes {
			switch n := rng.IntN(300); {
			case n == 0:
				fmt.Fprintf(&b, "func %sHandler(w Writer) error {\n", strings.ToUpper(words[rng.IntN(len(words))][:1])+"andle")
			default:
				b.WriteByte('\t')
				for range 4 + rng.IntN(10) {
					b.WriteString(words[rng.IntN(len(words))])
					b.WriteByte(' ')
				}
				b.WriteString("\n")
			}
		}
		if i%97 == 0 {
			b.WriteString("// " + benchLiteral + "\n")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		total += int64(b.Len())
	}
	return total
}

// benchTree returns a generated tree and its size, reusing
// OCTET_GREP_BENCH_DIR when set.
func benchTree(b *testing.B) (string, int64) {
	dir := os.Getenv("OCTET_GREP_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		var total int64
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				if fi, err := d.Info(); err == nil {
					total += fi.Size()
				}
			}
			return nil
		})
		return dir, total
	}
	total := genBenchTree(b, dir)
	os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
	return dir, total
}

func BenchmarkGrepLargeTree(b *testing.B) {
	dir, total := benchTree(b)
	root, err := confine.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	// A large output bound, so that the regexp cases (thousands of
	// matches) scan the whole tree instead of stopping where the output
	// is full.
	env := Env{Root: root, MaxOutputBytes: 64 << 20}
	b.Logf("tree: %s, %d files, %.1f MB", dir, benchFiles, float64(total)/1e6)

	for _, bc := range []struct{ name, args string }{
		{"literal", `{"pattern":"` + benchLiteral + `","literal":true,"limit":100000}`},
		{"regexp", `{"pattern":` + quote(benchRegexp) + `,"limit":100000}`},
		{"regexp-ignore-case", `{"pattern":` + quote(benchRegexp) + `,"ignore_case":true,"limit":100000}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				res, err := Run(context.Background(), env, "grep", []byte(bc.args))
				if err != nil || res.Output == "(no matches)" {
					b.Fatalf("grep: %v %q", err, res.Output)
				}
				// Every 97th file holds the literal once: a search that
				// skipped files would be fast and wrong.
				if want := (benchFiles + 96) / 97; bc.name == "literal" && strings.Count(res.Output, benchLiteral) != want {
					b.Fatalf("literal found %d times, want %d", strings.Count(res.Output, benchLiteral), want)
				}
			}
		})
	}

	grep, err := exec.LookPath("grep")
	if err != nil {
		b.Log("no grep on PATH: skipping the grep -r comparison")
		return
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"grep-r-literal", []string{"-r", "-n", "-F", benchLiteral, dir}},
		{"grep-r-regexp", []string{"-r", "-n", "-E", benchRegexp, dir}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(total)
			for b.Loop() {
				cmd := exec.Command(grep, bc.args...)
				cmd.Env = append(os.Environ(), "LC_ALL=C")
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatalf("grep: %v", err)
				}
			}
		})
	}
}
