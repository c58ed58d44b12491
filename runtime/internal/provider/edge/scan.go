package edge

import "unicode/utf8"

// maxSkipDepth bounds nesting (json v2 allows 10000); deeper input declines.
const maxSkipDepth = 1000

// Scanner is the core of the decoders' fast paths: a strict, validating
// JSON scanner that reads without reflection and without allocating. A
// fast path built on it either produces exactly what json.Unmarshal with
// Lenient would produce, or declines, and its caller falls back to
// json.Unmarshal, which then decides (and reports errors). So every method
// declines (reports false) rather than guess: escaped member names, lone
// surrogate escapes, invalid UTF-8 where a value is decoded, and numbers
// that are not plain integers.
//
// Methods that read a value skip the whitespace before it; the position
// after a false result is unspecified unless the method says otherwise.
type Scanner struct {
	b []byte
	i int
}

// NewScanner returns a Scanner at the start of data.
func NewScanner(data []byte) Scanner { return Scanner{b: data} }

// Space skips JSON whitespace.
func (s *Scanner) Space() {
	b, i := s.b, s.i
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	s.i = i
}

// Consume skips whitespace and then c, reporting whether c was there.
func (s *Scanner) Consume(c byte) bool {
	s.Space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// Peek skips whitespace and returns the next byte, 0 at the end.
func (s *Scanner) Peek() byte {
	s.Space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// AtEnd skips whitespace and reports whether the input is used up.
func (s *Scanner) AtEnd() bool {
	s.Space()
	return s.i == len(s.b)
}

// Literal consumes lit at the current position, without skipping
// whitespace first.
func (s *Scanner) Literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// Null consumes a null.
func (s *Scanner) Null() bool {
	s.Space()
	return s.Literal("null")
}

// Name reads an object member name and its colon. Names with escapes
// decline: json v2 matches them after unescaping.
func (s *Scanner) Name() ([]byte, bool) {
	s.Space()
	raw, escaped, _, ok := s.RawString()
	if !ok || escaped || !s.Consume(':') {
		return nil, false
	}
	return raw, true
}

// RawString scans a string at the current position, without skipping
// whitespace first, and returns its raw content (between the quotes,
// aliasing the input), whether it has escapes, and whether it has non-ASCII
// bytes.
func (s *Scanner) RawString() (raw []byte, escaped, nonASCII, ok bool) {
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

// strSpecial marks the bytes RawString must look at: the quote, the
// backslash, control characters and non-ASCII bytes.
var strSpecial = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// StringOrNull decodes a string (or null, as "") into dst. It declines
// invalid UTF-8 and lone surrogate escapes, which json v2 replaces.
func (s *Scanner) StringOrNull(dst *string) bool { return s.StringOrNullIn(dst, nil) }

// StringOrNullIn is StringOrNull making the string in a (nil: an ordinary
// string), unescaping in a's scratch buffer.
func (s *Scanner) StringOrNullIn(dst *string, a *Strings) bool {
	s.Space()
	if s.Literal("null") {
		*dst = ""
		return true
	}
	raw, escaped, nonASCII, ok := s.RawString()
	if !ok || (nonASCII && !utf8.Valid(raw)) {
		return false
	}
	if !escaped {
		*dst = a.Make(raw)
		return true
	}
	var buf []byte
	if a != nil {
		buf = a.scratch[:0]
	}
	out, ok := Unescape(buf, raw)
	if a != nil {
		a.scratch = out[:0]
	}
	if !ok {
		return false
	}
	*dst = a.Make(out)
	return true
}

// Unescape appends the unescaped form of raw, a string's content that
// RawString accepted, to dst. It reports false for a lone surrogate, which
// json v2 replaces and a fast path leaves to it.
func Unescape(dst, raw []byte) ([]byte, bool) {
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

// SurrogatesPaired reports whether every surrogate escape in raw, a
// string's content that RawString accepted, is part of a high-low pair
// (what Unescape accepts), without unescaping.
func SurrogatesPaired(raw []byte) bool {
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

// IntOrNull decodes a plain JSON integer (see Integer) or null, as 0.
func (s *Scanner) IntOrNull(dst *int) bool {
	s.Space()
	if s.Literal("null") {
		*dst = 0
		return true
	}
	return s.Integer(dst)
}

// Integer decodes a plain JSON integer (no fraction or exponent) of at most
// 15 digits at the current position, without skipping whitespace first;
// anything else leaves the position unchanged and reports false.
func (s *Scanner) Integer(dst *int) bool {
	start := s.i
	if !s.Number() {
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

// Number scans a JSON number at the current position, without skipping
// whitespace first.
func (s *Scanner) Number() bool {
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

// Skip scans and validates one JSON value of any kind.
func (s *Scanner) Skip() bool { return s.skip(0) }

func (s *Scanner) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch s.Peek() {
	case '"':
		_, _, _, ok := s.RawString()
		return ok
	case '{':
		s.i++
		if s.Consume('}') {
			return true
		}
		for {
			s.Space()
			if _, _, _, ok := s.RawString(); !ok || !s.Consume(':') || !s.skip(depth+1) {
				return false
			}
			if s.Consume(',') {
				continue
			}
			return s.Consume('}')
		}
	case '[':
		s.i++
		if s.Consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.Consume(',') {
				continue
			}
			return s.Consume(']')
		}
	case 't':
		return s.Literal("true")
	case 'f':
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	default:
		return s.Number()
	}
}

// Seen records which known members of an object were read, one bit each,
// so that a duplicated one declines (json v2 would merge or take the last).
type Seen uint8

// First marks bit and reports whether it was not marked before.
func (s *Seen) First(bit Seen) bool {
	if *s&bit != 0 {
		return false
	}
	*s |= bit
	return true
}
