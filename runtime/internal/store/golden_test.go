package store

import (
	"bytes"
	"os"
	"testing"
)

// testdata/golden.jsonl is a session file holding every record type and
// every member of every record, in the exact bytes this package writes. It
// pins the file format: renaming a member, reordering members or changing
// what is left out of a line fails this test (and TestCompatRewrite).
const goldenFile = "testdata/golden.jsonl"

// TestGolden decodes every line of the golden file and encodes it again:
// the bytes must come back identical, through the full decoder, the
// loader's fast path where it decodes a record whole, and Open.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	seen := map[string]bool{}
	h, err := decodeHeader(bytes.TrimSuffix(lines[0], []byte("\n")), "golden")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := appendHeader(nil, h); err != nil || !bytes.Equal(got, lines[0]) {
		t.Errorf("header: re-encoded as %s (%v), want %s", got, err, lines[0])
	}
	for i, line := range lines[1:] {
		text := bytes.TrimSuffix(line, []byte("\n"))
		r, err := decodeRecord(text)
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		seen[r.Type()] = true
		if u, ok := r.Body.(Unknown); ok {
			if !bytes.Equal(u.Raw, text) {
				t.Errorf("line %d: unknown record kept as %s", i+2, u.Raw)
			}
			continue
		}
		if got, err := appendRecord(nil, r); err != nil || !bytes.Equal(got, line) {
			t.Errorf("line %d: re-encoded as\n%s(%v), want\n%s", i+2, got, err, line)
		}
		switch r.Type() {
		case TypeMessage, TypeRunStart, TypeCompaction: // decoded in part on load
		default:
			if f := fastTypes()[r.Type()]; f != nil {
				fr, ok := f.decode(text)
				if !ok {
					t.Errorf("line %d: the fast path declines it", i+2)
				} else if got, err := appendRecord(nil, fr); err != nil || !bytes.Equal(got, line) {
					t.Errorf("line %d: fast-decoded, re-encoded as\n%s(%v), want\n%s", i+2, got, err, line)
				}
			}
		}
	}
	for _, typ := range []string{TypeMessage, TypeModelChange, TypeUsage, TypeUsageUncertainty, TypeReasoningChange,
		TypeCompaction, TypeRunStart, TypeRunEnd, TypeCheckout, TypeFork, TypeNativeSteering, "hologram"} {
		if !seen[typ] {
			t.Errorf("the golden file has no %s record", typ)
		}
	}

	s, _ := openCompatCopy(t, goldenFile, nil)
	if s.UnknownRecords() != 1 || s.TornTail() {
		t.Errorf("Open: unknown=%d torn=%v, want 1 and false", s.UnknownRecords(), s.TornTail())
	}
	recs, err := s.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(lines)-1 {
		t.Fatalf("Open reads %d records, want %d", len(recs), len(lines)-1)
	}
	for i, r := range recs {
		if _, ok := r.Body.(Unknown); ok {
			continue
		}
		if got, err := appendRecord(nil, r); err != nil || !bytes.Equal(got, lines[i+1]) {
			t.Errorf("record %d read back and re-encoded as\n%s(%v), want\n%s", i+1, got, err, lines[i+1])
		}
	}
}
