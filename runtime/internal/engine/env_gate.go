package engine

import (
	"context"

	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/provider"
)

// The driver's side of the terminal gate (package gate): the loop's
// would-stop point, and the environment methods gate.Env lists beyond
// env.go's.

var _ gate.Env = (*driver)(nil)

// runEnd is how the loop ends.
type runEnd struct {
	status, output string
	err            *protocol.ErrorData
}

// wouldStop handles a step that answered without tool calls: the point
// where the run would end (gate.State.WouldStop; without a gate, only
// steering and follow-ups decide).
func (d *driver) wouldStop(ctx context.Context, step int, msgs *[]provider.Message, candidate string, lastStep bool) (*runEnd, string) {
	end, kept := d.p.gate.WouldStop(ctx, d, step, msgs, candidate, lastStep)
	if end == nil {
		return nil, kept
	}
	if end.Err != nil {
		end.Err.Message = bound(end.Err.Message)
	}
	return &runEnd{end.Status, end.Output, end.Err}, kept
}

// Prompt is the run's prompt.
func (d *driver) Prompt() string { return d.p.req.Prompt }

// Redact and FailureMessage, which the gate's environment also lists,
// are compaction's (env_compact.go).

// Scrub removes the run's credentials from s: its redactor's, then its
// route's key.
func (d *driver) Scrub(s string) string { return scrub(d.p.red.String(s), d.p.key) }

// RecordUsageUncertainty durably records that a call was billed without
// usage figures, and marks the run's usage uncertain.
func (d *driver) RecordUsageUncertainty(endpoint, model, operation string) error {
	if err := d.p.sess.RecordUsageUncertainty(endpoint, model, operation); err != nil {
		return err
	}
	d.markUncertain()
	return nil
}

// SteeringPending reports whether steering waits to be delivered.
func (d *driver) SteeringPending() bool { return d.rc.steeringPending() }

// AfterTurn fires the after-turn steering boundary and delivers what it
// releases to step+1; it reports whether the answered turn completes the
// run instead.
func (d *driver) AfterTurn(step int, msgs *[]provider.Message, answered bool) (bool, error) {
	b := d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn, Answered: answered})
	if b.complete {
		return true, nil
	}
	return false, d.deliver(step+1, msgs, b.deliver)
}
