package spec

import (
	"errors"
	"fmt"

	"octet.dev/host/protocol"
)

// Frame is one event of a transcript, reduced to what the invariants read.
type Frame struct {
	RequestID *string // nil when the event's request_id is null
	Seq       int
	Type      protocol.EventType
	Terminal  bool // final_result, protocol_error, or the answer to hello, models, shutdown
}

// TypeShutdown is the type of the event that answers shutdown (CONTRACT §2).
const TypeShutdown = "shutdown"

// ID returns a pointer to a copy of id, for building Frames.
func ID(id string) *string { return &id }

// Names of the invariants, as in tla/Session.tla. NothingAfterShutdown is
// the transcript's view of NothingAfterClose: the shutdown event is the only
// close a transcript shows (EOF and a failed write leave no event).
const (
	NameExactlyOneTerminal   = "ExactlyOneTerminal"
	NameSeqGapless           = "SeqGapless"
	NameNothingAfterShutdown = "NothingAfterShutdown"
	NameSerial               = "Serial"
	NameComplete             = "Complete"
)

// Violation is the error a predicate returns: which invariant, at which
// frame of the transcript, and why.
type Violation struct {
	Invariant string
	Frame     int // index of the offending frame in the transcript
	Reason    string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("spec: %s violated at frame %d: %s", v.Invariant, v.Frame, v.Reason)
}

// request is one request read out of a transcript.
type request struct {
	id    *string
	start int // index of its first frame
}

func (r request) String() string {
	if r.id == nil {
		return fmt.Sprintf("request null (from frame %d)", r.start)
	}
	return fmt.Sprintf("request %q (from frame %d)", *r.id, r.start)
}

type idKey struct {
	null bool
	id   string
}

// requests reads the requests out of frames as a client does: a frame with
// seq 1 starts a request; any other frame continues the latest request with
// the same request_id, or starts one if there is none (SeqGapless then
// objects to its seq). owner[i] is the request of frames[i].
func requests(frames []Frame) (reqs []request, owner []int) {
	owner = make([]int, len(frames))
	latest := map[idKey]int{}
	for i, f := range frames {
		k := idKey{null: f.RequestID == nil}
		if f.RequestID != nil {
			k.id = *f.RequestID
		}
		r, ok := latest[k]
		if f.Seq == 1 || !ok {
			reqs = append(reqs, request{id: f.RequestID, start: i})
			r = len(reqs) - 1
			latest[k] = r
		}
		owner[i] = r
	}
	return reqs, owner
}

// ExactlyOneTerminal reports whether every request ends with exactly one
// terminal event (CONTRACT §5): nothing of a request follows its terminal
// event, and every request but the last one to start has its terminal
// event. The last may still be in flight (see Complete).
func ExactlyOneTerminal(frames []Frame) error {
	reqs, owner := requests(frames)
	terminal := make([]int, len(reqs))
	for r := range terminal {
		terminal[r] = -1
	}
	for i, f := range frames {
		r := owner[i]
		if t := terminal[r]; t >= 0 {
			what := "an event"
			if f.Terminal {
				what = "a second terminal event"
			}
			return &Violation{NameExactlyOneTerminal, i, fmt.Sprintf("%s: %s after its terminal event at frame %d", reqs[r], what, t)}
		}
		if f.Terminal {
			terminal[r] = i
		}
	}
	for r := 0; r+1 < len(reqs); r++ {
		if terminal[r] < 0 {
			return &Violation{NameExactlyOneTerminal, reqs[r].start, fmt.Sprintf("%s has no terminal event, yet %s started", reqs[r], reqs[r+1])}
		}
	}
	return nil
}

// SeqGapless reports whether every request's events carry seq 1, 2, 3, …
// (CONTRACT §5: per request, starts at 1, increases by exactly 1).
func SeqGapless(frames []Frame) error {
	reqs, owner := requests(frames)
	last := make([]int, len(reqs))
	lastAt := make([]int, len(reqs))
	for i, f := range frames {
		r := owner[i]
		switch {
		case reqs[r].start == i && f.Seq != 1:
			return &Violation{NameSeqGapless, i, fmt.Sprintf("%s starts with seq %d, not 1", reqs[r], f.Seq)}
		case reqs[r].start != i && f.Seq != last[r]+1:
			return &Violation{NameSeqGapless, i, fmt.Sprintf("%s: seq %d after seq %d at frame %d", reqs[r], f.Seq, last[r], lastAt[r])}
		}
		last[r], lastAt[r] = f.Seq, i
	}
	return nil
}

// NothingAfterShutdown reports whether the shutdown event, if any, is the
// last event (CONTRACT §2: shutdown answers, flushes, exits 0).
func NothingAfterShutdown(frames []Frame) error {
	for i, f := range frames {
		if f.Type == TypeShutdown && i+1 < len(frames) {
			return &Violation{NameNothingAfterShutdown, i + 1, fmt.Sprintf("an event after the shutdown event at frame %d", i)}
		}
	}
	return nil
}

// Serial reports whether requests were served one at a time (CONTRACT §2):
// each request's events are contiguous, none interleaved with another's.
func Serial(frames []Frame) error {
	reqs, owner := requests(frames)
	for i := 1; i < len(frames); i++ {
		r, p := owner[i], owner[i-1]
		if r != p && reqs[r].start != i {
			return &Violation{NameSerial, i, fmt.Sprintf("%s writes again after %s wrote at frame %d", reqs[r], reqs[p], i-1)}
		}
	}
	return nil
}

// Complete reports whether every request has its terminal event: what a
// transcript of a host that exited 0 must also satisfy. Unlike the others
// it does not hold on prefixes (a request in flight has no terminal yet).
func Complete(frames []Frame) error {
	reqs, owner := requests(frames)
	done := make([]bool, len(reqs))
	for i, f := range frames {
		if f.Terminal {
			done[owner[i]] = true
		}
	}
	for r, ok := range done {
		if !ok {
			return &Violation{NameComplete, reqs[r].start, fmt.Sprintf("%s has no terminal event", reqs[r])}
		}
	}
	return nil
}

// All checks ExactlyOneTerminal, SeqGapless, NothingAfterShutdown and
// Serial and joins their violations. On a transcript where they all hold,
// they hold on every prefix too, so a test may run All after every event.
func All(frames []Frame) error {
	return errors.Join(
		ExactlyOneTerminal(frames),
		SeqGapless(frames),
		NothingAfterShutdown(frames),
		Serial(frames),
	)
}
