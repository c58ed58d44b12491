package engine

import (
	"context"
	"log/slog"
	"sync/atomic"

	"octet.dev/host/fsm"
)

// LevelTrace is the level of the state machines' transition lines, one
// step below [slog.LevelDebug]. slog's own handlers print it as
// "DEBUG-4"; a handler that wants the name "TRACE" can rename it with
// [slog.HandlerOptions] ReplaceAttr. The runtime installs its tracers only
// when Options.Logger is enabled at this level, so a logger that drops it
// pays nothing for tracing.
const LevelTrace = slog.Level(-8)

// recoveryMachine is fsm/recovery's machine name; a run has one such
// machine per operation, each leaving recoveryIdle once, with its start.
const (
	recoveryMachine = "recovery"
	recoveryIdle    = "idle"
)

// transitionTracer returns the tracer of one run's state machines (fsm/run,
// fsm/recovery, fsm/steering, fsm/compaction): each transition is logged
// at LevelTrace with the run's ID, the machine's state before and after as
// JSON (from_state, to_state), and, for a recovery machine or a native
// steering intent's, its instance: the operations of a run are numbered
// from 1 in the order they start, which is when their machine leaves
// idle; the intents carry their number (fsm.Transition.Instance). fsm/tracecheck replays these lines
// against the TLA+ specs. It returns nil when log is not enabled at
// LevelTrace, and a machine skips a nil tracer, so tracing costs nothing
// unless it is on. The level is asked once, when the run starts.
func transitionTracer(ctx context.Context, log *slog.Logger, runID string) fsm.Tracer {
	if !log.Enabled(ctx, LevelTrace) {
		return nil
	}
	var operations atomic.Int64
	return func(t fsm.Transition) {
		attrs := []slog.Attr{slog.String("run_id", runID),
			slog.String("machine", t.Machine), slog.String("trigger", t.Trigger),
			slog.String("from", t.From), slog.String("to", t.To)}
		switch {
		case t.Instance > 0: // numbered by its driver (native steering's intents)
			attrs = append(attrs, slog.Int64("instance", t.Instance))
		case t.Machine == recoveryMachine:
			n := operations.Load()
			if t.From == recoveryIdle {
				n = operations.Add(1)
			}
			attrs = append(attrs, slog.Int64("instance", n))
		}
		if t.FromState != "" {
			attrs = append(attrs, slog.String("from_state", t.FromState), slog.String("to_state", t.ToState))
		}
		log.LogAttrs(ctx, LevelTrace, "state machine transition", attrs...)
	}
}
