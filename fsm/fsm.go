package fsm

import "fmt"

// Transition records one fired trigger: the machine's name, its phase
// before and after, and the trigger. FromState and ToState are the
// machine's whole state before and after as JSON (its State value; the
// session machine gives the number of used request IDs, not the IDs), what
// a trace checker needs to map a step onto its TLA+ spec (fsm/tracecheck).
// Machines compute them only while a tracer is installed.
type Transition struct {
	Machine   string
	From      string
	To        string
	Trigger   string
	FromState string
	ToState   string
	// Instance numbers the machine among the run's machines of its kind,
	// from 1, where a driver keeps several (0: the driver does not number
	// them). The machine never sets it; a driver's tracer does.
	Instance int64
}

// Tracer receives every transition a machine takes. Drivers use it for
// logging; tests use it to record traces. A nil Tracer costs nothing.
type Tracer func(Transition)

// TransitionError is returned by a machine's Fire for an input its current
// phase does not accept; the machine is unchanged. Input is the input's
// arguments as the machine prints them. Err is set only when the state
// machine library refused a step its own CanFire allowed (a guard that is
// not pure, a broken invariant of the machine).
type TransitionError struct {
	Machine string
	Phase   string
	Trigger string
	Input   string
	Err     error
}

func (e *TransitionError) Error() string {
	msg := fmt.Sprintf("fsm/%s: trigger %q not permitted in phase %q", e.Machine, e.Trigger, e.Phase)
	if e.Err != nil {
		msg = fmt.Sprintf("fsm/%s: trigger %q in phase %q failed", e.Machine, e.Trigger, e.Phase)
	}
	if e.Input != "" {
		msg += " (" + e.Input + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *TransitionError) Unwrap() error { return e.Err }
