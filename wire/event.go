package wire

import (
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
)

// Event is one outbound frame. RequestID nil is written as null (a
// protocol_error for a line that yielded no valid ID). RunID and SessionID
// are written only when non-empty (run events, CONTRACT §5).
type Event struct {
	ProtocolVersion int                `json:"protocol_version"`
	RequestID       *string            `json:"request_id"`
	Seq             int                `json:"seq"`
	Type            protocol.EventType `json:"type"`
	RunID           string             `json:"run_id,omitzero"`
	SessionID       string             `json:"session_id,omitzero"`
	Data            any                `json:"data"`
}

// ErrOutputTooLarge reports that an event was replaced by a terminal
// protocol_error output_too_large because its frame would exceed the bound.
var ErrOutputTooLarge = errors.New("wire: event exceeds the 1 MiB frame bound; replaced by protocol_error output_too_large")

// ErrStreamClosed reports an event emitted after the request's terminal
// event. It is a broken invariant of the caller.
var ErrStreamClosed = errors.New("wire: event after the terminal event")

// Writer is the one writer of protocol frames. It serializes each event to a
// single line, enforces the outbound bound and writes every line whole, in
// one Write call (a Stream may write several lines held back together, see
// Stream.Hold). It never drops an event: Write blocks while the reader is
// slow. After a write error every later write fails with that error.
//
// A Writer is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	max int
}

// NewWriter returns a Writer with the protocol bound.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, max: protocol.MaxFrameBytes} }

// NewWriterSize returns a Writer whose frames are bounded by max bytes
// including the newline. It exists for tests.
func NewWriterSize(w io.Writer, max int) *Writer { return &Writer{w: w, max: max} }

// Appender is implemented by event data that encodes itself: AppendJSON
// appends the data's JSON object to b. Hot events (model_delta) implement
// it so that streaming costs no reflection and no allocation.
type Appender interface {
	AppendJSON(b []byte) []byte
}

// encode appends one event as a frame (newline included) to buf, or
// returns errFrameTooBig when it would exceed the bound.
func (w *Writer) encode(buf []byte, ev *Event) ([]byte, error) {
	buf = appendHead(buf, ev.ProtocolVersion, ev.RequestID)
	buf = appendSeqType(buf, ev.Seq, ev.Type)
	buf = appendIDs(buf, ev.RunID, ev.SessionID)
	return w.appendData(buf, ev.Data)
}

// appendHead appends the frame's members before seq: protocol_version and
// request_id. A frame is head, seq and type, IDs, then data.
func appendHead(buf []byte, version int, requestID *string) []byte {
	buf = append(buf, `{"protocol_version":`...)
	buf = strconv.AppendInt(buf, int64(version), 10)
	buf = append(buf, `,"request_id":`...)
	if requestID == nil {
		return append(buf, "null"...)
	}
	buf, _ = jsontext.AppendQuote(buf, *requestID)
	return buf
}

// appendSeqType appends the seq and type members.
func appendSeqType(buf []byte, seq int, typ protocol.EventType) []byte {
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, int64(seq), 10)
	buf = append(buf, `,"type":`...)
	buf, _ = jsontext.AppendQuote(buf, typ)
	return buf
}

// appendIDs appends run_id and session_id when set, and the name of data.
func appendIDs(buf []byte, runID, sessionID string) []byte {
	if runID != "" {
		buf = append(buf, `,"run_id":`...)
		buf, _ = jsontext.AppendQuote(buf, runID)
	}
	if sessionID != "" {
		buf = append(buf, `,"session_id":`...)
		buf, _ = jsontext.AppendQuote(buf, sessionID)
	}
	return append(buf, `,"data":`...)
}

// appendData appends the data member's value and ends the frame.
func (w *Writer) appendData(buf []byte, data any) ([]byte, error) {
	if a, ok := data.(Appender); ok {
		buf = a.AppendJSON(buf)
	} else {
		// Invalid UTF-8 in a string (a binary tool output, say) is replaced
		// by U+FFFD rather than failing the event.
		data, err := json.Marshal(data, jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(false))
		if err != nil {
			return buf, err
		}
		buf = append(buf, data...)
	}
	buf = append(buf, "}\n"...)
	if len(buf) > w.max {
		return buf, errFrameTooBig
	}
	return buf, nil
}

var errFrameTooBig = errors.New("frame too big")

