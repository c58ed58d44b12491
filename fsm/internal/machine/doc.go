// Package machine is the plumbing the host's state machines share
// (fsm/session, fsm/run, fsm/recovery, fsm/steering): a
// github.com/qmuntal/stateless machine whose phase lives in the owner's
// state value (external storage), the input and effects of the Fire in
// progress, CanFire before Fire with a typed error for an input the phase
// does not accept (*fsm.TransitionError), the tracer, and a fast path for
// guard-free internal transitions.
//
// A machine package declares its Spec once (name, phases, triggers) and
// keeps its whole state in its own State value, handing New a pointer to
// the phase field; guards and actions read the input with In and append
// effects with Emit. Transitions are configured on stateless through
// Configure, except the guard-free internal ones, which go through
// Internal: Internal configures the same transition on stateless and
// records it for the fast path, so the two cannot drift apart. Fire takes
// a recorded internal transition without stateless (a stateless Fire
// costs more than ten times as much and allocates, BenchmarkFire), which
// keeps the per-event hot path (a model_delta through the run and session
// machines) to a scan of at most MaxInternal entries and the action, with
// no allocation. Builds with the
// invariants tag check each fast step against the stateless table.
//
// A Machine is owned by one goroutine; no action or guard may fire it.
package machine
