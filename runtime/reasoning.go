package runtime

import (
	"context"
	"errors"
	"fmt"
)

// ReasoningConfig selects the reasoning effort: "" (the route's default),
// "low", "medium" or "high".
type ReasoningConfig struct {
	Effort string
}

func (c ReasoningConfig) valid() bool {
	switch c.Effort {
	case "", "low", "medium", "high":
		return true
	}
	return false
}

// Reasoning errors.
var (
	ErrReasoningInvalid     = errors.New("runtime: reasoning effort must be \"\", \"low\", \"medium\" or \"high\"")
	ErrReasoningUnsupported = errors.New("runtime: the run's route does not support reasoning")
	ErrRunEnded             = errors.New("runtime: the run has ended")
)

// SetReasoning sets the effort used by runs that name none and whose
// session has no restored selection; it is the explicit override after
// reconstruction.
func (a *Agent) SetReasoning(cfg ReasoningConfig) error {
	if !cfg.valid() {
		return ErrReasoningInvalid
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reasoning = cfg
	return nil
}

// Reasoning returns the effective selection: the last one set with
// SetReasoning, or chosen, restored or changed by a run since.
func (a *Agent) Reasoning() ReasoningConfig {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reasoning
}

func (a *Agent) noteReasoning(effort string) {
	a.mu.Lock()
	a.reasoning = ReasoningConfig{Effort: effort}
	a.mu.Unlock()
}

// SetReasoning asks the running run to use cfg from its next model call on.
// It is admitted at the next safe step boundary (never mid-response), is
// persisted in the session there, and is not a provider acknowledgement.
// On an anthropic-messages route a change that turns thinking on or off
// (an effort of "" sends no thinking, any other effort sends it) waits for
// a boundary where a new assistant turn begins, since the API rejects a
// thinking mode changed inside one, tool-use loops included; a change of
// effort with thinking on applies at once. Pending choices coalesce: the
// last one before the boundary wins. A change still pending when the run
// ends is recorded in the session, and the session's next run starts with
// it. It fails on a route without reasoning support and once the run has
// ended or is ending.
func (rc *RunControl) SetReasoning(ctx context.Context, cfg ReasoningConfig) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !cfg.valid() {
		return ErrReasoningInvalid
	}
	if !rc.supportsReasoning {
		return fmt.Errorf("%w (%s)", ErrReasoningUnsupported, rc.modelID)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.reasoningClosed {
		return ErrRunEnded
	}
	select {
	case <-rc.done:
		return ErrRunEnded
	default:
	}
	c := cfg
	rc.pendingReasoning = &c
	return nil
}

// takeReasoning returns and clears the pending selection when admit
// accepts it. A selection admit refuses stays pending, and held says so.
func (rc *RunControl) takeReasoning(admit func(ReasoningConfig) bool) (c *ReasoningConfig, held bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	p := rc.pendingReasoning
	if p == nil {
		return nil, false
	}
	if !admit(*p) {
		return nil, true
	}
	rc.pendingReasoning = nil
	return p, false
}

// closeReasoning returns and clears the pending selection as the run ends,
// and refuses later changes: from here on no boundary would admit them, and
// a nil SetReasoning must mean the change is applied or recorded.
func (rc *RunControl) closeReasoning() *ReasoningConfig {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	p := rc.pendingReasoning
	rc.pendingReasoning, rc.reasoningClosed = nil, true
	return p
}
