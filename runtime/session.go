package runtime

import (
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine"
)

// Session is a persisted conversation opened outside a run, for
// inspection and for the Go API's durable controls (CONTRACT §13, §15).
// It holds the session's cross-process lock until Close: a run on the same
// session meanwhile is refused with session_locked.
//
// A Session is used by one goroutine at a time.
type Session struct {
	s *engine.Session
}

// UsageUncertainty is one durable record of a failed attempt that may have
// been billed while its usage is unknown.
type UsageUncertainty struct {
	Endpoint, Model, Operation string
}

// Session errors.
var (
	ErrSessionLocked  = engine.ErrSessionLocked
	ErrSessionCorrupt = engine.ErrSessionCorrupt
	// ErrNoSessionEntry: a checkout target that is neither 0 nor the ID of
	// one of the session's entries.
	ErrNoSessionEntry = engine.ErrNoSessionEntry
	// ErrSessionExists: a fork onto a session ID that already has a file.
	ErrSessionExists = engine.ErrSessionExists
)

// OpenSession opens (creating if needed) the session id in dir; dir ""
// means ~/.octet/sessions.
func (a *Agent) OpenSession(dir, id string) (*Session, error) {
	s, err := a.e.OpenSession(dir, id)
	if err != nil {
		return nil, err
	}
	return &Session{s: s}, nil
}

// NewSessionID returns a fresh session ID of the form a run without a
// session ID gets, so that a caller can name a new session before its
// first run.
func NewSessionID() string { return engine.NewSessionID() }

// SessionExists reports whether the session id has a file in dir ("" means
// the agent's session store), without creating or locking anything. An
// invalid id is an error.
func (a *Agent) SessionExists(dir, id string) (bool, error) { return a.e.SessionExists(dir, id) }

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
		out = append(out, UsageUncertainty(r))
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
		out = append(out, RunEnd(e))
	}
	return out
}

// Close releases the session's lock.
func (s *Session) Close() error { return s.s.Close() }

// Entry kinds.
const (
	EntryMessage    = "message"    // a conversation message
	EntryCompaction = "compaction" // a compaction checkpoint (its summary)
)

// SessionEntry is one entry of a session: a message or a compaction
// checkpoint, what Checkout may target.
type SessionEntry struct {
	// ID is the entry's record sequence number in the session file
	// (1-based, the header not counted). The file only grows, so an ID
	// stays valid for good, across resumes and checkouts; a fork numbers
	// its own records from 1.
	ID int
	// Kind is EntryMessage or EntryCompaction.
	Kind string
	// Role is the message's role (user, assistant, tool); "" for a
	// compaction.
	Role string
	// RunID is the run that recorded the message; "" for seeded history.
	RunID string
	// Origin is "steering" or "follow_up" for a queued user message.
	Origin string
	// Text is the start of the message's text (or the checkpoint's
	// summary) on one line, at most 80 characters with "…" when cut.
	Text string
	// ToolCalls names the tool calls of an assistant message, in order;
	// for a tool result, ToolCalls holds the one tool it answers.
	ToolCalls []string
	// Time is when the record was appended.
	Time time.Time
	// OnHead reports whether the entry is on the path from the session's
	// start to its head, that is, part of the history the next run
	// continues (possibly summarized by a checkpoint on that path).
	// Entries of a branch a checkout left behind are not, and stay valid
	// checkout targets.
	OnHead bool
}

// Entries lists the session's entries in file order, abandoned branches
// included, for an application to pick a checkout target.
func (s *Session) Entries() []SessionEntry {
	es := s.s.Entries()
	out := make([]SessionEntry, len(es))
	for i, e := range es {
		out[i] = SessionEntry(e)
	}
	return out
}

// Head returns the session's head entry: the entry the next run's history
// ends at before its prompt. It is the last record's sequence number, or
// the checked-out entry until something is appended; 0 is the start.
func (s *Session) Head() int { return s.s.Head() }

