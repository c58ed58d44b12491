package steer

import (
	"context"
	"errors"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// fakeEnv is a run as steering sees it: what it appends, emits, marks and
// hands back to the queue.
type fakeEnv struct {
	recs      []store.Record
	events    []protocol.EventType // the types emitted, in order
	data      []any
	uncertain int
	requeued  []string
	fail      error // the next Append's error
}

func (e *fakeEnv) Append(recs ...store.Record) error {
	if err := e.fail; err != nil {
		e.fail = nil
		return err
	}
	e.recs = append(e.recs, recs...)
	return nil
}
func (e *fakeEnv) Emit(typ protocol.EventType, data protocol.Payload) {
	e.events = append(e.events, typ)
	e.data = append(e.data, data)
}
func (e *fakeEnv) RunID() string       { return "run-1" }
func (e *fakeEnv) MarkUncertain()      { e.uncertain++ }
func (e *fakeEnv) Requeue(text string) { e.requeued = append(e.requeued, text) }

// natives returns the native_steering records as "event/outcome".
func (e *fakeEnv) natives() []string {
	var out []string
	for _, rec := range e.recs {
		if b, ok := rec.Body.(store.NativeSteering); ok {
			out = append(out, strings.TrimSuffix(b.Event+"/"+b.Outcome, "/"))
		}
	}
	return out
}

// messages returns the texts of the message records, with their origin.
func (e *fakeEnv) messages() []string {
	var out []string
	for _, rec := range e.recs {
		if b, ok := rec.Body.(store.Message); ok {
			out = append(out, b.Origin+":"+b.Message.Role+":"+b.Message.Text)
		}
	}
	return out
}

// fakeStream is a steerable stream: its events, then its error; Steer
// records what it sends after record succeeded and returns steerErr
// (provider.ErrNotSteerable: before record, as the wire does).
type fakeStream struct {
	evs      []provider.StreamEvent
	i        int
	err      error
	closed   bool
	steered  []string
	steerErr error
}

func (s *fakeStream) Next() bool {
	if s.i < len(s.evs) {
		s.i++
		return true
	}
	return false
}
func (s *fakeStream) Event() provider.StreamEvent { return s.evs[s.i-1] }
func (s *fakeStream) Err() error                  { return s.err }
func (s *fakeStream) Close() error                { s.closed = true; return nil }
func (s *fakeStream) Steer(respID, input string, record func() error) error {
	if errors.Is(s.steerErr, provider.ErrNotSteerable) {
		return s.steerErr // the response ended: nothing recorded, nothing sent
	}
	if err := record(); err != nil {
		return err
	}
	s.steered = append(s.steered, respID+"|"+input)
	return s.steerErr
}
func (s *fakeStream) Follow(context.Context) provider.Steerer { return nil }

var errReset = errors.New("connection reset")
