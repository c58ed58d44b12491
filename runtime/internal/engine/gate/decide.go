package gate

import (
	"strconv"

	"octet.dev/host/internal/textutil"
)

// The gate's own decisions, pure: whether a candidate is reviewed, whether
// a reviewer's decision is valid, and what a valid one does to the run and
// to the count of rejections in a row. WouldStop performs their effects.

// Outcome is what a valid decision does to the run.
type Outcome int

// Outcomes.
const (
	// Accepted: the candidate may end the run (queued follow-ups go on
	// first); the count of rejections starts again.
	Accepted Outcome = iota
	// Stopped: the run ends now, status blocked, code
	// terminal_gate_stopped.
	Stopped
	// Rejected: the model goes back to work with the reason.
	Rejected
	// Exhausted: the rejection reached MaxRejections; the run ends, status
	// blocked, code terminal_gate_exhausted.
	Exhausted
)

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Stopped:
		return "stopped"
	case Rejected:
		return "rejected"
	case Exhausted:
		return "exhausted"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Reviews reports whether a candidate goes to the gate: a run has one,
// and no steering is pending (pending steering is delivered first, and
// the answer after it is reviewed), except at the last step, where
// nothing is delivered.
func Reviews(hasGate, lastStep, steeringPending bool) bool {
	return hasGate && (lastStep || !steeringPending)
}

// Check judges a reviewer's decision, its reason already sanitized: ""
// when it is valid, else why it fails the gate (fail closed: a reject or
// stop needs a reason, and no other verdict exists).
func Check(d Decision) string {
	switch d.Verdict {
	case Accept:
		return ""
	case Reject, Stop:
		if d.Reason == "" {
			return "it answered " + string(d.Verdict) + " without a reason"
		}
		return ""
	}
	return "it answered the unknown verdict " + strconv.Quote(textutil.Truncate(string(d.Verdict), 64))
}

// Decide applies a valid verdict to the count of rejections in a row: the
// outcome, and the count after it (0 after an accept, one more after a
// reject, unchanged by a stop).
func Decide(v Verdict, rejections int) (Outcome, int) {
	switch v {
	case Accept:
		return Accepted, 0
	case Stop:
		return Stopped, rejections
	}
	rejections++
	if rejections >= MaxRejections {
		return Exhausted, rejections
	}
	return Rejected, rejections
}
