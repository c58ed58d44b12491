package runtime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"octet.dev/host/runtime/internal/store"
)

// SessionStatistics sums a session's durable usage ledger: one usage
// record per committed model call (the model steps' and the auxiliary
// calls', such as a model terminal gate's), across every run of the
// session.
// Failed attempts record no usage; when one may have been billed, the
// session records that instead and UsageUncertain is true (the figures
// are then known subtotals).
type SessionStatistics struct {
	// ModelCalls is the number of usage records.
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
	Cost           float64
	UsageUncertain bool
}

// Statistics returns the sums of the session's usage records.
func (s *Session) Statistics() SessionStatistics {
	var st SessionStatistics
	for _, r := range s.s.Records() {
		u, ok := r.Body.(store.Usage)
		if !ok {
			continue
		}
		st.ModelCalls++
		st.InputTokens += u.Usage.InputTokens
		st.OutputTokens += u.Usage.OutputTokens
		st.CacheReadTokens += u.Usage.CacheReadTokens
		st.CacheWriteTokens += u.Usage.CacheWriteTokens
		st.ReasoningTokens += u.Usage.ReasoningTokens
		total := u.Usage.TotalTokens
		if total == 0 {
			total = u.Usage.InputTokens + u.Usage.OutputTokens
		}
		st.TotalTokens += total
		st.Cost += u.CostUSD
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
