package engine

import (
	"context"
	"log/slog"

	"octet.dev/host/runtime/internal/engine/reasoning"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// The driver's side of the run's reasoning (package reasoning): the
// adapters the loop calls, and the environment methods a reasoning.State
// asks of its run.

var _ reasoning.Env = (*driver)(nil)

// reasoningState returns the run's reasoning state, bound to the run.
func (d *driver) reasoningState() *reasoning.State {
	d.rs.Bind(d, d.rc.reasoningDeclared)
	return &d.rs
}

// startReasoning chooses the run's reasoning (reasoning.State.Start).
func (d *driver) startReasoning() *store.Record {
	p := d.p
	return d.reasoningState().Start(p.req.ReasoningEffort, reasoning.Recorded{
		Baseline: p.sess.LatestReasoning(), Ultra: p.sess.ReasoningUltra(), Update: p.sess.ReasoningUpdate()})
}

// boundaryReasoning admits a pending reasoning change at a step boundary
// (reasoning.State.Boundary).
func (d *driver) boundaryReasoning(ctx context.Context, step int, msgs *[]provider.Message) error {
	return d.reasoningState().Boundary(ctx, step, msgs)
}

// endReasoning closes the run's reasoning changes (reasoning.State.End).
func (d *driver) endReasoning() (rec *store.Record, commit func()) {
	return d.reasoningState().End() // bound here too: a run blocked before its loop never started it
}

// TakeReasoning returns and clears the pending selection when admit
// accepts it (RunControl.takeReasoning).
func (d *driver) TakeReasoning(admit func(ReasoningConfig) bool) (*ReasoningConfig, bool) {
	return d.rc.takeReasoning(admit)
}

// CloseReasoning closes the run's reasoning changes and returns the one
// pending (RunControl.closeReasoning).
func (d *driver) CloseReasoning() *ReasoningConfig { return d.rc.closeReasoning() }

// AgentReasoning is the agent's selection.
func (d *driver) AgentReasoning() ReasoningConfig { return d.a.Reasoning() }

// NoteReasoning makes c the agent's effective selection.
func (d *driver) NoteReasoning(c ReasoningConfig) { d.a.noteReasoning(c) }

// ReasoningLog is the agent's log.
func (d *driver) ReasoningLog() *slog.Logger { return d.a.log }
