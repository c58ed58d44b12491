package client

import (
	"context"
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
	Type      string
	Seq       int64
	RequestID string
	RunID     string
	SessionID string // "" when the event carried none
	Data      jsontext.Value
}

// Decode unmarshals the event's data into v. Unknown members are ignored
// (the host adds fields only additively); names match case-sensitively.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// Terminal reports whether the event ends its run (final_result).
func (e Event) Terminal() bool { return e.Type == protocol.TypeFinalResult }

// Delta returns the channel ("text" or "reasoning") and text of a
// model_delta event; ok is false for any other event or malformed data.
func (e Event) Delta() (channel, text string, ok bool) {
	if e.Type != "model_delta" {
		return "", "", false
	}
	var d struct {
		Channel string `json:"channel"`
		Text    string `json:"text"`
	}
	if e.Decode(&d) != nil {
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