// writeFrame writes encoded frames (one, or those a Stream held) with a
// single Write call.
func (w *Writer) writeFrame(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(frame); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stream writes the events of one request and enforces "nothing after the
// terminal event" (CONTRACT §5). It does not count seq: the caller passes
// each event's seq, which the protocol session machine (fsm/session) owns.
//
// A Stream is used by one goroutine at a time.
type Stream struct {
	w         *Writer
	buf       []byte             // scratch for the pending frame, reused
	held      []byte             // frames held back by Hold, not written yet
	head, ids []byte             // the parts every frame of the stream shares (appendHead, appendIDs)
	typ       protocol.EventType // the type of the last frame encoded, and its JSON string:
	typJSON   []byte             // a run's events are mostly of one type (model_delta)
	requestID *string
	runID     string
	sessionID string
	done      bool
}

// Stream starts the event stream of a request. requestID "" means the line
// yielded no valid ID (written as null).
func (w *Writer) Stream(requestID, runID, sessionID string) *Stream {
	s := &Stream{w: w, runID: runID, sessionID: sessionID}
	if requestID != "" {
		s.requestID = &requestID
	}
	s.head = appendHead(nil, protocol.Version, s.requestID)
	s.ids = appendIDs(nil, runID, sessionID)
	return s
}

// Done reports whether the terminal event has been written.
func (s *Stream) Done() bool { return s.done }

// Pending is an encoded event not yet written. Terminal reports whether it
// ends the request: either it was encoded as terminal, or it was replaced by
// the terminal protocol_error output_too_large (Replaced). It is valid until
// the stream's next Encode.
type Pending struct {
	frame    []byte
	Seq      int
	Terminal bool
	Replaced bool
}

// Encode encodes the stream's event with seq without writing it, so the
// caller can tell its state machine which kind of event is about to be
// written (a replaced event is terminal).
func (s *Stream) Encode(seq int, typ protocol.EventType, data any, terminal bool) (Pending, error) {
	if s.done {
		return Pending{}, ErrStreamClosed
	}
	// The frame is Writer.encode's, with the parts every frame of the
	// stream shares copied in rather than encoded again.
	frame := append(s.buf[:0], s.head...)
	frame = append(frame, `,"seq":`...)
	frame = strconv.AppendInt(frame, int64(seq), 10)
	frame = append(frame, `,"type":`...)
	if typ != s.typ || s.typJSON == nil {
		s.typ = typ
		s.typJSON, _ = jsontext.AppendQuote(s.typJSON[:0], typ)
	}
	frame = append(frame, s.typJSON...)
	frame = append(frame, s.ids...)
	frame, err := s.w.appendData(frame, data)
	if err == errFrameTooBig { // appendData returns it as is
		ev := Event{ProtocolVersion: protocol.Version, RequestID: s.requestID, Seq: seq, Type: typ, RunID: s.runID, SessionID: s.sessionID, Data: data}
		ev.Type = protocol.TypeProtocolError
		ev.Data = protocol.ErrorData{Code: protocol.CodeOutputTooLarge, Message: "a " + quoteName(string(typ)) + " event exceeded the 1048576-byte frame bound and was withheld"}
		frame, err = s.w.encode(frame[:0], &ev)
		s.keep(frame)
		return Pending{frame: frame, Seq: seq, Terminal: true, Replaced: true}, err
	}
	s.keep(frame)
	return Pending{frame: frame, Seq: seq, Terminal: terminal}, err
}

// keep retains the scratch buffer for reuse unless it grew large.
func (s *Stream) keep(buf []byte) {
	if cap(buf) <= 64<<10 {
		s.buf = buf
	} else {
		s.buf = nil
	}
}

// Write writes an event encoded by Encode, after the frames Hold held back
// and in the same Write call. It returns ErrOutputTooLarge after writing a
// replacement.
func (s *Stream) Write(p Pending) error {
	if s.done {
		return ErrStreamClosed
	}
	var err error
	if len(s.held) == 0 {
		err = s.w.writeFrame(p.frame)
	} else {
		s.held = append(s.held, p.frame...)
		err = s.w.writeFrame(s.held)
		s.resetHeld()
	}
	if err != nil {
		return err
	}
	s.done = p.Terminal
	if p.Replaced {
		return ErrOutputTooLarge
	}
	return nil
}

// maxHeld is the size past which Hold writes what it holds.
const maxHeld = 64 << 10

// Hold is Write for a caller that has more events ready: the frame is held
// back, to be written with the stream's next Write or Flush (in order,
// with one Write call), or at once when the frames held reach 64 KiB. A
// terminal event (a replaced one included) is never held: Hold writes it
// as Write does. The caller must call Flush before it waits for events,
// so that none is kept from its reader; a write error may be returned by
// the Hold, Write or Flush that writes the frames.
//
// Writing events in batches while they arrive faster than they are
// written saves a system call (and a wake-up of the reader) per event; an
// event that arrives alone is written alone, as soon as Flush is called.
func (s *Stream) Hold(p Pending) error {
	if s.done {
		return ErrStreamClosed
	}
	if p.Terminal {
		return s.Write(p)
	}
	s.held = append(s.held, p.frame...)
	if len(s.held) >= maxHeld {
		return s.Flush()
	}
	return nil
}

// Flush writes the frames Hold held back, if any.
func (s *Stream) Flush() error {
	if len(s.held) == 0 {
		return nil
	}
	err := s.w.writeFrame(s.held)
	s.resetHeld()
	return err
}

// resetHeld empties the held frames, keeping their buffer for reuse
// unless it grew large.
func (s *Stream) resetHeld() {
	if cap(s.held) <= 256<<10 {
		s.held = s.held[:0]
	} else {
		s.held = nil
	}
}

// Emit writes a non-terminal event with seq.
func (s *Stream) Emit(seq int, typ protocol.EventType, data any) error {
	return s.emit(seq, typ, data, false)
}

// Finish writes the terminal event with seq.
func (s *Stream) Finish(seq int, typ protocol.EventType, data any) error {
	return s.emit(seq, typ, data, true)
}

// Fail writes a terminal protocol_error with seq.
func (s *Stream) Fail(seq int, code protocol.Code, msg string) error {
	return s.emit(seq, protocol.TypeProtocolError, protocol.ErrorData{Code: code, Message: bound(msg)}, true)
}

func (s *Stream) emit(seq int, typ protocol.EventType, data any, terminal bool) error {
	p, err := s.Encode(seq, typ, data, terminal)
	if err != nil {
		return err
	}
	return s.Write(p)
}
