// Package gate is the terminal gate of a run: when a model step ends with
// no tool calls, its text is a candidate final answer, and the gate decides
// whether it ends the run (accept), sends the model back to work with a
// reason (reject), or ends the run without an answer (stop). It owns the
// gate's vocabulary (Verdict, Input, Decision, Reviewer, the bounds), the
// per-run State (the reviewer, the model gates' resolved routes, the count
// of rejections in a row), the decisions at the would-stop point, the
// sanitizing of a gate's reasons, and a model gate's question (its prompt,
// its call under the run's recovery, its usage record, reading its
// verdict).
//
// It sees the run through Env, a narrow interface the engine's driver
// satisfies: events, the session, redaction, the run's recovery machine
// (modelcall.Recoverer), and the steering boundaries, which stay the
// engine's: the state asks whether steering is pending and has the driver
// fire the after-turn boundary and deliver what it releases. The engine
// resolves a model gate's route (its catalog, credentials and inline
// routes) through the function New is given.
package gate
