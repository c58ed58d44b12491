// Package fsm holds the vocabulary shared by the host's explicit state
// machines (fsm/session, fsm/run, fsm/recovery, fsm/steering): transitions
// as data, a tracer the driver can install, and the error of an input a
// machine does not accept (which fsm/turn, the agent loop's step
// boundaries as a plain decision function, returns too). The plumbing the machines share (stateless with
// external storage, CanFire then Fire, the fast path) is fsm/internal/machine.
//
// Machines in fsm and its sub-packages are pure: they import no I/O, no
// wire, no runtime, and never read the clock. They take inputs and return
// effects as data, in a documented order; the driver performs the effects
// and logs the transitions. A machine has a single owner goroutine; no
// machine fires from inside its own action or guard.
package fsm
