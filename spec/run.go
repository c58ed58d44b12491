package spec

import (
	"errors"
	"fmt"
	"slices"

	"octet.dev/host/protocol"
)

// The run lifecycle (CONTRACT §9; tla/RunLifecycle.tla, fsm/run): a run is
// accepted → started → streaming events → settled → exactly one
// final_result, or rejected with a single final_result whose status is
// error and no accepted. Accepted and started may settle directly.
//
// A run transcript is the sequence of events one run request wrote, in
// order, each reduced to a RunEvent; it is what a client reads for that
// request_id, with the session's framing (request_id, seq) left to the
// session predicates. The predicates below are prefix-closed like those of
// the session: a run still in flight satisfies them, so a test may run
// RunLifecycle after every event; RunComplete adds what holds once the run
// is over.

// RunEvent is one event of a run transcript.
type RunEvent struct {
	Type   protocol.EventType // the event's type: accepted, started, a streaming type, settled, final_result
	Status string             // data.status of settled and final_result; "" for every other type
}

// The event types and statuses are package protocol's: the lifecycle
// types (protocol.TypeAccepted, TypeStarted, TypeSettled, TypeFinalResult),
// the streaming types of protocol.StreamingTypes, and protocol.Statuses.

// IsStreaming reports whether typ is a streaming event type of CONTRACT §9
// (protocol.StreamingTypes). A type added to the contract is added to
// package protocol's registry, or RunTypeOK rejects it.
func IsStreaming(typ protocol.EventType) bool {
	e, ok := protocol.Lookup(typ)
	return ok && e.Kind == protocol.KindStreaming
}

// Names of the run invariants, as in tla/RunLifecycle.tla. RunTypeOK is the
// transcript's part of that spec's TypeOK; RunComplete is what holds once
// the run is over (the spec's ExactlyOneFinal ties that to the final phase).
const (
	NameRunTypeOK             = "RunTypeOK"
	NameAcceptedFirst         = "AcceptedFirst"
	NameStartedBeforeStream   = "StartedBeforeStream"
	NameSettledBeforeFinal    = "SettledBeforeFinal"
	NameExactlyOneFinal       = "ExactlyOneFinal"
	NameRejectedHasNoAccepted = "RejectedHasNoAccepted"
	NameRunComplete           = "RunComplete"
)

func hasStatus(typ protocol.EventType) bool {
	return typ == protocol.TypeSettled || typ == protocol.TypeFinalResult
}

// before returns the index of the first event of type typ before index i,
// or -1.
func before(events []RunEvent, typ protocol.EventType, i int) int {
	for j := range i {
		if events[j].Type == typ {
			return j
		}
	}
	return -1
}

// RunTypeOK reports whether every event is a lifecycle or streaming event
// and carries a status exactly when it is settled or final_result, one of
// completed, blocked, error.
func RunTypeOK(events []RunEvent) error {
	for i, e := range events {
		switch {
		case hasStatus(e.Type):
			if !slices.Contains(protocol.Statuses(), e.Status) {
				return &Violation{NameRunTypeOK, i, fmt.Sprintf("%s with status %q, not one of %v", e.Type, e.Status, protocol.Statuses())}
			}
		case e.Type == protocol.TypeAccepted || e.Type == protocol.TypeStarted || IsStreaming(e.Type):
			if e.Status != "" {
				return &Violation{NameRunTypeOK, i, fmt.Sprintf("%s with status %q; only settled and final_result carry one", e.Type, e.Status)}
			}
		default:
			return &Violation{NameRunTypeOK, i, fmt.Sprintf("%q is neither a lifecycle nor a streaming event type", e.Type)}
		}
	}
	return nil
}

// AcceptedFirst reports whether the run starts with accepted or is a
// rejection: nothing but a rejecting final_result (status error) comes
// before accepted, and accepted is written at most once, first.
func AcceptedFirst(events []RunEvent) error {
	for i, e := range events {
		switch {
		case e.Type == protocol.TypeAccepted && i != 0:
			what := "accepted again"
			if events[0].Type != protocol.TypeAccepted {
				what = fmt.Sprintf("accepted after %s", events[0].Type)
			}
			return &Violation{NameAcceptedFirst, i, what + ": accepted must be the first event"}
		case i == 0 && e.Type != protocol.TypeAccepted && (e.Type != protocol.TypeFinalResult || e.Status != protocol.StatusError):
			return &Violation{NameAcceptedFirst, i, fmt.Sprintf("the run starts with %s %q, neither accepted nor a rejection (final_result error)", e.Type, e.Status)}
		}
	}
	return nil
}

