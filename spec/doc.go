// Package spec holds the protocol's executable invariants: pure Go
// predicates over a transcript of events, named like the invariants of the
// TLA+ specs in tla/ (tla/Session.tla: ExactlyOneTerminal, SeqGapless,
// NothingAfterClose, Serial). The TLA+ spec checks the protocol session
// model; these check what a real host wrote, in transcript, end-to-end and
// rapid tests.
//
// A transcript is the sequence of events a host wrote on stdout, in order,
// each reduced to a Frame. The predicates read requests out of it the way
// a client must (CONTRACT §4–§5): an event with seq 1 starts a request;
// any other event continues the latest request with the same request_id
// (null being one more id). Every predicate is prefix-closed, like a TLA+
// invariant: it holds for every prefix of a good transcript, so it can run
// after every event; Complete adds what holds only once the host exited 0.
//
// The run predicates (run.go: RunLifecycle and the invariants of
// tla/RunLifecycle.tla it joins, AcceptedFirst, StartedBeforeStream,
// SettledBeforeFinal, ExactlyOneFinal, RejectedHasNoAccepted) read one
// run's transcript instead: its events' types and statuses, each reduced to
// a RunEvent, with the session's framing left to the predicates above.
//
// The recovery predicates (recovery.go: Recovery and the invariants of
// tla/Recovery.tla a client can see, RetryCountWithinBudget,
// NetworkWaitNeverConsumesBudget, UncertaintySticky) read one run's
// transcript reduced to RecoveryEvents: the attempt, max_attempts and
// delay_ms of provider_retry and provider_waiting_for_network, and the
// usage_uncertain of model_step.
//
// Each predicate returns nil or a *Violation naming the invariant and the
// offending frame. The package has no state and does no I/O; it is safe for
// concurrent use.
//
// The directory also carries the documents the code cites: CONTRACT.md,
// what the host promises ("CONTRACT §N"), and DESIGN.md, how the code is
// built to keep it ("DESIGN §N"). citations_test.go at the repository root
// checks that every citation names a section that exists.
package spec
