package engine

import (
	"context"
	"log/slog"

	"octet.dev/host/fsm"
)

// LevelTrace is the level of the state machines' transition lines, one
// step below [slog.LevelDebug]. slog's own handlers print it as
// "DEBUG-4"; a handler that wants the name "TRACE" can rename it with
// [slog.HandlerOptions] ReplaceAttr. The runtime installs its tracers only
// when Options.Logger is enabled at this level, so a logger that drops it
// pays nothing for tracing.
const LevelTrace = slog.Level(-8)

// transitionTracer returns the tracer of one run's state machines (fsm/run,
// fsm/recovery, fsm/steering): each transition is logged at LevelTrace
// with the run's ID. It returns nil when log is not enabled at LevelTrace,
// and a machine skips a nil tracer, so tracing costs nothing unless it is
// on. The level is asked once, when the run starts.
func transitionTracer(ctx context.Context, log *slog.Logger, runID string) fsm.Tracer {
	if !log.Enabled(ctx, LevelTrace) {
		return nil
	}
	return func(t fsm.Transition) {
		log.LogAttrs(ctx, LevelTrace, "state machine transition", slog.String("run_id", runID),
			slog.String("machine", t.Machine), slog.String("trigger", t.Trigger),
			slog.String("from", t.From), slog.String("to", t.To))
	}
}
