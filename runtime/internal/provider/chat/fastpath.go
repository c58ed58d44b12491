package chat

import (
	"unicode/utf8"
)

// The fast path decodes the common chunk shapes — text, refusal and
// reasoning deltas, finish chunks, with any unknown members — without
// reflection. It is a strict JSON scanner: it either produces exactly the
// chunk that json.Unmarshal with unmarshalOpts would produce, or it declines
// and the caller falls back to json.Unmarshal, which then decides (and
// reports errors). Tool-call deltas, usage and error objects, escaped names,
// surrogate escapes, invalid UTF-8 and duplicate known members all decline.
// FuzzFastPath checks the equivalence.

// maxSkipDepth bounds nesting (json v2 allows 10000); deeper input declines.
const maxSkipDepth = 1000

type scanner struct {
	b []byte
	i int
}

// parseChunkFast decodes data into c, reporting false when it declines.
// c may be partly written when it declines; the caller resets it.
func parseChunkFast(data []byte, c *chunk) bool {
	s := scanner{b: data}
	c.Choices, c.Usage, c.Error = c.Choices[:0], nil, nil
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
			case "choices":
				ok = once(&seen, 1) && s.choices(c)
			case "usage":
				ok = once(&seen, 2) && s.null()
			case "error":
				ok = once(&seen, 4) && s.null()
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
// duplicated member: json v2 would merge, the fast path declines).
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (s *scanner) choices(c *chunk) bool {
	s.ws()
	if s.null() {
		c.Choices = nil
		return true
	}
	if !s.consume('[') {
		return false
	}
	if s.consume(']') {
		return true
	}
	for {
		n := len(c.Choices)
		if n < cap(c.Choices) {
			c.Choices = c.Choices[:n+1]
			c.Choices[n] = choice{}
		} else {
			c.Choices = append(c.Choices, choice{})
		}
		if !s.choice(&c.Choices[n]) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume(']')
	}
}

func (s *scanner) choice(ch *choice) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	var seen uint8
	for {
		name, ok := s.name()
		if !ok {
			return false
		}
		switch string(name) {
		case "index":
			ok = once(&seen, 1) && s.intOrNull(&ch.Index)
		case "delta":
			ok = once(&seen, 2) && s.delta(&ch.Delta)
		case "finish_reason":
			ok = once(&seen, 4) && s.stringOrNull(&ch.FinishReason)
		default:
			ok = s.skip(0)
		}
		if !ok {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

func (s *scanner) delta(d *delta) bool {
	if s.null() {
		return true
	}
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	var seen uint8
	for {
		name, ok := s.name()
		if !ok {
			return false
		}
		switch string(name) {
		case "content":
			ok = once(&seen, 1) && s.stringOrNull(&d.Content)
		case "refusal":
			ok = once(&seen, 2) && s.stringOrNull(&d.Refusal)
		case "reasoning_content":
			ok = once(&seen, 4) && s.stringOrNull(&d.ReasoningContent)
		case "reasoning":
			var r string
			ok = once(&seen, 8) && s.stringOrNull(&r)
			d.Reasoning = textOnly(r)
		case "tool_calls":
			ok = once(&seen, 16) && s.null()
		default:
			ok = s.skip(0)
		}
		if !ok {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	b, i := s.b, s.i
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
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

// literal consumes lit at the current position.
func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// null consumes a null.
func (s *scanner) null() bool {
	s.ws()
	return s.literal("null")
}

// name reads an object member name and its colon. Names with escapes
// decline.
func (s *scanner) name() ([]byte, bool) {
	s.ws()
	raw, escaped, _, ok := s.str()
	if !ok || escaped || !s.consume(':') {
		return nil, false
	}
	return raw, true
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
		// Plain bytes are the bulk of every chunk: skip them with one
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

// stringOrNull decodes a string (or null, as "") into dst.
func (s *scanner) stringOrNull(dst *string) bool {
	s.ws()
	if s.literal("null") {
		*dst = ""
		return true
	}
	raw, escaped, nonASCII, ok := s.str()
	if !ok || (nonASCII && !utf8.Valid(raw)) {
		return false // invalid UTF-8 is mangled by json v2; let it do that
	}
	if !escaped {
		*dst = string(raw)
		return true
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(raw[i+2:])
			if r >= 0xD800 && r <= 0xDFFF {
				return false // surrogates: json v2 pairs or replaces them
			}
			out = utf8.AppendRune(out, r)
			i += 6
			continue
		}
		i += 2
	}
	*dst = string(out)
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

// intOrNull decodes a plain JSON integer (no fraction or exponent) or null.
func (s *scanner) intOrNull(dst *int) bool {
	s.ws()
	if s.literal("null") {
		*dst = 0
		return true
	}
	start := s.i
	if !s.number() {
		return false
	}
	b := s.b[start:s.i]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	const maxDigits = 15 // far from int64 overflow; longer declines
	if len(b) > maxDigits {
		return false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return false // fraction or exponent
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
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, _, _, ok := s.str()
		return ok
	case '{':
		s.i++
		if s.consume('}') {
			return true
		}
		for {
			if _, ok := s.nameAny(); !ok || !s.skip(depth+1) {
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

// nameAny reads a member name, escaped or not, and its colon.
func (s *scanner) nameAny() ([]byte, bool) {
	s.ws()
	raw, _, _, ok := s.str()
	if !ok || !s.consume(':') {
		return nil, false
	}
	return raw, true
}
