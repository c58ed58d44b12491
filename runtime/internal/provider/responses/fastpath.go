package responses

import (
	"unicode/utf8"
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
// json.Unmarshal. FuzzFastPath checks the equivalence.

// maxSkipDepth bounds nesting (json v2 allows 10000); deeper input declines.
const maxSkipDepth = 1000

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

// text returns the delta as a string, the one allocation of a delta event.
// scratch is a buffer reused for unescaping.
func (fe *fastEvent) text(scratch *[]byte) string {
	if !fe.deltaEscaped {
		return string(fe.delta)
	}
	*scratch, _ = unescape((*scratch)[:0], fe.delta)
	return string(*scratch)
}

// parseFast scans data into fe, reporting false when it declines.
func parseFast(data []byte, fe *fastEvent) bool {
	*fe = fastEvent{fieldsOK: true}
	s := scanner{b: data}
	if !s.consume('{') {
		return false
	}
	if !s.consume('}') {
		var seen uint8
		for {
			name, ok := s.name()
			if !ok {
				return false
			}
			switch string(name) {
			case "type":
				ok = once(&seen, 1) && s.plainString(&fe.typ)
			case "output_index":
				ok = once(&seen, 2) && s.intField(&fe.outputIndex, &fe.fieldsOK)
			case "summary_index":
				ok = once(&seen, 4) && s.intField(&fe.summaryIndex, &fe.fieldsOK)
			case "delta":
				ok = once(&seen, 8) && s.deltaField(fe)
			default:
				ok = s.skip(0)
			}
			if !ok {
				return false
			}
			if s.consume(',') {
				continue
			}
			if s.consume('}') {
				break
			}
			return false
		}
	}
	s.ws()
	return s.i == len(s.b)
}

// once marks bit in seen, reporting false when it was already set (a
// duplicated member: json v2 would take the last, the fast path declines).
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

type scanner struct {
	b []byte
	i int
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	b, i := s.b, s.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	s.i = i
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// literal consumes lit at the current position.
func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// name reads an object member name and its colon. Names with escapes
// decline: json v2 matches them after unescaping.
func (s *scanner) name() ([]byte, bool) {
	s.ws()
	raw, escaped, _, ok := s.str()
	if !ok || escaped || !s.consume(':') {
		return nil, false
	}
	return raw, true
}

// plainString reads a string without escapes or non-ASCII bytes.
func (s *scanner) plainString(dst *[]byte) bool {
	s.ws()
	raw, escaped, nonASCII, ok := s.str()
	if !ok || escaped || nonASCII {
		return false
	}
	*dst = raw
	return true
}

// intField reads an integer or null into dst; any other value is skipped
// and clears fieldsOK.
func (s *scanner) intField(dst *int, fieldsOK *bool) bool {
	switch c := s.peek(); {
	case c == 'n':
		*dst = 0
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		if s.integer(dst) {
			return true
		}
	}
	*fieldsOK = false
	return s.skip(0)
}

// deltaField reads the delta: a string or null. Any other value, a lone
// surrogate escape or invalid UTF-8 clears fieldsOK.
func (s *scanner) deltaField(fe *fastEvent) bool {
	switch s.peek() {
	case 'n':
		fe.delta, fe.deltaEscaped = nil, false
		return s.literal("null")
	case '"':
		raw, escaped, nonASCII, ok := s.str()
		if !ok {
			return false
		}
		fe.delta, fe.deltaEscaped = raw, escaped
		if nonASCII && !utf8.Valid(raw) {
			fe.fieldsOK = false // json v2 replaces invalid bytes; let it
		} else if escaped && !surrogatesPaired(raw) {
			fe.fieldsOK = false
		}
		return true
	}
	fe.fieldsOK = false
	return s.skip(0)
}

// str scans a string at the current position and returns its raw content
// (between the quotes), whether it has escapes, and whether it has non-ASCII
// bytes.
func (s *scanner) str() (raw []byte, escaped, nonASCII, ok bool) {
	b := s.b
	if s.i >= len(b) || b[s.i] != '"' {
		return nil, false, false, false
	}
	start := s.i + 1
	for i := start; i < len(b); {
		// Plain bytes are the bulk of every event: skip them with one
		// table lookup each.
		for i < len(b) && !strSpecial[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], escaped, nonASCII, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return nil, false, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b[i+2:]); !ok {
					return nil, false, false, false
				}
				i += 6
			default:
				return nil, false, false, false
			}
		case c < 0x20:
			return nil, false, false, false
		default:
			nonASCII = true
			i++
		}
	}
	return nil, false, false, false
}

// strSpecial marks the bytes str must look at: the quote, the backslash,
// control characters and non-ASCII bytes.
var strSpecial = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// unescape appends the unescaped form of raw, a string's content that str
// accepted, to dst. It reports false for a lone surrogate, which json v2
// replaces and the fast path leaves to it.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			dst = append(dst, raw[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(raw[i+2:])
			i += 6
			if r >= 0xDC00 && r <= 0xDFFF {
				return dst, false
			}
			if r >= 0xD800 && r <= 0xDBFF {
				// A high surrogate must be followed by an escaped low one.
				if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
					return dst, false
				}
				lo, _ := hex4(raw[i+2:])
				if lo < 0xDC00 || lo > 0xDFFF {
					return dst, false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		i += 2
	}
	return dst, true
}

// surrogatesPaired reports whether every surrogate escape in raw, a
// string's content that str accepted, is part of a high-low pair (what
// unescape accepts), without unescaping.
func surrogatesPaired(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r, _ := hex4(raw[i+2:])
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		case r >= 0xD800 && r <= 0xDBFF:
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return false
			}
			if lo, _ := hex4(raw[i+8:]); lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
		i += 5
	}
	return true
}

// hex4 parses four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// integer decodes a plain JSON integer (no fraction or exponent) of at most
// 15 digits; anything else leaves the position unchanged and reports false.
func (s *scanner) integer(dst *int) bool {
	start := s.i
	if !s.number() {
		return false
	}
	b := s.b[start:s.i]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	const maxDigits = 15 // far from int overflow; longer goes to json v2
	if len(b) > maxDigits {
		s.i = start
		return false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			s.i = start // fraction or exponent: json v2 rejects it for an int
			return false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// number scans a JSON number.
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	s.i = i
	return true
}

// skip scans and validates one JSON value of any kind.
func (s *scanner) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch s.peek() {
	case '"':
		_, _, _, ok := s.str()
		return ok
	case '{':
		s.i++
		if s.consume('}') {
			return true
		}
		for {
			s.ws()
			if _, _, _, ok := s.str(); !ok || !s.consume(':') || !s.skip(depth+1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume('}')
		}
	case '[':
		s.i++
		if s.consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume(']')
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}
