package store

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary file contents to the loader. It must never
// panic; it either loads or fails with ErrCorrupt or ErrUnsupportedSchema.
// When it loads, the good prefix is whole lines that load again with no torn
// tail and the same records, and its conversation builds (a checkout never
// loops).
func FuzzParse(f *testing.F) {
	header := `{"type":"session","schema_version":1,"id":"f","created_at":"2026-01-02T03:04:05Z"}` + "\n"
	f.Add([]byte(""))
	f.Add([]byte(header))
	f.Add([]byte(header + goodMsg + goodMsg2))
	f.Add([]byte(header + goodMsg + goodMsg2[:30]))
	f.Add([]byte(header + goodMsg + "garbage\n" + goodMsg2))
	f.Add([]byte(header + `{"type":"compaction","ts":"2026-01-02T03:04:06Z","summary":"s","first_kept":0}` + "\n"))
	f.Add([]byte(header + `{"type":"usage_uncertainty","ts":"2026-01-02T03:04:06Z","record":{"endpoint":"e","model":"m","operation":"o"}}` + "\n"))
	f.Add([]byte(header + `{"type":"future","x":1}` + "\n"))
	f.Add([]byte(header + goodMsg + goodMsg2 + `{"type":"checkout","ts":"2026-01-02T03:04:08Z","entry":1}` + "\n" + goodMsg))
	f.Add([]byte(header + `{"type":"fork","ts":"2026-01-02T03:04:06Z","parent_id":"p","parent_entry":3}` + "\n" + goodMsg))
	f.Add([]byte(`{"type":"session","schema_version":2,"id":"f"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		l, err := parseWith(data, "", "f", 1)
		if !bytes.Equal(orig, data) {
			t.Fatal("parse modified its input")
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedSchema) {
				t.Fatalf("untyped error: %v", err)
			}
			var ce *CorruptError
			if errors.As(err, &ce) && (ce.Line < 1 || ce.Line > bytes.Count(data, []byte{'\n'})+1) {
				t.Fatalf("line %d out of range: %v", ce.Line, err)
			}
			return
		}
		if l.good+l.torn != int64(len(data)) || l.good <= 0 || data[l.good-1] != '\n' {
			t.Fatalf("good=%d torn=%d len=%d", l.good, l.torn, len(data))
		}
		again, err := parse(data[:l.good], "", "f")
		if err != nil || again.torn != 0 || len(again.recs) != len(l.recs) {
			t.Fatalf("good prefix reloads as %d records, torn %d, %v; want %d", len(again.recs), again.torn, err, len(l.recs))
		}
		// The conversation and the entries build from whatever loaded.
		s := &Session{recs: l.recs}
		for i, r := range l.recs {
			s.observe(i+1, r)
		}
		_, _ = s.Messages(), s.Entries()
		// Every loaded known record encodes again.
		for _, r := range l.recs {
			if _, ok := r.Body.(Unknown); ok {
				continue
			}
			if _, err := appendRecord(nil, r); err != nil {
				t.Fatalf("loaded record does not encode: %+v: %v", r, err)
			}
		}
	})
}
