package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"time"
)

// ErrEventTooLarge reports a line or an event's data longer than the
// reader's bound.
var ErrEventTooLarge = errors.New("sse: event too large")

// DefaultMaxEventBytes is the bound NewReader uses when given a bound of zero
// or less.
const DefaultMaxEventBytes = 1 << 20

// fieldAllowance is the room a line gets beyond maxEventBytes for its field
// name and separator ("event: " is the longest a dispatched value needs), so
// that an event whose data is exactly maxEventBytes long is accepted.
const fieldAllowance = 16

// bufferSize is the size of the bufio.Reader. Lines longer than this are
// assembled in a separate buffer, still within the bound.
const bufferSize = 32 << 10

// utf8BOM is the byte order mark a stream may start with (WHATWG: one leading
// U+FEFF is ignored).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Event is one dispatched event.
type Event struct {
	// Type is the value of the last "event" field, "" when there was none.
	// (The WHATWG default type "message" is left to the caller.)
	Type string
	// Data is the event's data lines joined with "\n". It aliases the
	// Reader's buffer and is valid until the next call to Next.
	Data []byte
	// ID is the last event ID: the value of the most recent "id" field seen
	// in the stream up to this event, "" when none.
	ID string
}

// Reader is a pull iterator over the events of one event stream.
type Reader struct {
	br  *bufio.Reader
	max int

	data     []byte // data buffer: each data line followed by '\n'
	typ      []byte // event type buffer
	line     []byte // a line that spans more than one buffer fill
	id       string // last event ID buffer
	typeStr  string // interned string of the last dispatched type
	fields   int    // non-comment lines since the last blank line
	retry    time.Duration
	hasRetry bool
	skipLF   bool  // the last line ended in CR: ignore one following LF
	readErr  error // the first error of the underlying reader
	started  bool  // the leading BOM check is done

	// Long data lines (SetLongData).
	longAt, longMax int
	longFn          LongData

	ev        Event
	err       error
	done      bool
	truncated bool
	pending   Event
}

// NewReader returns a Reader that decodes r. maxEventBytes bounds the length
// of every line (plus a small allowance for the field name) and of every
// event's data; zero or less means DefaultMaxEventBytes.
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, bufferSize), max: maxEventBytes}
}

// Reset makes the Reader decode r from its start, keeping its buffers,
// bound and long-data handler. It forgets the last event ID and retry value.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	*r = Reader{
		br:      r.br,
		max:     r.max,
		data:    r.data[:0],
		typ:     r.typ[:0],
		line:    r.line[:0],
		longAt:  r.longAt,
		longMax: r.longMax,
		longFn:  r.longFn,
	}
}

// LongData consumes the value of one long data line as a stream and
// returns the data to use in its place. typ is the event's type so far
// (the "event" field, when it came first; it aliases the Reader's buffer).
// value yields the line's value, after "data:" and its optional space, up
// to the line end; it returns ErrEventTooLarge past the Reader's long-line
// cap, and the underlying reader's errors. The replacement is held to the
// Reader's ordinary bound. An error ends the stream: Err returns it, except
// that when the stream ended inside the line (value returned
// io.ErrUnexpectedEOF) the event is dropped as truncated, like any event
// the stream ends inside.
type LongData func(typ []byte, value io.Reader) (replacement []byte, err error)

// SetLongData lets data lines longer than at bytes (or than the bound)
// through, up to maxLine bytes each (field name included): each is handed
// to fn as it is read instead of being buffered, so memory stays bounded
// by what fn keeps. Any other field line is still bound by maxEventBytes.
// at is raised to the buffer size when smaller; fn nil turns long lines
// off.
func (r *Reader) SetLongData(at, maxLine int, fn LongData) {
	r.longAt, r.longMax, r.longFn = max(at, bufferSize), maxLine, fn
}

