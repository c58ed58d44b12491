// Package steering is the settlement machine of a run's queued steering and
// follow-up messages (CONTRACT §15: RunControl.Steer and RunControl.FollowUp).
//
// Every message the application submits while the run is open is settled
// exactly once: delivered into the conversation at a safe boundary, or
// dropped when the run ends first. Steering goes first: pending steering is
// delivered at the next boundary — after the tool call that is running, in
// which case the turn's remaining tool calls are skipped, or after the
// model's turn — and a turn the model answered without tool calls does not
// complete the run while steering is pending. Follow-ups wait until the run
// would otherwise complete: an answered turn with no steering pending
// delivers every pending follow-up and the run goes on. An answered turn
// with nothing pending completes the run and closes the machine; so does
// Close, whatever the run's status, dropping what is still pending.
//
// The machine counts messages; the driver keeps their texts in submission
// order and delivers the first N of a kind when an effect says N. It is
// pure and built on github.com/qmuntal/stateless with external storage
// (through fsm/internal/machine); tla/Steering.tla is its spec. The driver
// serializes its calls (the application submits from its goroutines, the
// run fires boundaries from its own).
package steering
