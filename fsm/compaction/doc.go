// Package compaction is the pure machine of compaction inside a run
// (CONTRACT §17), whose spec is tla/Compaction.tla: the threshold
// check before each model call, overflow recovery (compact, then re-issue
// the step once), and what a refused or failed compaction leads to.
//
// It holds the decisions of the engine's compaction (package
// runtime/internal/engine/compact, whose Compactor drives the Machine) and
// does no I/O: the engine measures the context, runs the summarizer or the
// compaction endpoint, writes the checkpoint and the events; the machine
// says what to do next, as effects returned as data.
//
// Two layers:
//
//   - Policy: the decisions as pure functions of the run's budget and
//     route, cheap enough for the per-step check (the engine calls them on
//     every step): BudgetOf (the threshold, keep and fit of a route's
//     window and max_output_tokens), Due (a threshold compaction is due: the budget is on, the
//     context is over the threshold and past the hold-off), HoldUntil (after
//     a refused threshold compaction the next attempt waits until the
//     context has grown by keep, but never past fit: the size at which the
//     next request would leave less than max_output_tokens of the window),
//     Fits (a refused threshold compaction lets the run go on while the
//     context still fits the window), Choose (native compaction when the
//     route has an endpoint, else local, else nothing to summarize),
//     Overflowed (a failed turn's overflow, or a silent overflow of a step
//     that is not native-steered: a native-steered step is never re-issued)
//     and OnOverflow (compact once, end the run on a second overflow, or let
//     the outcome stand when there is nothing to compact).
//   - Machine: the step loop of tla/Compaction.tla (check, calling,
//     compacting, done), one trigger per action of the spec, whose guards
//     and outcomes are the Policy's. Its graph test (graph_test.go) requires
//     its reachable graph to equal the spec's (tla/Compaction.graph.json).
package compaction