// Next advances to the next dispatched event. It returns false at the end of
// the stream or on error; Err tells which.
func (r *Reader) Next() bool {
	if r.err != nil || r.done {
		return false
	}
	for {
		line, complete, err := r.readLine()
		if err != nil {
			if err == io.EOF {
				r.finish()
			} else {
				r.err = err
			}
			return false
		}
		if !complete {
			// The body ended inside a line: interpret it so Pending can
			// show it, but never dispatch it (WHATWG: an incomplete event
			// at end of file is discarded).
			if len(line) > 0 && line[0] != ':' {
				if err := r.field(line); err != nil {
					r.err = err
					return false
				}
			}
			r.finish()
			return false
		}
		if len(line) == 0 {
			if r.dispatch() {
				return true
			}
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		if err := r.field(line); err != nil {
			r.err = err
			return false
		}
	}
}

// Event returns the event Next advanced to.
func (r *Reader) Event() Event { return r.ev }

// Err returns the first error other than io.EOF: the underlying reader's
// error or ErrEventTooLarge. It is nil at a clean end of the stream, even one
// that ended inside an event (see Truncated).
func (r *Reader) Err() error { return r.err }

// Truncated reports whether the stream ended (io.EOF) after field lines that
// were not followed by a blank line, so an event was lost.
func (r *Reader) Truncated() bool { return r.truncated }

// Pending returns the event that was being assembled when the stream ended
// inside it, and whether there was one with data. It is never dispatched by
// Next; callers may inspect it to explain a cut stream. Its Data aliases the
// Reader's buffer.
func (r *Reader) Pending() (Event, bool) {
	return r.pending, r.truncated && r.pending.Data != nil
}

// Retry returns the reconnection time from the last valid "retry" field and
// whether there was one.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.hasRetry }

// finish records the end of the stream.
func (r *Reader) finish() {
	r.done = true
	r.truncated = r.fields > 0
	if r.truncated && len(r.data) > 0 {
		r.pending = Event{Type: string(r.typ), Data: r.data[:len(r.data)-1], ID: r.id}
	}
}

// dispatch ends the current event at a blank line. It reports whether there
// was an event to deliver (WHATWG: an event with an empty data buffer is not
// dispatched).
func (r *Reader) dispatch() bool {
	r.fields = 0
	if len(r.data) == 0 {
		r.typ = r.typ[:0]
		return false
	}
	typ := ""
	if len(r.typ) > 0 {
		// Intern: most streams repeat one type, so compare before
		// allocating (the comparison does not allocate).
		if string(r.typ) != r.typeStr {
			r.typeStr = string(r.typ)
		}
		typ = r.typeStr
	}
	r.ev = Event{Type: typ, Data: r.data[:len(r.data)-1], ID: r.id}
	// The next event overwrites the same backing array; Data is documented
	// as valid until the next call to Next.
	r.data = r.data[:0]
	r.typ = r.typ[:0]
	return true
}

// field applies one non-empty, non-comment line.
func (r *Reader) field(line []byte) error {
	r.fields++
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value) > r.max {
			return ErrEventTooLarge
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "id":
		// WHATWG: an id containing NUL is ignored.
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.id {
			r.id = string(value)
		}
	case "retry":
		if ms, ok := parseDigits(value); ok {
			r.retry = time.Duration(ms) * time.Millisecond
			r.hasRetry = true
		}
	}
	// Unknown field names are ignored.
	return nil
}

// parseDigits parses a non-empty run of ASCII digits, rejecting values that
// would overflow a millisecond Duration.
func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	const limit = int64(1<<63-1) / int64(time.Millisecond)
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if n > limit {
			return 0, false
		}
	}
	return n, true
}

// readLine returns the next line without its line end. complete is false for
// a final line the stream ended inside (no line end before io.EOF). The line
// is valid until the next call.
func (r *Reader) readLine() (line []byte, complete bool, err error) {
	if !r.started {
		r.started = true
		// Peek blocks until three bytes arrive; every real event is
		// longer than that.
		b, err := r.br.Peek(len(utf8BOM))
		if bytes.Equal(b, utf8BOM) {
			_, _ = r.br.Discard(len(utf8BOM))
		}
		if err != nil && len(b) < len(utf8BOM) {
			r.readErr = err // Peek consumed it; report it once the buffer drains
		}
	}
	limit := r.max + fieldAllowance
	r.line = r.line[:0]
	for {
		buf, err := r.buffered()
		if r.skipLF && len(buf) > 0 {
			r.skipLF = false
			if buf[0] == '\n' {
				_, _ = r.br.Discard(1)
				buf = buf[1:]
			}
		}
		if i := indexEOL(buf); i >= 0 {
			if len(r.line)+i > limit {
				return nil, false, ErrEventTooLarge
			}
			n := i + 1
			if buf[i] == '\r' {
				switch {
				case i+1 == len(buf):
					r.skipLF = true // the LF of a CRLF may be in the next read
				case buf[i+1] == '\n':
					n++
				}
			}
			if len(r.line) == 0 {
				line = buf[:i]
			} else {
				r.line = append(r.line, buf[:i]...)
				line = r.line
			}
			// Discard leaves the bytes in the buffer until the next
			// fill, so line stays valid until the next call.
			_, _ = r.br.Discard(n)
			return line, true, nil
		}
		if r.longFn != nil && len(r.line)+len(buf) > min(r.longAt, limit) {
			if v, ok := dataValue(r.line, buf); ok {
				return r.longLine(v)
			}
		}
		if len(r.line)+len(buf) > limit {
			return nil, false, ErrEventTooLarge
		}
		r.line = append(r.line, buf...)
		_, _ = r.br.Discard(len(buf))
		if err != nil {
			if err == io.EOF && len(r.line) > 0 {
				return r.line, false, nil
			}
			return nil, false, err
		}
	}
}

