package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseParallelMatchesSerial checks that decoding on several goroutines
// gives exactly the serial result, with the bad line placed at chunk edges,
// in the middle, and at the end.
func TestParseParallelMatchesSerial(t *testing.T) {
	const n = 1024 // 4 chunks of 256 with 4 workers
	header := `{"type":"session","schema_version":1,"id":"p","created_at":"2026-01-02T03:04:05Z"}` + "\n"
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"type":"message","ts":"2026-01-02T03:04:05Z","message":{"role":"user","text":"m%d"}}`+"\n", i)
	}
	type outcome struct {
		Recs, Line     int
		Good, Torn     int64
		Corrupt, Other bool
	}
	run := func(data []byte, workers int) outcome {
		l, err := parseWith(data, "", "p", workers)
		var ce *CorruptError
		switch {
		case errors.As(err, &ce):
			return outcome{Line: ce.Line, Corrupt: true}
		case err != nil:
			return outcome{Other: true}
		}
		for i, r := range l.recs {
			if m := r.Body.(Message).Message.Text; m != fmt.Sprintf("m%d", i) {
				t.Fatalf("workers=%d: record %d is %q", workers, i, m)
			}
		}
		return outcome{Recs: len(l.recs), Good: l.good, Torn: l.torn}
	}
	var cases []string
	cases = append(cases, header+strings.Join(lines, ""))
	cases = append(cases, header+strings.Join(lines, "")+"{partial")
	for _, bad := range []int{0, 255, 256, 511, 512, 700, 1022, 1023} {
		l := append([]string(nil), lines...)
		l[bad] = "garbage\n"
		cases = append(cases, header+strings.Join(l, ""))
		cases = append(cases, header+strings.Join(l, "")+"{partial")
		l[bad] = `{"type":"compaction","ts":"2026-01-02T03:04:05Z","summary":"s","first_kept":99999}` + "\n"
		cases = append(cases, header+strings.Join(l, ""))
	}
	for i, c := range cases {
		want := run([]byte(c), 1)
		for _, w := range []int{2, 3, 4} {
			if diff := cmp.Diff(want, run([]byte(c), w)); diff != "" {
				t.Errorf("case %d, workers=%d (-serial +parallel):\n%s", i, w, diff)
			}
		}
	}
}
