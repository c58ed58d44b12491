package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

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
	var st SessionStatistics
	op := func(name string) OperationUsage {
		if st.ByOperation == nil {
			st.ByOperation = map[string]OperationUsage{}
		}
		return st.ByOperation[name]
	}
	for _, u := range s.s.UsageRecords() { // held in memory: no record is read
		total := u.Usage.Provider().Total()
		add := provider.AddTokens // saturating: a ledger never wraps
		st.ModelCalls++
		st.InputTokens = add(st.InputTokens, u.Usage.InputTokens)
		st.OutputTokens = add(st.OutputTokens, u.Usage.OutputTokens)
		st.CacheReadTokens = add(st.CacheReadTokens, u.Usage.CacheReadTokens)
		st.CacheWriteTokens = add(st.CacheWriteTokens, u.Usage.CacheWriteTokens)
		st.ReasoningTokens = add(st.ReasoningTokens, u.Usage.ReasoningTokens)
		st.TotalTokens = add(st.TotalTokens, total)
		st.Cost += u.CostUSD
		name := u.Operation
		if name == "" {
			name = operationAssistantTurn
		}
		o := op(name)
		o.Calls++
		o.InputTokens = add(o.InputTokens, u.Usage.InputTokens)
		o.OutputTokens = add(o.OutputTokens, u.Usage.OutputTokens)
		o.CacheReadTokens = add(o.CacheReadTokens, u.Usage.CacheReadTokens)
		o.CacheWriteTokens = add(o.CacheWriteTokens, u.Usage.CacheWriteTokens)
		o.ReasoningTokens = add(o.ReasoningTokens, u.Usage.ReasoningTokens)
		o.TotalTokens = add(o.TotalTokens, total)
		o.Cost += u.CostUSD
		st.ByOperation[name] = o
	}
	for _, r := range s.s.UsageUncertaintyRecords() {
		name := r.Operation
		if name == "" {
			name = operationAssistantTurn
		}
		o := op(name)
		o.UsageUncertain = true
		st.ByOperation[name] = o
	}
	st.UsageUncertain = s.s.HasUncertainUsage()
	return st
}

// NewSessionID returns a fresh session ID of the form a run without a
// session ID gets, so that a caller can name a new session before its
// first run.
func NewSessionID() string { return store.NewID() }

// SessionExists reports whether the session id has a file in dir ("" means
// the agent's session store), without creating or locking anything. An
// invalid id is an error.
func (a *Agent) SessionExists(dir, id string) (bool, error) {
	if dir == "" {
		dir = a.sessionsDir()
	} else if !filepath.IsAbs(dir) {
		return false, errors.New("runtime: session dir must be absolute")
	}
	name, err := store.FileName(id)
	if err != nil {
		return false, err
	}
	switch _, err := os.Stat(filepath.Join(dir, name)); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}