// buffered returns the bytes in the buffer, filling it first when it is
// empty. The error is the one the fill met, if any; it is kept, so the
// underlying reader is not read again after an error.
func (r *Reader) buffered() ([]byte, error) {
	if r.br.Buffered() == 0 {
		if r.readErr != nil {
			return nil, r.readErr
		}
		if _, err := r.br.Peek(1); err != nil {
			r.readErr = err
		}
	}
	b, _ := r.br.Peek(r.br.Buffered())
	return b, r.readErr
}

// indexEOL returns the index of the first CR or LF in b, or -1. Two
// vectorized scans beat one byte loop on the long lines of real streams.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	end := i
	if i < 0 {
		end = len(b)
	}
	if j := bytes.IndexByte(b[:end], '\r'); j >= 0 {
		return j
	}
	return i
}

// dataValue reports whether the line made of line and then buf is a data
// field, and how many bytes of line+buf come before its value.
func dataValue(line, buf []byte) (int, bool) {
	var head [6]byte
	n := copy(head[:], line)
	n += copy(head[n:], buf)
	if n < 5 || string(head[:5]) != "data:" {
		return 0, false
	}
	if n == 6 && head[5] == ' ' {
		return 6, true
	}
	return 5, true
}

// longLine hands a long data line to the LongData handler. skip bytes of
// r.line and then the buffer are the field name and its separator; r.line
// holds what was assembled before the buffer.
func (r *Reader) longLine(skip int) (line []byte, complete bool, err error) {
	lr := &longReader{r: r, left: r.longMax}
	lr.left -= len(r.line)
	if skip <= len(r.line) {
		lr.pending = r.line[skip:]
	} else {
		_, _ = r.br.Discard(skip - len(r.line))
		lr.left -= skip - len(r.line)
		lr.pending = nil
	}
	rep, ferr := r.longFn(r.typ, lr)
	if ferr == nil && !lr.eol {
		// The handler stopped early: the rest of the line is skipped.
		_, ferr = io.Copy(io.Discard, lr)
	}
	r.fields++ // the line was a field, whatever became of it
	switch {
	case lr.eof:
		// The stream ended inside the line: a truncated event, dropped.
		r.line = r.line[:0]
		return nil, false, nil
	case ferr != nil:
		return nil, false, ferr
	}
	r.fields-- // field() counts it again
	r.line = append(append(r.line[:0], "data:"...), rep...)
	return r.line, true, nil
}

// longReader yields the value of a long data line up to its end.
type longReader struct {
	r       *Reader
	pending []byte // assembled before the handover
	left    int    // bytes the line may still have
	eol     bool   // the line end was consumed
	eof     bool   // the stream ended inside the line
}

func (lr *longReader) Read(p []byte) (int, error) {
	if lr.eol {
		return 0, io.EOF
	}
	if lr.eof {
		return 0, io.ErrUnexpectedEOF
	}
	if len(lr.pending) > 0 {
		n := copy(p, lr.pending)
		lr.pending = lr.pending[n:]
		return n, nil
	}
	r := lr.r
	buf, err := r.buffered()
	if len(buf) == 0 {
		if err == io.EOF {
			lr.eof = true
			return 0, io.ErrUnexpectedEOF
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return 0, err
	}
	end := indexEOL(buf)
	chunk := buf
	if end >= 0 {
		chunk = buf[:end]
	}
	if len(chunk) > lr.left {
		return 0, ErrEventTooLarge
	}
	n := copy(p, chunk)
	lr.left -= n
	_, _ = r.br.Discard(n)
	if end >= 0 && n == end {
		// Consume the line end: CR, LF or CRLF (its LF may come later).
		if buf[end] == '\r' {
			if end+1 == len(buf) {
				r.skipLF = true
			} else if buf[end+1] == '\n' {
				_, _ = r.br.Discard(1)
			}
		}
		_, _ = r.br.Discard(1)
		lr.eol = true
	}
	if n == 0 {
		return lr.Read(p)
	}
	return n, nil
}
