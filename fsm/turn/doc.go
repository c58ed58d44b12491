// Package turn decides the step boundaries of a run's agent loop: what the
// engine does next after each fact it reports. The engine reports facts (a
// step begins; the model answered, with or without tool calls, cut by the
// output cap or not; a native steer is outstanding or its outcome is read;
// the terminal gate answered; a tool call finished; a steering boundary
// cut the remaining calls; something failed or was canceled) and Next
// returns the effects to perform, in order, as data: admit a reasoning
// change, run the compaction check, call the model, await a native steer,
// ask the gate, run a tool call, fire a steering boundary, skip the
// remaining calls, deliver what steering released, settle with an
// outcome. The engine (runtime/internal/engine, loop.go) only performs
// them, and reports what a performed effect yields as the next fact.
//
// It is a plain pure decision function, Next(State, Fact), in the manner
// of raft's Ready: no goroutines, no I/O, no clock, and no state machine
// library. Its state is a value the engine keeps. It has no TLA+ spec of
// its own: the machines it sequences (fsm/steering for what a boundary
// delivers, fsm/compaction for whether a check compacts, fsm/recovery for
// a model call's attempts, fsm/run for the events) keep theirs.
//
// What it guarantees, checked by its tests: a run settles exactly once,
// and nothing follows a settle; the model is called at most max_steps
// times; steering boundaries come only between tool calls or at the end of
// a step's tool calls, never at the last step, and what they release is
// delivered before the next step begins; a fact that reports cancellation
// settles the run as canceled, whatever else it says.
package turn
