// Package run is the run lifecycle machine (CONTRACT §9): a run request is
// received, then either rejected (a single final_result error, no accepted)
// or accepted → started → streaming → settled → final. Exactly one final,
// nothing after it; streaming events only between started and settled;
// settled announces the status final_result will carry.
//
// The machine is pure and built on github.com/qmuntal/stateless with
// external storage (through fsm/internal/machine); tla/RunLifecycle.tla is
// its spec. A Machine is owned by one goroutine (the run's driver).
package run
