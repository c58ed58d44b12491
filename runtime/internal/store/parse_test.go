package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseParallelMatchesSerial checks that loading on several goroutines
// and in reads of any size gives exactly the serial result and the
// reference's, with the bad line placed at part edges, in the middle, and
// at the end.
func TestParseParallelMatchesSerial(t *testing.T) {
	const n = 1024 // 4 parts of 256 with 4 workers
	header := `{"type":"session","schema_version":1,"id":"f","created_at":"2026-01-02T03:04:05Z"}` + "\n"
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"type":"message","ts":"2026-01-02T03:04:05Z","message":{"role":"user","text":"m%d"}}`+"\n", i)
	}
	type outcome struct {
		Recs, Line     int
		Good, Torn     int64
		Corrupt, Other bool
		Err            string
	}
	run := func(data []byte, workers, chunk int) outcome {
		s, err := loadBytes(data, workers, chunk)
		var ce *CorruptError
		switch {
		case errors.As(err, &ce):
			return outcome{Line: ce.Line, Corrupt: true, Err: err.Error()}
		case err != nil:
			return outcome{Other: true, Err: err.Error()}
		}
		recs := s.Records()
		for i, r := range recs {
			if m := r.Body.(Message).Message.Text; m != fmt.Sprintf("m%d", i) {
				t.Fatalf("workers=%d: record %d is %q", workers, i, m)
			}
		}
		return outcome{Recs: len(recs), Good: s.size, Torn: s.tornBytes}
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
		want := run([]byte(c), 1, scanChunk)
		l, err := refParse([]byte(c), "", "f")
		var ce *CorruptError
		switch {
		case errors.As(err, &ce):
			if !want.Corrupt || want.Line != ce.Line || want.Err != err.Error() {
				t.Errorf("case %d: %+v, reference %v", i, want, err)
			}
		case err != nil || want.Corrupt || want.Other || want.Recs != len(l.recs) || want.Good != l.good || want.Torn != l.torn:
			t.Errorf("case %d: %+v, reference %d records good %d torn %d %v", i, want, len(l.recs), l.good, l.torn, err)
		}
		for _, w := range []int{2, 3, 4} {
			for _, chunk := range []int{scanChunk, 4096, 97} {
				if diff := cmp.Diff(want, run([]byte(c), w, chunk)); diff != "" {
					t.Errorf("case %d, workers=%d, chunk=%d (-serial +parallel):\n%s", i, w, chunk, diff)
				}
			}
		}
	}
}
