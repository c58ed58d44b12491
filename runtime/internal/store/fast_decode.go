package store

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast path's reader of one canonical line (fast.go derives the
// schemas it reads by).

// fastDecode decodes line, one object of schema root, into v; false when
// the line is not in the strict canonical subset.
func fastDecode(root *fastNode, line []byte, v reflect.Value) bool {
	if !plainLine(line) {
		return false
	}
	d := fastDecoder{b: line}
	return d.value(root, v) && d.p == len(line)
}

// fastDecoder reads one line.
type fastDecoder struct {
	b []byte
	p int
}

// value reads a value of node n into v, or only checks it when v is not
// valid.
func (d *fastDecoder) value(n *fastNode, v reflect.Value) bool {
	switch n.kind {
	case fastString:
		start, end, esc, ok := d.str()
		if !ok {
			return false
		}
		if v.IsValid() {
			if !esc {
				raw := d.b[start+1 : end-1]
				if c, ok := commonString(raw); ok {
					v.SetString(c) // no allocation for the usual roles, statuses, events
				} else {
					v.SetString(string(raw))
				}
				return true
			}
			u, err := jsontext.AppendUnquote(nil, d.b[start:end])
			if err != nil {
				return false
			}
			v.SetString(string(u))
		}
		return true
	case fastTime:
		start, end, esc, ok := d.str()
		if !ok || esc {
			return false
		}
		t, ok := parseCanonicalTime(d.b[start+1 : end-1])
		if ok && v.IsValid() {
			v.Set(reflect.ValueOf(t))
		}
		return ok
	case fastBool:
		switch {
		case d.lit("true"):
			if v.IsValid() {
				v.SetBool(true)
			}
		case d.lit("false"):
			if v.IsValid() {
				v.SetBool(false)
			}
		default:
			return false
		}
		return true
	case fastInt:
		raw, isInt := d.number()
		if !isInt {
			return false
		}
		x, err := strconv.ParseInt(string(raw), 10, n.bits)
		if err != nil {
			return false
		}
		if v.IsValid() {
			v.SetInt(x)
		}
		return true
	case fastFloat:
		raw, _ := d.number()
		if raw == nil {
			return false
		}
		x, err := strconv.ParseFloat(string(raw), n.bits)
		if err != nil {
			return false
		}
		if v.IsValid() {
			v.SetFloat(x)
		}
		return true
	case fastSlice:
		if !d.byte('[') {
			return false
		}
		if v.IsValid() {
			v.Set(reflect.MakeSlice(n.typ, 0, 0)) // [] is an empty slice, not nil
		}
		if d.byte(']') {
			return true
		}
		for {
			var e reflect.Value
			if v.IsValid() {
				v.Set(reflect.Append(v, reflect.Zero(n.elem.typ)))
				e = v.Index(v.Len() - 1)
			}
			if !d.value(n.elem, e) {
				return false
			}
			if d.byte(']') {
				return true
			}
			if !d.byte(',') {
				return false
			}
		}
	case fastStruct:
		if !d.byte('{') {
			return false
		}
		if d.byte('}') {
			return true
		}
		var seen uint64
		for {
			start, end, esc, ok := d.str()
			if !ok || esc || !d.byte(':') {
				return false
			}
			name := d.b[start+1 : end-1]
			j := 0
			for j < len(n.fields) && n.fields[j].name != string(name) {
				j++
			}
			if j == len(n.fields) || seen&(1<<j) != 0 {
				return false // unknown or repeated: the general path decides
			}
			seen |= 1 << j
			f := &n.fields[j]
			var fv reflect.Value
			if f.keep && v.IsValid() {
				fv = v.FieldByIndex(f.index)
			}
			if !d.value(f.node, fv) {
				return false
			}
			if d.byte('}') {
				return true
			}
			if !d.byte(',') {
				return false
			}
		}
	}
	return false
}

// byte consumes c when it is next.
func (d *fastDecoder) byte(c byte) bool {
	if d.p < len(d.b) && d.b[d.p] == c {
		d.p++
		return true
	}
	return false
}

// lit consumes the literal s when it is next.
func (d *fastDecoder) lit(s string) bool {
	if len(d.b)-d.p >= len(s) && string(d.b[d.p:d.p+len(s)]) == s {
		d.p += len(s)
		return true
	}
	return false
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
// isInt reports an integer without fraction or exponent, and not "-0". raw
// is nil when no number is next.
func (d *fastDecoder) number() (raw []byte, isInt bool) {
	b, p := d.b, d.p
	digits := func() bool {
		q := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		return p > q
	}
	if p < len(b) && b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		digits()
	default:
		return nil, false
	}
	isInt = string(b[d.p:p]) != "-0"
	if p < len(b) && b[p] == '.' {
		p++
		if !digits() {
			return nil, false
		}
		isInt = false
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		if !digits() {
			return nil, false
		}
		isInt = false
	}
	raw, d.p = b[d.p:p], p
	return raw, isInt
}

// SWAR masks: a byte value in each of 8 lanes.
const (
	lanes20 = 0x2020202020202020
	lanes80 = 0x8080808080808080
)

// plainLine reports whether b is valid UTF-8 without control characters:
// a canonical line has none outside strings (no whitespace) and none raw
// inside them.
func plainLine(b []byte) bool {
	for i := 0; i < len(b); {
		// 8 bytes at a time while all are ASCII and none is a control
		// character (the high bit of x, or of a lane that borrowed
		// below 0x20).
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if (x|((x-lanes20)&^x))&lanes80 != 0 {
				break
			}
			i += 8
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		}
	}
	return true
}

// str consumes a JSON string: start and end are the offsets of its quotes
// (end past the closing one), esc whether it holds an escape. It declines
// an escape other than \" \\ \/ \b \f \n \r \t and \uXXXX, and a \u escape
// of a surrogate (whose pairing the full decoder checks). Control
// characters and UTF-8 are checked for the whole line (plainLine).
func (d *fastDecoder) str() (start, end int, esc, ok bool) {
	b, p := d.b, d.p
	if p >= len(b) || b[p] != '"' {
		return 0, 0, false, false
	}
	start = p
	p++
	q := 0 // the next quote at or after p, once found
	for {
		if q < p {
			if q = bytes.IndexByte(b[p:], '"'); q < 0 {
				return 0, 0, false, false
			}
			q += p
		}
		bs := bytes.IndexByte(b[p:q], '\\')
		if bs < 0 {
			d.p = q + 1
			return start, d.p, esc, true
		}
		p += bs
		esc = true
		if p+1 >= len(b) {
			return 0, 0, false, false
		}
		switch b[p+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p += 2
		case 'u':
			if p+6 > len(b) {
				return 0, 0, false, false
			}
			r, err := strconv.ParseUint(string(b[p+2:p+6]), 16, 16)
			if err != nil || (r >= 0xD800 && r <= 0xDFFF) {
				return 0, 0, false, false
			}
			p += 6
		default:
			return 0, 0, false, false
		}
	}
}

// parseCanonicalTime parses a time in the form the encoder writes:
// YYYY-MM-DDTHH:MM:SS, up to 9 fraction digits, Z.
func parseCanonicalTime(s []byte) (time.Time, bool) {
	const layout = "0000-00-00T00:00:00"
	if len(s) < len(layout)+1 || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	for i := range len(layout) {
		if c := s[i]; layout[i] == '0' {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
		} else if c != layout[i] {
			return time.Time{}, false
		}
	}
	if frac := s[len(layout) : len(s)-1]; len(frac) > 0 {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return time.Time{}, false
		}
		for _, c := range frac[1:] {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
