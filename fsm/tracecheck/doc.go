// Package tracecheck validates real runs against the TLA+ specs: it
// replays the state machines' transition log (the trace-level lines the
// runtime and the host write, "state machine transition", with run_id,
// machine, trigger, from, to, from_state, to_state and, for fsm/recovery,
// instance) and requires every logged step to be a step of the machine's
// spec, from the spec state the steps before it reached.
//
// The specs' graphs are those tla/check.mjs exports (tla/<Spec>.graph.json,
// the graphs fsm/*/graph_test.go hold the machines' reachable graphs equal
// to). They are bounded models (two request IDs, two pending messages, a
// clock of four ticks), and real runs are not: a checker maps both sides
// through an abstraction of each machine's spec state that keeps the
// phase, the statuses, codes and flags, and cuts every count down to
// "zero or some" (and drops the recovery model's clock readings), and a
// step is allowed when the abstract spec graph has it: a sound
// over-approximation of the spec (a step it refuses, no instance of the
// spec takes). Each machine instance (run ID, machine, recovery
// instance) starts in an initial state of its spec, and each step must
// start in the state, as logged, that the previous one ended in.
//
// The package does no I/O: a command or test reads the graph files and
// the log and feeds them in (New, Checker.Line). cmd/octet-tracecheck is
// that command; scripts/soak runs it over a soak's host log.
package tracecheck
