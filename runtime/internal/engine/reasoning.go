package engine

import (
	"context"
	"errors"

	"octet.dev/host/runtime/internal/engine/reasoning"
)

// ReasoningConfig selects the reasoning effort: "" (the route's default),
// "low", "medium" or "high" (reasoning.Config).
//
// Ultra selects the Ultra mode: the effort (Effort, "high" when "") becomes
// a new request baseline instead of a reasoning update, superseding the
// updates before it, and selecting it installs the agent's delegation
// manager, which gives the model the delegate tool (delegation.go) and
// stays installed when a later selection leaves Ultra.
// It needs an observer (Agent.SetObserver); during a run it needs a route
// that declares it ("reasoning_ultra": true in ~/.octet/models.json).
type ReasoningConfig = reasoning.Config

// Reasoning errors.
var (
	ErrReasoningInvalid     = reasoning.ErrInvalid
	ErrReasoningUnsupported = reasoning.ErrUnsupported
	// ErrReasoningNotQualified: the run's route is not qualified for a
	// reasoning change during a run. A route is when both its model and
	// its endpoint declare reasoning updates ("reasoning_updates": true on
	// the model and on its provider in ~/.octet/models.json; the built-in
	// endpoints declare them, no built-in model does, and inline routes
	// never are). The error's message names the model or the endpoint (or
	// both) that does not. Nothing changed: the effort stays as the run
	// began, and Agent.SetReasoning (between runs) still applies.
	ErrReasoningNotQualified = reasoning.ErrNotQualified
	// ErrUltraUnsupported: the run's route does not declare the Ultra mode
	// ("reasoning_ultra": true in ~/.octet/models.json).
	ErrUltraUnsupported = reasoning.ErrUltraUnsupported
	// ErrObserverRequired: the Ultra mode needs an observation hook
	// (Agent.SetObserver) to report the events of the run and its workers.
	ErrObserverRequired = reasoning.ErrObserverRequired
	ErrRunEnded         = errors.New("runtime: the run has ended")
)

// SetReasoning sets the effort used by runs that name none and whose
// session has no restored selection, and what Reasoning reports from now
// on: after a resume has restored a session's selection (its baseline and
// reasoning updates) into Reasoning, SetReasoning overrides it there. A
// resumed session's own runs keep continuing from their recorded
// selection unless the run request names an effort. Selecting Ultra needs
// an observer (ErrObserverRequired); the next run applies it where its
// route declares the mode, and elsewhere uses the effort alone.
func (a *Agent) SetReasoning(cfg ReasoningConfig) error {
	if !cfg.Valid() {
		return ErrReasoningInvalid
	}
	if cfg.Ultra && !a.observed() {
		return ErrObserverRequired
	}
	if cfg.Ultra {
		a.installDelegation()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reasoning = cfg.Normalized()
	return nil
}

// Reasoning returns the effective selection: the last one set with
// SetReasoning, or chosen, restored or changed by a run since. After a
// reasoning update its Effort is the update's (the effort in effect), not
// the request's pinned baseline; Ultra is true while the latest baseline
// is the Ultra mode's and no update followed it.
func (a *Agent) Reasoning() ReasoningConfig {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reasoning
}

func (a *Agent) noteReasoning(c ReasoningConfig) {
	a.mu.Lock()
	a.reasoning = c
	a.mu.Unlock()
}

// SetReasoning asks the running run to use cfg from its next model call on.
// It is admitted only on a route qualified by both its model's and its
// endpoint's metadata ("reasoning_updates": true on the model and on its
// provider in ~/.octet/models.json, never guessed from a name; no built-in
// model and no inline route is): elsewhere it returns
// ErrReasoningNotQualified, naming what does not declare them, and changes
// nothing (ErrReasoningUnsupported on a route without reasoning).
//
// On a qualified route, a change between two efforts (neither the route's
// default "") is a reasoning update: the requests keep their reasoning
// baseline, so their cached prefix stays byte-identical, and the
// conversation gets a host message saying the new effort (a developer
// message on Responses, a system message on Chat, a user-turn text block
// on Anthropic Messages), recorded in the session in order. A change to or
// from "" turns reasoning on or off, which no message can do: it changes
// the baseline. Ultra (ErrUltraUnsupported unless the route declares
// "reasoning_ultra", ErrObserverRequired without an observer) changes the
// baseline too, superseding earlier updates; the conversation, reasoning
// blocks included, and the session stay.
//
// A change is admitted at the next safe step boundary (never mid-response),
// is persisted in the session there, and is not a provider acknowledgement.
// On an anthropic-messages route a baseline change that turns thinking on
// or off waits for a boundary where a new assistant turn begins, since the
// API rejects a thinking mode changed inside one, tool-use loops included.
// Pending choices coalesce: the last one before the boundary wins. A change
// still pending when the run ends is recorded in the session, and the
// session's next run starts with it. It fails once the run has ended or is
// ending.
func (rc *RunControl) SetReasoning(ctx context.Context, cfg ReasoningConfig) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rc.reasoningDeclared.Admit(cfg, rc.agent.observed); err != nil {
		return err
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
	if cfg.Ultra {
		rc.agent.installDelegation()
	}
	c := cfg.Normalized()
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
