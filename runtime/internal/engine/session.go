package engine

import (
	"errors"
	"path/filepath"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
)

// Session is a persisted conversation opened outside a run, for
// inspection and for the Go API's durable controls (CONTRACT §13, §15).
// It holds the session's cross-process lock until Close: a run on the same
// session meanwhile is refused with session_locked.
//
// A Session is used by one goroutine at a time.
type Session struct {
	s *store.Session
}

// UsageUncertainty is one durable record of a failed attempt that may have
// been billed while its usage is unknown.
type UsageUncertainty struct {
	Endpoint, Model, Operation string
}

// Session errors.
var (
	ErrSessionLocked  = store.ErrLocked
	ErrSessionCorrupt = store.ErrCorrupt
)

// OpenSession opens (creating if needed) the session id in dir; dir ""
// means ~/.octet/sessions.
func (a *Agent) OpenSession(dir, id string) (*Session, error) {
	if dir == "" {
		dir = a.sessionsDir()
	} else if !filepath.IsAbs(dir) {
		return nil, errors.New("runtime: session dir must be absolute")
	}
	s, err := store.Open(dir, id, store.Options{Now: a.opts.Now})
	if err != nil {
		return nil, err
	}
	return &Session{s: s}, nil
}

// ID returns the session ID.
func (s *Session) ID() string { return s.s.ID() }

// Path returns the session file's path.
func (s *Session) Path() string { return s.s.Path() }

// Messages returns the conversation a resumed run would send; nil once
// the session has failed (Err).
func (s *Session) Messages() []Message { return s.s.Messages() }

// Err reports a session that failed: a write or sync error, or a record
// that could no longer be read back from its file (the file changed behind
// the session's lock, or an I/O error). Messages and Entries then return
// nothing, and Err says why. Nil for a sound session.
func (s *Session) Err() error { return s.s.Err() }

// TornTail reports whether a torn last line was found (and will be cut
// away by the next append).
func (s *Session) TornTail() bool { return s.s.TornTail() }

// HasUncertainUsage reports whether any failed attempt of this session may
// have been billed without known usage, or a native steering intent's
// outcome is unknown (HasUnsettledNativeSteering); it never clears.
func (s *Session) HasUncertainUsage() bool { return s.s.HasUncertainUsage() }

// HasUnsettledNativeSteering reports whether the session holds a native
// steering intent (input sent into a provider's live response with
// response.steer, see RunControl.Steer) that was never settled: the
// connection dropped, the process died, or no acknowledgement came after
// the steer was sent. The provider may or may not have committed the
// input, so it is never replayed: every later run on the session ends
// blocked with unsettled_native_steering before any provider I/O, and the
// session's usage is uncertain. Start a new session (Session.Fork copies
// the conversation without the intent) to go on.
func (s *Session) HasUnsettledNativeSteering() bool { return s.s.HasUnsettledNativeSteering() }

// UsageUncertaintyRecords returns the durable uncertainty records.
func (s *Session) UsageUncertaintyRecords() []UsageUncertainty {
	var out []UsageUncertainty
	for _, r := range s.s.UsageUncertaintyRecords() {
		out = append(out, UsageUncertainty{Endpoint: r.Endpoint, Model: r.Model, Operation: r.Operation})
	}
	return out
}

// RecordUsageUncertainty durably appends a usage_uncertainty record; it
// returns only after the record is fsynced. It records no tokens or cost.
func (s *Session) RecordUsageUncertainty(endpoint, model, operation string) error {
	return s.s.RecordUsageUncertainty(endpoint, model, operation)
}

// RunEnd is how a run of the session ended: its final status and, unless
// it completed, its error code. A run whose events its consumer abandoned
// (an event over the 1 MiB frame bound, output_too_large; a failed output,
// protocol.CodeOutputFailed) ended with status error and that code, whatever it
// would have reported.
type RunEnd struct {
	RunID, Status string
	Code          protocol.Code
}

// RunEnds returns how each ended run of the session ended, in order.
func (s *Session) RunEnds() []RunEnd {
	var out []RunEnd
	for _, e := range s.s.RunEnds() {
		out = append(out, RunEnd{RunID: e.RunID, Status: e.Status, Code: e.Code})
	}
	return out
}

// Close releases the session's lock.
func (s *Session) Close() error { return s.s.Close() }
