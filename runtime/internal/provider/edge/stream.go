package edge

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"octet.dev/host/runtime/provider"
)

// stream is the provider.Stream of one call: the mode's decoder over the
// idle-timed body, with the failure facts only the call knows.
type stream struct {
	dec    Decoder
	lend   EventLender          // dec, when it lends its event; nil otherwise
	ev     provider.StreamEvent // a copy of dec's event when it does not
	body   *idleBody
	ctx    context.Context
	mode   string
	idle   time.Duration
	scrub  Scrubber
	err    error
	closed atomic.Bool // set by Close, which may race with a blocked Next
}

var _ provider.Stream = (*stream)(nil)

// Next advances to the next event. When it reports false, spool files the
// decoder still owns are removed (MediaDecoder).
func (s *stream) Next() bool {
	if s.next() {
		return true
	}
	if md, ok := s.dec.(MediaDecoder); ok {
		md.Release()
	}
	return false
}

func (s *stream) next() bool {
	if s.err != nil {
		return false
	}
	if s.closed.Load() {
		if !s.dec.Finished() {
			// Closed by the consumer before the end: not a normal end.
			s.err = &provider.Error{
				Kind: provider.FailCanceled, Message: "stream closed",
				RequestWritten: true, ContentStarted: s.dec.Started(),
			}
		}
		return false
	}
	for s.dec.Next() {
		if ev := s.Current(); ev.Kind == provider.EventUsage && !ev.Usage.Plausible() {
			// Absurd counts (negative, beyond 10^12) are no report: the
			// runtime marks the step uncertain as for a call without usage.
			continue
		}
		return true
	}
	if err := s.dec.Err(); err != nil {
		s.err = s.classify(err)
	}
	// Normal end or failure: release the connection now rather than at
	// Close.
	_ = s.Close()
	return false
}

// Event returns the current event.
func (s *stream) Event() provider.StreamEvent { return s.dec.Event() }

// Current returns the current event in place, valid until the next Next
// (EventLender): the decoder's own when it lends it, which spares the
// engine's per-delta path a copy of the whole event.
func (s *stream) Current() *provider.StreamEvent {
	if s.lend != nil {
		return s.lend.Current()
	}
	s.ev = s.dec.Event()
	return &s.ev
}

// Err returns the failure that ended the stream, nil after a normal end.
func (s *stream) Err() error { return s.err }

// Close releases the response body; it is safe to call more than once,
// and from another goroutine to abort a blocked Next.
func (s *stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.body.Close()
}

// classify completes a decoder failure with the facts of this call.
func (s *stream) classify(err error) error {
	e := &provider.Error{RequestWritten: true, ContentStarted: s.dec.Started()}
	switch {
	case s.body.timedOut():
		e.Kind = provider.FailIdleTimeout
		e.Message = "no stream data for " + s.idle.String()
		e.Err = fmt.Errorf("%s: %w", s.mode, ErrIdleTimeout)
		return e
	case s.ctx.Err() != nil:
		e.Kind, e.Message, e.Err = provider.FailCanceled, "canceled", s.ctx.Err()
		return e
	case s.closed.Load():
		e.Kind, e.Message, e.Err = provider.FailCanceled, "stream closed", err
		return e
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		e.Kind, e.Code, e.Err = pe.Kind, s.scrub.Sanitize(pe.Code), pe.Err
		e.Message = s.scrub.Sanitize(pe.Message)
		if e.Message == "" {
			e.Message = string(pe.Kind)
		}
		return e
	}
	// The body broke (reset, unexpected EOF): the stream was cut.
	e.Kind, e.Err = provider.FailStreamCut, err
	e.Message = s.scrub.Sanitize("stream read failed: " + err.Error())
	return e
}