// Checkout durably moves the session's head back to entryID, an entry of
// Entries (any branch) or 0 for the session's start: a checkout record is
// appended and synced before it returns. The next run's history is the
// conversation that ended at that entry (Messages), followed by its
// prompt; the records of the branch left behind stay in the file. The
// usage ledger (Statistics) and the sticky usage uncertainty are
// untouched: a checkout changes the history, not what was spent, and the
// flag survives it as it survives resume and compaction. Checking out the
// current head records nothing. An unknown entry is ErrNoSessionEntry.
func (s *Session) Checkout(entryID int) error {
	return s.s.Checkout(entryID)
}

// Fork starts the session newID in this session's directory from its
// current head, and returns it open, holding its own lock (this session
// stays open and unchanged). The fork's history is this session's
// conversation up to the head (after a compaction: the checkpoint's
// summary and the messages it kept), its reasoning selection is this
// session's, and its media are copied beside it; its first record names
// this session and the head entry (ForkedFrom). Its accounting is
// independent: its ledger starts at zero, and it starts with certain usage,
// since none of this session's uncertain calls is counted in it (the
// parent keeps its own flag). An ID that has a session file is
// ErrSessionExists; this session's ID is refused the same way.
func (s *Session) Fork(newID string) (*Session, error) {
	f, err := s.s.Fork(newID)
	if err != nil {
		return nil, err
	}
	return &Session{s: f}, nil
}

// ForkedFrom returns the parent session's ID and the parent's head entry a
// forked session started from; ok is false for a session that is no fork.
func (s *Session) ForkedFrom() (parentID string, parentEntry int, ok bool) { return s.s.ForkedFrom() }

// SessionStatistics sums a session's durable usage ledger: one usage
// record per committed provider call, across every run of the session,
// whether the call was a model step's assistant turn or an auxiliary
// operation's (a compaction's summarizer, the terminal gate). The ledger
// counts every call the session paid for: compaction never drops a usage
// record, and a checkout leaves the records of the branch it abandons.
// Failed attempts record no usage; when one may have been billed, the
// session records that instead and UsageUncertain is true (the figures
// are then known subtotals).
type SessionStatistics struct {
	// ModelCalls is the number of usage records: provider calls of every
	// operation.
	ModelCalls       int
	InputTokens      int64 // includes cached tokens, as the providers count them
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	// TotalTokens sums each call's total, which is input + output when the
	// provider reported none (as model_step does).
	TotalTokens int64
	// Cost is the summed priced cost, in the currency of the models' price
	// lists; calls of an unpriced model add 0.
	Cost float64
	// UsageUncertain is the session's sticky flag: some failed attempt may
	// have been billed without known usage. It survives resume,
	// compaction and checkout; a fork starts without it.
	UsageUncertain bool
	// ByOperation subtotals the ledger per operation: "assistant_turn" for
	// model steps, else the operation the usage record names
	// ("local_compaction", "native_compaction", "terminal_gate"). The
	// subtotals add up to the totals above. An operation named only by a
	// usage_uncertainty record is present with zero figures and its
	// UsageUncertain set. Nil when the ledger is empty and certain.
	ByOperation map[string]OperationUsage
}

// OperationUsage is the part of a session's ledger spent on one
// operation.
type OperationUsage struct {
	Calls            int
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	TotalTokens      int64
	Cost             float64
	// UsageUncertain: a usage_uncertainty record names this operation.
	UsageUncertain bool
}

// Statistics returns the sums of the session's usage records, in total and
// per operation.
func (s *Session) Statistics() SessionStatistics {
	st := s.s.Statistics()
	out := SessionStatistics{ModelCalls: st.ModelCalls, InputTokens: st.InputTokens, OutputTokens: st.OutputTokens,
		CacheReadTokens: st.CacheReadTokens, CacheWriteTokens: st.CacheWriteTokens, ReasoningTokens: st.ReasoningTokens,
		TotalTokens: st.TotalTokens, Cost: st.Cost, UsageUncertain: st.UsageUncertain}
	if st.ByOperation != nil {
		out.ByOperation = make(map[string]OperationUsage, len(st.ByOperation))
		for name, o := range st.ByOperation {
			out.ByOperation[name] = OperationUsage(o)
		}
	}
	return out
}
