package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// ReasoningConfig selects the reasoning effort: "" (the route's default),
// "low", "medium" or "high".
//
// Ultra selects the Ultra mode: the effort (Effort, "high" when "") becomes
// a new request baseline instead of a reasoning update, superseding the
// updates before it, and selecting it installs the agent's delegation
// manager, which gives the model the delegate tool (delegation.go) and
// stays installed when a later selection leaves Ultra.
// It needs an observer (Agent.SetObserver); during a run it needs a route
// that declares it ("reasoning_ultra": true in ~/.octet/models.json).
type ReasoningConfig struct {
	Effort string
	Ultra  bool
}

func (c ReasoningConfig) valid() bool {
	switch c.Effort {
	case "", "low", "medium", "high":
		return true
	}
	return false
}

// normalized returns c with Ultra's default effort filled in.
func (c ReasoningConfig) normalized() ReasoningConfig {
	if c.Ultra && c.Effort == "" {
		c.Effort = "high"
	}
	return c
}

// Reasoning errors.
var (
	ErrReasoningInvalid     = errors.New("runtime: reasoning effort must be \"\", \"low\", \"medium\" or \"high\"")
	ErrReasoningUnsupported = errors.New("runtime: the run's route does not support reasoning")
	// ErrReasoningNotQualified: the run's route is not qualified for a
	// reasoning change during a run. Only a configured model that declares
	// "reasoning_updates": true in ~/.octet/models.json is; built-in and
	// inline routes never are. Nothing changed: the effort stays as the run
	// began, and Agent.SetReasoning (between runs) still applies.
	ErrReasoningNotQualified = errors.New("runtime: the run's route is not qualified for reasoning changes during a run (reasoning_updates in ~/.octet/models.json)")
	// ErrUltraUnsupported: the run's route does not declare the Ultra mode
	// ("reasoning_ultra": true in ~/.octet/models.json).
	ErrUltraUnsupported = errors.New("runtime: the run's route does not support the Ultra reasoning mode (reasoning_ultra in ~/.octet/models.json)")
	// ErrObserverRequired: the Ultra mode needs an observation hook
	// (Agent.SetObserver) to report the events of the run and its workers.
	ErrObserverRequired = errors.New("runtime: the Ultra reasoning mode needs an observer (Agent.SetObserver)")
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
	if !cfg.valid() {
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
	a.reasoning = cfg.normalized()
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
// It is admitted only on a route qualified by its model metadata
// ("reasoning_updates": true in ~/.octet/models.json, never guessed from a
// name; built-in and inline routes are not): elsewhere it returns
// ErrReasoningNotQualified and changes nothing (ErrReasoningUnsupported on
// a route without reasoning).
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
	if !cfg.valid() {
		return ErrReasoningInvalid
	}
	if !rc.supportsReasoning {
		return fmt.Errorf("%w (%s)", ErrReasoningUnsupported, rc.modelID)
	}
	if !rc.reasoningUpdates {
		return fmt.Errorf("%w (%s)", ErrReasoningNotQualified, rc.modelID)
	}
	if cfg.Ultra {
		if !rc.reasoningUltra {
			return fmt.Errorf("%w (%s)", ErrUltraUnsupported, rc.modelID)
		}
		if !rc.agent.observed() {
			return ErrObserverRequired
		}
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
	c := cfg.normalized()
	rc.pendingReasoning = &c
	return nil
}

// reasoningState is what a run's model calls use: the pinned baseline the
// requests carry, and the latest reasoning update after it.
type reasoningState struct {
	update string // latest update's effort; "" none since the baseline
	ultra  bool   // the baseline is the Ultra mode's
}

// effective returns the selection in effect.
func (d *driver) effective() ReasoningConfig {
	if d.rs.update != "" {
		return ReasoningConfig{Effort: d.rs.update}
	}
	return ReasoningConfig{Effort: d.effort, Ultra: d.rs.ultra}
}

// startReasoning chooses the run's reasoning: the request's effort, else
// the session's restored selection (baseline and updates), else the
// agent's. It returns the record of a new baseline, nil when the session's
// stays. A route without reasoning support sends no effort and leaves the
// session's selection as it was.
func (d *driver) startReasoning() *store.Record {
	p := d.p
	if !p.model.SupportsReasoning {
		return nil
	}
	ultra := false
	switch {
	case p.req.ReasoningEffort != nil:
		d.effort = *p.req.ReasoningEffort
	case p.sess.LatestReasoning() != "" || p.sess.ReasoningUltra():
		d.effort, ultra, d.rs.update = p.sess.LatestReasoning(), p.sess.ReasoningUltra(), p.sess.ReasoningUpdate()
	default:
		if d.rs.update = p.sess.ReasoningUpdate(); d.rs.update == "" {
			a := d.a.Reasoning()
			d.effort, ultra = a.Effort, a.Ultra && p.model.ReasoningUltra
		}
	}
	var rec *store.Record
	// An effort the request names supersedes the session's updates even
	// when it equals the baseline.
	if d.effort != p.sess.LatestReasoning() || ultra != p.sess.ReasoningUltra() || (d.rs.update == "" && p.sess.ReasoningUpdate() != "") {
		rec = &store.Record{Body: store.ReasoningChange{Effort: d.effort, Ultra: ultra}}
		d.rs.update = ""
	}
	d.rs.ultra = ultra
	d.a.noteReasoning(d.effective())
	return rec
}

// reasoningChange turns an admitted selection into what changes: a
// reasoning update message, or a new baseline record. Both nil: nothing
// changes.
func (d *driver) reasoningChange(c ReasoningConfig) (update *provider.Message, baseline *store.ReasoningChange) {
	cur := d.effective()
	if c == cur {
		return nil, nil
	}
	if !c.Ultra && d.p.model.ReasoningUpdates && c.Effort != "" && d.effort != "" {
		return &provider.Message{Role: provider.RoleDeveloper, ReasoningEffort: c.Effort,
			Text: "Reasoning effort is now " + c.Effort + "."}, nil
	}
	if c.Effort == d.effort && c.Ultra == d.rs.ultra && d.rs.update == "" {
		return nil, nil
	}
	return nil, &store.ReasoningChange{Effort: c.Effort, Ultra: c.Ultra}
}

// apply makes a change the driver's and notes it on the agent.
func (d *driver) applyReasoning(update *provider.Message, baseline *store.ReasoningChange) {
	if update != nil {
		d.rs.update = update.ReasoningEffort
	}
	if baseline != nil {
		d.effort, d.rs.ultra, d.rs.update = baseline.Effort, baseline.Ultra, ""
	}
	d.a.noteReasoning(d.effective())
}

// boundaryReasoning admits a pending reasoning selection at a step
// boundary, unless it would change the thinking mode inside an assistant
// turn: a new baseline is recorded, an update is recorded and appended to
// msgs, the conversation of the next call.
func (d *driver) boundaryReasoning(ctx context.Context, step int, msgs *[]provider.Message) error {
	c, held := d.rc.takeReasoning(func(c ReasoningConfig) bool { return d.admitsReasoning(c.Effort, *msgs) })
	if held {
		d.a.log.LogAttrs(ctx, slog.LevelDebug, "a reasoning change that turns thinking on or off waits for the assistant turn to end",
			slog.String("run_id", d.p.req.RunID), slog.Int("step", step))
	}
	if c == nil {
		return nil
	}
	update, baseline := d.reasoningChange(*c)
	switch {
	case update != nil:
		if err := d.p.sess.Append(store.Record{Body: store.Message{RunID: d.p.req.RunID, Message: store.NewMessageV1(*update)}}); err != nil {
			return err
		}
		*msgs = append(*msgs, *update)
	case baseline != nil:
		if err := d.p.sess.Append(store.Record{Body: *baseline}); err != nil {
			return err
		}
	default:
		return nil
	}
	d.applyReasoning(update, baseline)
	return nil
}

// endReasoning closes the run's reasoning changes and returns the record
// of one no boundary admitted (held back by an Anthropic tool-use loop, or
// set after the last boundary), nil when none: it is not dropped but
// recorded before run_end, so that the session's next run starts with it.
// commit applies it once the record is written.
func (d *driver) endReasoning() (rec *store.Record, commit func()) {
	pending := d.rc.closeReasoning()
	if pending == nil {
		return nil, nil
	}
	update, baseline := d.reasoningChange(*pending)
	switch {
	case update != nil:
		rec = &store.Record{Body: store.Message{RunID: d.p.req.RunID, Message: store.NewMessageV1(*update)}}
	case baseline != nil:
		rec = &store.Record{Body: *baseline}
	default:
		return nil, nil
	}
	return rec, func() { d.applyReasoning(update, baseline) }
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
