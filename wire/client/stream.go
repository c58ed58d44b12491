package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
)

// Event is one validated event of a run: its envelope has been checked
// (protocol_version, request_id, seq, run_id, session_id) and Data is the
// raw JSON of its data member, which may hold fields this package does not
// know.
type Event struct {
	Type      protocol.EventType
	Seq       int64
	RequestID string
	RunID     string
	SessionID string // "" when the event carried none
	Data      jsontext.Value
}

// ErrUnknownEventType is returned (wrapped) by Event.Decode for an event
// type the protocol package's registry does not know: a newer host's
// addition. Such an event is still delivered; only its typed decoding is
// unavailable (DecodeInto works).
var ErrUnknownEventType = errors.New("client: event type unknown to this client's protocol package")

// Decode returns the event's data as its typed payload from package
// protocol: a pointer to the type protocol.PayloadFor(e.Type) returns, so
// that a type switch over the protocol's payloads works:
//
//	data, err := ev.Decode()
//	switch d := data.(type) {
//	case *protocol.ModelDelta:
//		fmt.Print(d.Text)
//	case *protocol.ToolFinish:
//		…
//	}
//
// Members the payload type does not define are ignored (the host adds
// fields only additively); names match case-sensitively. It returns an
// error wrapping ErrUnknownEventType for a type the registry does not
// know, and an error naming the type for data that does not decode into
// its payload.
func (e Event) Decode() (any, error) {
	v := protocol.PayloadFor(e.Type)
	if v == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEventType, e.Type)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return nil, fmt.Errorf("client: %s event data does not decode into %T: %w", e.Type, v, err)
	}
	return v, nil
}

// DecodeInto unmarshals the event's data into v, for a type of the
// caller's own. Unknown members are ignored; names match case-sensitively.
func (e Event) DecodeInto(v any) error { return json.Unmarshal(e.Data, v) }

// Terminal reports whether the event ends its run (final_result).
func (e Event) Terminal() bool { return e.Type == protocol.TypeFinalResult }

// Delta returns the channel (protocol.ChannelText or ChannelReasoning)
// and text of a model_delta event; ok is false for any other event or
// malformed data.
func (e Event) Delta() (channel, text string, ok bool) {
	if e.Type != protocol.TypeModelDelta {
		return "", "", false
	}
	var d protocol.ModelDelta
	if e.DecodeInto(&d) != nil {
		return "", "", false
	}
	return d.Channel, d.Text, true
}

// RunStream is the event stream of one run. It is read by one goroutine.
type RunStream struct {
	c     *Client
	cl    *call
	stop  func() bool // disarms the run's context
	ended bool
	err   error // io.EOF after the final_result, else why the run failed
}

// RequestID returns the request_id the client generated for the run.
func (s *RunStream) RequestID() string { return s.cl.id }

// Next returns the run's next event. The final_result event is returned
// like any other (Event.Terminal reports it); after it Next returns io.EOF.
// A run ended by a protocol_error returns a *ProtocolError, a host that
// broke the protocol an error wrapping ErrProtocolViolation, and a host
// that exited a *HostExitedError; Next then keeps returning that error.
//
// If ctx is canceled while the run is in flight, the host's process group
// is killed (protocol 1 has no in-band abort) and Next returns ctx.Err().
func (s *RunStream) Next(ctx context.Context) (Event, error) {
	if s.ended {
		return Event{}, s.err
	}
	// Events already queued come first, even if ctx is done.
	select {
	case ev := <-s.cl.events:
		return ev, nil
	default:
	}
	select {
	case ev := <-s.cl.events:
		return ev, nil
	case <-s.cl.done:
		// Every event was queued before done was closed.
		select {
		case ev := <-s.cl.events:
			return ev, nil
		default:
		}
		s.ended = true
		s.stop()
		if s.cl.err != nil {
			s.err = s.cl.err
			return Event{}, s.err
		}
		s.err = io.EOF
		return s.cl.terminal, nil
	case <-ctx.Done():
		s.c.cancel(s.cl, ctx.Err())
		return Event{}, ctx.Err()
	}
}

// Final returns the run's final_result once Next has returned it; before
// that it returns ErrNotDone. A final_result with status "error" or
// "blocked" is a result, not an error: inspect Status and Error.
func (s *RunStream) Final() (*protocol.FinalResult, error) {
	if !s.ended {
		return nil, ErrNotDone
	}
	if s.cl.err != nil {
		return nil, s.cl.err
	}
	return s.cl.value.(*protocol.FinalResult), nil
}

// Wait reads the rest of the run and returns its events (the final_result
// event included) and its final_result. On failure it returns the events
// read so far with the error of Next.
func (s *RunStream) Wait(ctx context.Context) ([]Event, *protocol.FinalResult, error) {
	var events []Event
	for {
		ev, err := s.Next(ctx)
		if err == io.EOF {
			fr, err := s.Final()
			return events, fr, err
		}
		if err != nil {
			return events, nil, err
		}
		events = append(events, ev)
	}
}
