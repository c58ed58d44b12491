package host

import (
	"github.com/rs/zerolog"

	"octet.dev/host/fsm"
)

// sessionTracer returns the session machine's tracer: each transition is
// logged at trace level. It returns nil when log drops trace events, and
// the machine skips a nil tracer, so tracing costs nothing unless it is on.
func sessionTracer(log zerolog.Logger) fsm.Tracer {
	if log.GetLevel() > zerolog.TraceLevel || zerolog.GlobalLevel() > zerolog.TraceLevel {
		return nil
	}
	return func(t fsm.Transition) {
		log.Trace().Str("machine", t.Machine).Str("trigger", t.Trigger).Str("from", t.From).Str("to", t.To).
			Msg("state machine transition")
	}
}
