package tools

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// naiveGrep formats what grep must print for one file of the given lines
// (a match is a line containing lit): the first limit matches with ctx
// lines around them, merged, groups separated by "--".
func naiveGrep(path string, lines []string, lit string, ctx, limit int) string {
	var ms []int
	for i, l := range lines {
		if strings.Contains(l, lit) && len(ms) < limit {
			ms = append(ms, i+1)
		}
	}
	isMatch := map[int]bool{}
	for _, m := range ms {
		isMatch[m] = true
	}
	var b strings.Builder
	prev := -1
	for _, m := range ms {
		from, to := max(1, m-ctx, prev+1), min(len(lines), m+ctx)
		if ctx > 0 && prev >= 0 && from > prev+1 {
			b.WriteString("--\n")
		}
		for n := from; n <= to; n++ {
			sep := "-"
			if isMatch[n] {
				sep = ":"
			}
			fmt.Fprintf(&b, "%s%s%d%s%s\n", path, sep, n, sep, cleanLine([]byte(lines[n-1]), grepLineBytes))
			prev = n
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestGrepAcrossRegions: matches and their context are found and shown the
// same whether they lie within one buffer of the file or across the
// boundary between two, including context that reaches back into the
// previous buffer.
func TestGrepAcrossRegions(t *testing.T) {
	// Lines of 100 bytes: a buffer holds 2621 whole lines, so regions end
	// after lines 2621, 5242 and 7863. Matches sit on both sides of each
	// boundary, and elsewhere.
	perRegion := grepBufBytes / 100
	var lines []string
	for i := 1; i <= 3*perRegion+500; i++ {
		l := fmt.Sprintf("line %06d ", i)
		// Before the first boundary, just after the second (so that its
		// before-context is all in the previous region), and after the third.
		near := i == perRegion-1 || i == perRegion || i == 2*perRegion+1 || i == 3*perRegion+30
		if near || i%1000 == 500 {
			l += "needle "
		}
		lines = append(lines, l+strings.Repeat("x", 99-len(l)))
	}
	env, _, _ := newEnv(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
	env.MaxOutputBytes = 1 << 20
	for _, ctx := range []int{0, 1, 3, 40} {
		for _, limit := range []int{5, 1000} {
			args := fmt.Sprintf(`{"pattern":"needle","path":"f.txt","context":%d,"limit":%d}`, ctx, limit)
			res, err := call(t, env, "grep", args)
			if err != nil {
				t.Fatal(err)
			}
			want := naiveGrep("f.txt", lines, "needle", ctx, limit)
			got := strings.TrimSuffix(res.Output, "\n[stopped at the match limit of 5; narrow the search or raise limit]")
			if got != want {
				t.Errorf("grep %s differs from the line-by-line result:\n%s", args, firstDiff(got, want))
			}
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q, want %q (%d lines vs %d)", i+1, gl, wl, len(g), len(w))
		}
	}
	return "(no difference)"
}

// TestGrepVeryLongLine: a line longer than the buffer is searched in its
// first grepBufBytes bytes, the output says so, and the lines after it are
// searched as usual with the right numbers.
func TestGrepVeryLongLine(t *testing.T) {
	long := "needle early " + strings.Repeat("y", grepBufBytes) + " needle late\n"
	late := strings.Repeat("z", grepBufBytes+10) + " needle late\n"
	env, _, _ := newEnv(t, map[string]string{"min.js": "first\n" + long + late + "needle after\n"})
	res, err := call(t, env, "grep", `{"pattern":"needle (early|late|after)"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "min.js:2:needle early " + strings.Repeat("y", grepLineBytes-len("needle early ")) + " [… line truncated]\n" +
		"min.js:4:needle after\n" +
		"[2 lines longer than 256 KiB searched in their first 256 KiB only]"
	if res.Output != want {
		t.Errorf("output:\n%.300s\nwant:\n%.300s", res.Output, want)
	}
}

// TestGrepOutputBoundStopsSearch: context so wide that the lines to show
// exceed the output bound stops the search there instead of keeping lines
// that can never be shown; the marker then gives a lower bound.
func TestGrepOutputBoundStopsSearch(t *testing.T) {
	var b strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	env, _, _ := newEnv(t, map[string]string{"rows.txt": "needle\n" + b.String() + "needle\n"})
	env.MaxOutputBytes = 2000
	res, err := call(t, env, "grep", `{"pattern":"needle","context":1000000}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.Contains(res.Output, "of at least") || !strings.HasPrefix(res.Output, "rows.txt:1:needle\nrows.txt-2-row 0\n") {
		t.Errorf("output:\n%s", res.Output)
	}
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestGrepMemoryBounded: grep streams each file through fixed buffers, so
// what it allocates does not grow with the file's size (the old grep held
// the file, and under ignore_case a lower-cased copy too) or with
// GOMAXPROCS (the old grep had a pair of such buffers per processor).
func TestGrepMemoryBounded(t *testing.T) {
	line := "the quick brown fox jumps over the lazy dog, and the NEEDLE is elsewhere\n"
	text := func(size int) string { return strings.Repeat(line, size/len(line)) + "one needle here\n" }
	files := map[string]string{"small.txt": text(4 << 20), "large.txt": text(31 << 20)}
	for i := range 8 {
		files[fmt.Sprintf("tree/f%d.txt", i)] = text(4 << 20)
	}
	env, _, _ := newEnv(t, files)
	const bound = 4 << 20
	grep := func(args string) uint64 {
		return allocated(func() {
			res, err := Run(context.Background(), env, "grep", []byte(args))
			if err != nil || !strings.Contains(res.Output, "one needle here") {
				t.Fatalf("grep %s: %v %q", args, err, res.Output)
			}
		})
	}
	for _, opts := range []string{`"literal":true`, `"ignore_case":true`, `"pattern":"n[e]+dle h"`} {
		pattern := `"pattern":"needle h",`
		if strings.HasPrefix(opts, `"pattern"`) {
			pattern = ""
		}
		small := grep(`{` + pattern + opts + `,"path":"small.txt"}`)
		large := grep(`{` + pattern + opts + `,"path":"large.txt"}`)
		t.Logf("%s: %d bytes allocated for 4 MiB, %d for 31 MiB", opts, small, large)
		if large > bound || large > small+(1<<20) {
			t.Errorf("%s: grep allocated %d bytes for a 4 MiB file and %d for a 31 MiB one; want under %d and not growing with the size", opts, small, large, bound)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 32} {
		runtime.GOMAXPROCS(procs)
		n := grep(`{"pattern":"needle h","ignore_case":true,"path":"tree"}`)
		t.Logf("GOMAXPROCS %d: %d bytes allocated for 8 files of 4 MiB", procs, n)
		if n > bound {
			t.Errorf("GOMAXPROCS %d: grep allocated %d bytes for 8 files of 4 MiB; want under %d", procs, n, bound)
		}
	}
}
