package host

import (
	"context"
	"log/slog"

	"octet.dev/host/fsm"
	"octet.dev/host/runtime"
)

// sessionTracer returns the session machine's tracer: each transition is
// logged at runtime.LevelTrace, with the machine's state before and after
// (from_state, to_state) for fsm/tracecheck. It returns nil when log is not enabled at
// that level (asked once, here), and the machine skips a nil tracer, so
// tracing costs nothing unless it is on.
func sessionTracer(log *slog.Logger) fsm.Tracer {
	ctx := context.Background()
	if !log.Enabled(ctx, runtime.LevelTrace) {
		return nil
	}
	return func(t fsm.Transition) {
		log.LogAttrs(ctx, runtime.LevelTrace, "state machine transition", slog.String("machine", t.Machine),
			slog.String("trigger", t.Trigger), slog.String("from", t.From), slog.String("to", t.To),
			slog.String("from_state", t.FromState), slog.String("to_state", t.ToState))
	}
}
