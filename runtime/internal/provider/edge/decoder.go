package edge

import (
	"errors"
	"io"
	"strconv"

	"octet.dev/host/runtime/internal/sse"
	"octet.dev/host/runtime/provider"
)

// Queue holds the events a decoder has decoded and not yet delivered. A
// decoder embeds it, fills it one wire event at a time, and drains it:
//
//	for !d.Pop() {
//		if <ended or failed> { return false }
//		<decode one wire event into the queue>
//	}
//	return true
//
// Its storage is reused, so queuing allocates nothing in the steady state.
type Queue struct {
	events  []provider.StreamEvent // queued, delivered from next on
	next    int
	cur     provider.StreamEvent
	started bool

	// The output budget (see SetOutputLimit and AppendArgs).
	limit, used, dropped int
	over                 bool
}

// Push queues a content event and records that content started. Its text
// is charged to the output budget.
func (q *Queue) Push(ev provider.StreamEvent) {
	q.started = true
	q.events = append(q.events, ev)
	if ev.Text != "" {
		q.used += len(ev.Text)
		q.check()
	}
}

// Add queues an event without marking content: usage, the finish, or a
// tool call whose deltas already marked it.
func (q *Queue) Add(ev provider.StreamEvent) { q.events = append(q.events, ev) }

// MarkStarted records content that produced no event yet (a tool call
// being assembled).
func (q *Queue) MarkStarted() { q.started = true }

// Started reports whether any content was decoded.
func (q *Queue) Started() bool { return q.started }

// Pop makes the next queued event current. When none is left it reports
// false and empties the queue for refilling.
func (q *Queue) Pop() bool {
	if q.next >= len(q.events) {
		q.events, q.next = q.events[:0], 0
		return false
	}
	q.cur = q.events[q.next]
	q.next++
	return true
}

// Event returns the current event.
func (q *Queue) Event() provider.StreamEvent { return q.cur }

// Current returns the current event in place, valid until the next Pop:
// Event without copying the event (EventLender).
func (q *Queue) Current() *provider.StreamEvent { return &q.cur }

// EventLender is a Decoder (any that embeds Queue) or a provider.Stream
// (the edge's) that lends its current event in place, valid until its next
// Next: the per-delta path reads an event without copying all of it.
type EventLender interface {
	Current() *provider.StreamEvent
}

// Drained reports whether every queued event was delivered.
func (q *Queue) Drained() bool { return q.next >= len(q.events) }

// Decoder is a mode's stream decoder as the edge drives it: a
// provider.Stream without Close, plus the facts the edge reports.
type Decoder interface {
	// Next advances to the next event, reporting false at the normal end
	// (after EventFinish) or on failure.
	Next() bool
	// Event returns the current event.
	Event() provider.StreamEvent
	// Err returns the failure that stopped the decoder: a *provider.Error
	// the mode built (see Failure), or what ReadFailure returned. It is
	// nil while decoding and after the normal end.
	Err() error
	// Finished reports whether EventFinish was delivered.
	Finished() bool
	// Started reports whether any content was decoded.
	Started() bool
	// SetOutputLimit bounds the bytes of text, reasoning and tool-call
	// arguments the response may produce (Queue implements it); past
	// them the decoder fails with an output_too_large FailDecode.
	SetOutputLimit(n int)
}

// Failure returns the *provider.Error of a decoding failure. The stream
// completes it with the facts of the call (ContentStarted, sanitizing).
func Failure(kind provider.FailKind, code, msg string, err error) *provider.Error {
	return &provider.Error{Kind: kind, Code: code, Message: msg, Err: err, RequestWritten: true}
}

// readError is a failure of the underlying body; the stream classifies it
// (idle timeout, cancel, cut) with facts the decoder does not have.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// ReadFailure returns the decoder failure of an sse.Reader that stopped
// with err: FailDecode for an event larger than maxEventBytes, else a body
// read error for the stream to classify.
func ReadFailure(err error, maxEventBytes int) error {
	if pe := (*provider.Error)(nil); errors.As(err, &pe) {
		return pe // a long-event handler's own failure (Divert's sink)
	}
	if errors.Is(err, sse.ErrEventTooLarge) {
		return Failure(provider.FailDecode, "", "stream event larger than "+strconv.Itoa(maxEventBytes)+" bytes", err)
	}
	return &readError{err}
}

// NewSSE returns the event reader of a decoder over r and its event bound:
// maxEventBytes, or sse.DefaultMaxEventBytes when that is zero or less.
func NewSSE(r io.Reader, maxEventBytes int) (*sse.Reader, int) {
	if maxEventBytes <= 0 {
		maxEventBytes = sse.DefaultMaxEventBytes
	}
	return sse.NewReader(r, maxEventBytes), maxEventBytes
}

// MediaDecoder is implemented by decoders that decode output media into
// spool files (responses: generated images; chat: audio output).
type MediaDecoder interface {
	// SetSpoolDir sets the folder of the spool files (provider.Request.SpoolDir).
	SetSpoolDir(dir string)
	// Release removes every spool file the decoder still owns: media it
	// was decoding or had decoded and not delivered. The stream calls it
	// when Next reports false; delivered media belong to the consumer.
	Release()
}
