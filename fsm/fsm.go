// Package fsm holds the vocabulary shared by the host's explicit state
// machines (fsm/session, and later fsm/run, fsm/recovery): transitions as
// data and a tracer the driver can install.
//
// Machines in fsm and its sub-packages are pure: they import no I/O, no
// wire, no runtime, and never read the clock. They take inputs and return
// effects as data, in a documented order; the driver performs the effects
// and logs the transitions. A machine has a single owner goroutine; no
// machine fires from inside its own action or guard.
package fsm

// Transition records one fired trigger.
type Transition struct {
	Machine string
	From    string
	To      string
	Trigger string
}

// Tracer receives every transition a machine takes. Drivers use it for
// logging; tests use it to record traces.
type Tracer func(Transition)
