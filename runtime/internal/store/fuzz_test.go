package store

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary file contents to the loader. It must never
// panic; it either loads or fails with ErrCorrupt or ErrUnsupportedSchema,
// with exactly the verdict and error of the reference full decode
// (refParse), whatever its read size and decoding goroutines. When it
// loads, the good prefix is whole lines that load again with no torn tail
// and the same records, and every query (the conversation, the entries, a
// fork's records; a checkout never loops) answers as the reference model
// of the same records.
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
	f.Add([]byte(header + `{"type":"run_start","ts":"2026-01-02T03:04:06Z","run_id":"r"}` + "\n" + goodMsg2 +
		`{"type":"compaction","ts":"2026-01-02T03:04:07Z","summary":"` + longText + `","first_kept":1,"items":[{"type":"` + longText + `"}],"route":"x"}` + "\n" +
		`{"type":"message","ts":"2026-01-02T03:04:08Z","run_id":"r","message":{"role":"user","text":"` + longText + `","media":[{"type":"image","mime_type":"image/png","sha256":"` + longText + `","bytes":1}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		ref, refErr := refParse(data, "", "f")
		s, err := loadBytes(data, 1, scanChunk)
		if !bytes.Equal(orig, data) {
			t.Fatal("the loader modified its input")
		}
		small, smallErr := loadBytes(data, 3, 1+len(data)%13)
		for _, e := range []error{err, smallErr} {
			if (e == nil) != (refErr == nil) || (e != nil && e.Error() != refErr.Error()) {
				t.Fatalf("loader: %v; reference: %v", e, refErr)
			}
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
		if s.size != ref.good || s.tornBytes != ref.torn || small.size != ref.good || small.tornBytes != ref.torn {
			t.Fatalf("good=%d torn=%d (small reads %d %d), reference %d %d", s.size, s.tornBytes, small.size, small.tornBytes, ref.good, ref.torn)
		}
		if s.size+s.tornBytes != int64(len(data)) || s.size <= 0 || data[s.size-1] != '\n' {
			t.Fatalf("good=%d torn=%d len=%d", s.size, s.tornBytes, len(data))
		}
		again, err := loadBytes(data[:s.size], 1, scanChunk)
		if err != nil || again.tornBytes != 0 || len(again.slots) != len(s.slots) {
			t.Fatalf("good prefix reloads as %d records, torn %d, %v; want %d", len(again.slots), again.tornBytes, err, len(s.slots))
		}
		model := newRef("f", ref.recs)
		compareSession(t, s, model)
		compareSession(t, small, model)
		// Every loaded known record encodes again.
		for _, r := range ref.recs {
			if _, ok := r.Body.(Unknown); ok {
				continue
			}
			if _, err := appendRecord(nil, r); err != nil {
				t.Fatalf("loaded record does not encode: %+v: %v", r, err)
			}
		}
	})
}
