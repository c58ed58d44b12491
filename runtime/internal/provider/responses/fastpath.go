package responses

import (
	"unicode/utf8"

	"octet.dev/host/runtime/internal/provider/edge"
)

// The fast path reads an event's type and, for the delta events that make
// up nearly all of a stream, its output_index, summary_index and delta,
// without reflection and without allocating for anything but the delta
// text. It is a strict, validating JSON scanner: when it accepts an event,
// the event is valid JSON and the members it returns are exactly what
// json.Unmarshal with unmarshalOpts would produce; anything unusual
// (escaped names or type, duplicated known members, lone surrogates,
// invalid UTF-8 in the delta, a member of an unexpected kind) declines or
// marks the delta fields unusable, and the caller falls back to
// json.Unmarshal. It is built on edge.Scanner. FuzzFastPath checks the
// equivalence.

// fastEvent is what the fast path read from one event. Its slices alias the
// event data.
type fastEvent struct {
	typ          []byte // the type, unescaped; nil when absent
	outputIndex  int
	summaryIndex int
	delta        []byte // raw string content, escapes included
	deltaEscaped bool
	// fieldsOK is false when output_index, summary_index or delta had a
	// kind the fast path does not decode (the slow path decides).
	fieldsOK bool
}

// text returns the delta as a string made in strs (no allocation of its
// own). scratch is a buffer reused for unescaping.
func (fe *fastEvent) text(scratch *[]byte, strs *edge.Strings) string {
	if !fe.deltaEscaped {
		return strs.Make(fe.delta)
	}
	*scratch, _ = edge.Unescape((*scratch)[:0], fe.delta)
	return strs.Make(*scratch)
}

// parseFast scans data into fe, reporting false when it declines.
func parseFast(data []byte, fe *fastEvent) bool {
	*fe = fastEvent{fieldsOK: true}
	s := edge.NewScanner(data)
	if !s.Consume('{') {
		return false
	}
	if !s.Consume('}') {
		var seen edge.Seen
		for {
			name, ok := s.Name()
			if !ok {
				return false
			}
			switch string(name) {
			case "type":
				ok = seen.First(1) && plainString(&s, &fe.typ)
			case "output_index":
				ok = seen.First(2) && intField(&s, &fe.outputIndex, &fe.fieldsOK)
			case "summary_index":
				ok = seen.First(4) && intField(&s, &fe.summaryIndex, &fe.fieldsOK)
			case "delta":
				ok = seen.First(8) && deltaField(&s, fe)
			default:
				ok = s.Skip()
			}
			if !ok {
				return false
			}
			if s.Consume(',') {
				continue
			}
			if s.Consume('}') {
				break
			}
			return false
		}
	}
	return s.AtEnd()
}

// plainString reads a string without escapes or non-ASCII bytes.
func plainString(s *edge.Scanner, dst *[]byte) bool {
	s.Space()
	raw, escaped, nonASCII, ok := s.RawString()
	if !ok || escaped || nonASCII {
		return false
	}
	*dst = raw
	return true
}

// intField reads an integer or null into dst; any other value is skipped
// and clears fieldsOK.
func intField(s *edge.Scanner, dst *int, fieldsOK *bool) bool {
	switch c := s.Peek(); {
	case c == 'n':
		*dst = 0
		return s.Literal("null")
	case c == '-' || '0' <= c && c <= '9':
		if s.Integer(dst) {
			return true
		}
	}
	*fieldsOK = false
	return s.Skip()
}

// deltaField reads the delta: a string or null. Any other value, a lone
// surrogate escape or invalid UTF-8 clears fieldsOK.
func deltaField(s *edge.Scanner, fe *fastEvent) bool {
	switch s.Peek() {
	case 'n':
		fe.delta, fe.deltaEscaped = nil, false
		return s.Literal("null")
	case '"':
		raw, escaped, nonASCII, ok := s.RawString()
		if !ok {
			return false
		}
		fe.delta, fe.deltaEscaped = raw, escaped
		if nonASCII && !utf8.Valid(raw) {
			fe.fieldsOK = false // json v2 replaces invalid bytes; let it
		} else if escaped && !edge.SurrogatesPaired(raw) {
			fe.fieldsOK = false
		}
		return true
	}
	fe.fieldsOK = false
	return s.Skip()
}
