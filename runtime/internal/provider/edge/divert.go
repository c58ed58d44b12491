package edge

import (
	"bytes"
	"errors"
	"io"

	"octet.dev/host/runtime/internal/sse"
)

// Long events. A generated image arrives as one base64 string inside one
// JSON event on one SSE data line of many megabytes (Responses
// image_generation_call). Such lines are not buffered: the SSE reader
// streams every data line longer than LongDataAt through Divert, which
// copies the event's JSON into a small skeleton and writes the contents of
// the named base64 members, as they are read, to a sink (a spool file that
// decodes them, or nothing). The skeleton, with "" in place of each
// diverted string, is then decoded like any event and held to the route's
// ordinary event bound, so only the named members may be long.

// LongDataAt is the length from which an SSE data line is streamed through
// the long-event path instead of being buffered.
const LongDataAt = 256 << 10

// MaxLongDataBytes caps one long SSE data line: 32 MiB, base64 of a 24 MiB
// image plus its event. Past it the stream fails like any event over its
// bound (FailDecode, "stream event larger than …").
const MaxLongDataBytes = 32 << 20

// maxDivertDepth bounds the nesting of a long event.
const maxDivertDepth = 64

// errDivertDepth reports a long event nested deeper than maxDivertDepth.
var errDivertDepth = errors.New("long event nested too deeply")

// Sink returns the writer for the contents of one diverted string: the
// value of member key in an event whose top-level "type" is typ (nil when
// the type was not seen yet). The writer gets the unescaped contents; the
// skeleton gets mark in their place (it must need no JSON escaping), so
// that the decoder can tell which string went where.
type Sink func(key string, typ []byte) (w io.Writer, mark string, err error)

// Divert reads the JSON text of one event from value and returns its
// skeleton: the same text with the contents of the string values of the
// members named keys (at any depth) moved to the writers sink returns and
// replaced by their marks. The
// skeleton may have at most maxSkeleton bytes (sse.ErrEventTooLarge past
// them). Divert checks only what it needs to find strings and members;
// the skeleton is validated when it is decoded.
func Divert(value io.Reader, keys []string, maxSkeleton int, sink Sink) ([]byte, error) {
	d := diverter{keys: keys, max: maxSkeleton, sink: sink}
	buf := make([]byte, 32<<10)
	for {
		n, err := value.Read(buf)
		if n > 0 {
			if derr := d.feed(buf[:n]); derr != nil {
				return nil, derr
			}
		}
		if err == io.EOF {
			if d.in {
				return nil, errors.New("long event ends inside a string")
			}
			return d.out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

type diverter struct {
	keys []string
	max  int
	sink Sink
	out  []byte

	stack     []byte // open containers, '{' or '['
	expectKey bool   // the next string in the object is a member name
	key       []byte // the last member name (bounded)
	keyLong   bool   // it was longer than the bound: matches nothing
	in        bool   // inside a string
	isKey     bool   // the string is a member name
	isType    bool   // the string is the top-level "type" value
	typ       []byte // the top-level type, once seen
	esc       int    // 0, 1 after a backslash, 2..5 reading \uXXXX digits
	hex       rune
	w         io.Writer // the diverted string's writer, nil when copying
}

const maxKeyBytes = 32

func (d *diverter) emit(b ...byte) error {
	if len(d.out)+len(b) > d.max {
		return sse.ErrEventTooLarge
	}
	d.out = append(d.out, b...)
	return nil
}

func (d *diverter) feed(p []byte) error {
	for len(p) > 0 {
		if d.in && d.w != nil && d.esc == 0 {
			// The bulk of a long event: spans between escapes and the
			// closing quote go straight to the writer.
			i := bytes.IndexAny(p, "\"\\")
			if i < 0 {
				if _, err := d.w.Write(p); err != nil {
					return err
				}
				return nil
			}
			if i > 0 {
				if _, err := d.w.Write(p[:i]); err != nil {
					return err
				}
			}
			p = p[i:]
		}
		c := p[0]
		p = p[1:]
		if d.in {
			if err := d.stringByte(c); err != nil {
				return err
			}
			continue
		}
		if err := d.emit(c); err != nil {
			return err
		}
		switch c {
		case '{', '[':
			if len(d.stack) == maxDivertDepth {
				return errDivertDepth
			}
			d.stack = append(d.stack, c)
			d.expectKey = c == '{'
		case '}', ']':
			if len(d.stack) > 0 {
				d.stack = d.stack[:len(d.stack)-1]
			}
			d.expectKey = false
		case ',':
			d.expectKey = len(d.stack) > 0 && d.stack[len(d.stack)-1] == '{'
		case ':':
			d.expectKey = false
		case '"':
			if err := d.startString(); err != nil {
				return err
			}
		}
	}
	return nil
}

// startString begins a string whose opening quote was emitted.
func (d *diverter) startString() error {
	d.in, d.esc = true, 0
	d.isKey = d.expectKey && len(d.stack) > 0 && d.stack[len(d.stack)-1] == '{'
	d.isType = false
	if d.isKey {
		d.key, d.keyLong = d.key[:0], false
		return nil
	}
	if d.keyLong {
		return nil
	}
	if len(d.stack) == 1 && string(d.key) == "type" && d.typ == nil {
		d.isType, d.typ = true, []byte{}
	}
	for _, k := range d.keys {
		if string(d.key) == k {
			w, mark, err := d.sink(k, d.typ)
			if err != nil {
				return err
			}
			if err := d.emit([]byte(mark)...); err != nil {
				return err
			}
			d.w = w
			break
		}
	}
	return nil
}

// stringByte takes one byte inside a string.
func (d *diverter) stringByte(c byte) error {
	if d.w == nil {
		if err := d.emit(c); err != nil {
			return err
		}
	}
	switch {
	case d.esc == 1:
		d.esc = 0
		if c == 'u' {
			d.esc, d.hex = 2, 0
			return nil
		}
		return d.content(unescape(c))
	case d.esc >= 2:
		v, ok := hexVal(c)
		if !ok {
			return errors.New("long event has an invalid \\u escape")
		}
		d.hex = d.hex<<4 | v
		if d.esc++; d.esc == 6 {
			d.esc = 0
			if d.hex >= 0x80 {
				if d.w != nil {
					return errors.New("long event has a non-ASCII escape in a base64 string")
				}
				return nil // only member names and the type are kept, and they stay escaped
			}
			return d.content(byte(d.hex))
		}
		return nil
	case c == '\\':
		d.esc = 1
		return nil
	case c == '"':
		d.in = false
		if d.w != nil {
			d.w = nil
			if err := d.emit('"'); err != nil {
				return err
			}
		}
		if d.isKey {
			d.expectKey = false
		}
		return nil
	}
	return d.content(c)
}

// content takes one unescaped byte of a string's contents.
func (d *diverter) content(c byte) error {
	switch {
	case d.w != nil:
		_, err := d.w.Write([]byte{c})
		return err
	case d.isKey:
		if len(d.key) == maxKeyBytes {
			d.keyLong = true
		} else {
			d.key = append(d.key, c)
		}
	case d.isType && len(d.typ) < 128:
		d.typ = append(d.typ, c)
	}
	return nil
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return c // '"', '\\', '/'
}

func hexVal(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}