// StartedBeforeStream reports whether streaming events come after started
// and before settled, and started comes once, right after the first event
// (accepted, by AcceptedFirst).
func StartedBeforeStream(events []RunEvent) error {
	for i, e := range events {
		switch {
		case e.Type == protocol.TypeStarted && i != 1:
			if j := before(events, protocol.TypeStarted, i); j >= 0 {
				return &Violation{NameStartedBeforeStream, i, fmt.Sprintf("started again (first at event %d)", j)}
			}
			return &Violation{NameStartedBeforeStream, i, fmt.Sprintf("started at event %d, not right after accepted", i)}
		case IsStreaming(e.Type):
			if j := before(events, protocol.TypeSettled, i); j >= 0 {
				return &Violation{NameStartedBeforeStream, i, fmt.Sprintf("%s after settled at event %d", e.Type, j)}
			}
			if before(events, protocol.TypeStarted, i) < 0 {
				return &Violation{NameStartedBeforeStream, i, fmt.Sprintf("%s before started", e.Type)}
			}
		}
	}
	return nil
}

// SettledBeforeFinal reports whether settled is written at most once and a
// final_result after accepted follows it and carries its status.
func SettledBeforeFinal(events []RunEvent) error {
	for i, e := range events {
		switch e.Type {
		case protocol.TypeSettled:
			if j := before(events, protocol.TypeSettled, i); j >= 0 {
				return &Violation{NameSettledBeforeFinal, i, fmt.Sprintf("settled again (first at event %d)", j)}
			}
		case protocol.TypeFinalResult:
			if before(events, protocol.TypeAccepted, i) < 0 {
				continue // a rejection: AcceptedFirst, RejectedHasNoAccepted
			}
			j := before(events, protocol.TypeSettled, i)
			if j < 0 {
				return &Violation{NameSettledBeforeFinal, i, "final_result of an accepted run without settled before it"}
			}
			if events[j].Status != e.Status {
				return &Violation{NameSettledBeforeFinal, i, fmt.Sprintf("final_result status %q, settled at event %d announced %q", e.Status, j, events[j].Status)}
			}
		}
	}
	return nil
}

// ExactlyOneFinal reports whether final_result, if written, is the last
// event, hence written at most once.
func ExactlyOneFinal(events []RunEvent) error {
	if j := before(events, protocol.TypeFinalResult, len(events)); j >= 0 && j+1 < len(events) {
		what := events[j+1].Type
		if what == protocol.TypeFinalResult {
			what = "a second final_result"
		}
		return &Violation{NameExactlyOneFinal, j + 1, fmt.Sprintf("%s after final_result at event %d", what, j)}
	}
	return nil
}

// RejectedHasNoAccepted reports whether a rejected run wrote no accepted. A
// transcript shows a rejection as a final_result with no settled before it
// (the lifecycle has no other way to write one); tla/RunLifecycle.tla knows
// which step rejected and so also catches a rejection that settles first.
func RejectedHasNoAccepted(events []RunEvent) error {
	for i, e := range events {
		if e.Type != protocol.TypeFinalResult || before(events, protocol.TypeSettled, i) >= 0 {
			continue
		}
		if j := before(events, protocol.TypeAccepted, i); j >= 0 {
			return &Violation{NameRejectedHasNoAccepted, i, fmt.Sprintf("final_result without settled (a rejection) after accepted at event %d", j)}
		}
	}
	return nil
}

// RunLifecycle checks RunTypeOK, AcceptedFirst, StartedBeforeStream,
// SettledBeforeFinal, ExactlyOneFinal and RejectedHasNoAccepted and joins
// their violations. On a transcript where they all hold, they hold on every
// prefix too, so a test may run RunLifecycle after every event. Together
// they admit exactly the prefixes of the transcripts fsm/run writes (with
// any streaming type for its stream effect).
func RunLifecycle(events []RunEvent) error {
	return errors.Join(
		RunTypeOK(events),
		AcceptedFirst(events),
		StartedBeforeStream(events),
		SettledBeforeFinal(events),
		ExactlyOneFinal(events),
		RejectedHasNoAccepted(events),
	)
}

// RunComplete reports whether the run is over: its last event is
// final_result. Unlike the others it does not hold on prefixes; with
// RunLifecycle it means the run wrote exactly one final_result, last. Its
// Violation points just past the transcript, where final_result is missing.
func RunComplete(events []RunEvent) error {
	if n := len(events); n == 0 || events[n-1].Type != protocol.TypeFinalResult {
		return &Violation{NameRunComplete, n, "the run has no final_result"}
	}
	return nil
}
