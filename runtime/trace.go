package runtime

import (
	"github.com/rs/zerolog"

	"octet.dev/host/fsm"
)

// transitionTracer returns the tracer of one run's state machines (fsm/run,
// fsm/recovery, fsm/steering): each transition is logged at trace level
// with the run's ID. It returns nil when log drops trace events, and a
// machine skips a nil tracer, so tracing costs nothing unless it is on.
func transitionTracer(log zerolog.Logger, runID string) fsm.Tracer {
	if log.GetLevel() > zerolog.TraceLevel || zerolog.GlobalLevel() > zerolog.TraceLevel {
		return nil
	}
	return func(t fsm.Transition) {
		log.Trace().Str("run_id", runID).Str("machine", t.Machine).Str("trigger", t.Trigger).
			Str("from", t.From).Str("to", t.To).Msg("state machine transition")
	}
}
