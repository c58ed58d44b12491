package engine

import (
	"context"
	"fmt"

	fsmrun "octet.dev/host/fsm/run"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/engine/compact"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/provider"
)

// Compaction and overflow recovery live in package compact: the run's
// compact.Compactor owns its budget, its plans, summaries and checkpoints,
// and the compaction machine (fsm/compaction) that decides; it sees the run
// through the driver's methods in env_compact.go. These are the loop's
// entry points.

// compactor is the run's compaction state (the driver's cmp).
type compactor = compact.Compactor

// initCompaction sets up budgeting for the run, whose conversation is
// msgs.
func (d *driver) initCompaction(system string, specs []provider.ToolSpec, msgs []provider.Message) {
	m := d.p.model
	_, native := d.nativeCompactor()
	d.cmp = compact.New(d, compact.Config{
		System: system, Tools: specs, Window: int64(m.ContextWindowTokens), MaxOutput: int64(m.MaxOutputTokens),
		OutputCap: requestOutputCap(m), APIModel: m.APIModel, Workspace: d.p.req.Workspace, Route: d.routeKey(),
		Native: native, Tracer: d.trace,
	}, msgs)
}

// noteStep records a successful step's usage as the context's size.
func (d *driver) noteStep(t modelcall.Turn, msgs []provider.Message) { d.cmp.NoteStep(t, msgs) }

// compactIfNeeded is the threshold check before a model call.
func (d *driver) compactIfNeeded(ctx context.Context, step int, msgs *[]provider.Message) *modelcall.Failed {
	return d.cmp.Check(ctx, step, msgs)
}

// modelTurnFitting performs the step's model turn on msgs (build makes
// the request), compacting and re-issuing it once when it overflows.
func (d *driver) modelTurnFitting(ctx context.Context, step int, msgs *[]provider.Message, build func([]provider.Message) provider.Request) (modelcall.Turn, error) {
	return d.cmp.Fitting(ctx, step, msgs, build)
}

// endCompaction tells the compaction machine how the run ended.
func (d *driver) endCompaction(status string) {
	if d.cmp != nil {
		d.cmp.End(status == fsmrun.StatusCompleted)
	}
}

// routeKey names the run's route for native checkpoints: wire, provider,
// endpoint and API model.
func (d *driver) routeKey() string {
	m := d.p.model
	return string(m.Mode) + " " + m.Provider + " " + m.BaseURL + " " + m.APIModel
}

// sessionMessages is the session's conversation for this run's route,
// media attached. The session reads back from its file the records it does
// not hold; a failure to is the step's error.
func (d *driver) sessionMessages() ([]provider.Message, error) {
	msgs, err := d.p.sess.Conversation(d.routeKey())
	if err != nil {
		return nil, fmt.Errorf("the session could not be read: %w", err)
	}
	return d.withMediaBytes(msgs)
}

// nativeCompactor returns the route's compaction endpoint when the route
// declares one (native compaction: an openai-responses route whose
// models.json entry says "native_compaction": true).
func (d *driver) nativeCompactor() (provider.Compactor, bool) {
	m := d.p.model
	if !m.NativeCompaction || m.Inline || m.Mode != catalog.ModeOpenAIResponses {
		return nil, false
	}
	c, ok := d.p.prov.(provider.Compactor)
	return c, ok
}

// discardTurn reports a discarded answer's text and reasoning as
// recovered output, as recovery does for a replaced attempt: the events
// Options.RecoveredOutput builds, or none when it is nil.
func (d *driver) discardTurn(step int, t modelcall.Turn) {
	recovered := d.a.opts.RecoveredOutput
	if recovered == nil {
		return
	}
	if t.Text != "" {
		ev := recovered(step, protocol.ChannelText, t.Text)
		d.stream(ev.Type, ev.Data)
	}
	if t.Reasoning != "" {
		ev := recovered(step, protocol.ChannelReasoning, t.Reasoning)
		d.stream(ev.Type, ev.Data)
	}
}

// priceUsage prices usage at the model's rates (nil: unpriced). Input
// counts cached tokens too (provider.Usage); each part is priced at its
// own rate.
func priceUsage(pr *protocol.Cost, usage protocol.Usage) protocol.StepCost {
	var c protocol.StepCost
	if pr == nil {
		return c
	}
	fresh := max(usage.InputTokens-usage.CacheReadTokens-usage.CacheWriteTokens, 0)
	c = protocol.StepCost{
		Input:      float64(fresh) * pr.Input / 1e6,
		Output:     float64(usage.OutputTokens) * pr.Output / 1e6,
		CacheRead:  float64(usage.CacheReadTokens) * pr.CacheRead / 1e6,
		CacheWrite: float64(usage.CacheWriteTokens) * pr.CacheWrite / 1e6,
		Currency:   pr.Currency,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}
