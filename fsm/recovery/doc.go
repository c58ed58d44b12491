// Package recovery decides what happens after a provider attempt fails, for
// one logical turn (one model call the run needs an answer to): wait for the
// network, retry, or give up (CONTRACT §12, DESIGN §2). It owns three
// things, all pure:
//
//   - Classify maps the facts the provider edge collected about a failure
//     (Facts) to a Class: NetworkWait, Retry, or Fatal with a stable error
//     code. UsageUncertain says whether the failed attempt may have been
//     billed without its usage being known.
//   - Delay computes how long to wait before the next attempt: the
//     server's Retry-After when it gave one, else exponential backoff with
//     jitter taken from an injected number (Policy).
//   - Machine is the turn's recovery machine (tla/Recovery.tla is its
//     spec). It takes inputs (Start, AttemptFailed with facts, clock and
//     jitter, AttemptSucceeded, TimerFired, Cancel, Abort) and returns
//     effects as data, in a documented order, that the run's driver
//     performs. One function decides every step (where it leads, the
//     state after it, its effects); the machine's
//     github.com/qmuntal/stateless table, with external storage through
//     fsm/internal/machine, is derived from it. Builds with the
//     invariants tag check every step against the effect order below.
//
// # Two machines, never mixed
//
// Retry is finite: a failure after request bytes may have reached the
// provider (HTTP 408/409/425/429/5xx/529, an error event or a cut before
// the stream's terminal event, an idle timeout) replaces the attempt at
// most Config.MaxAttempts times per turn (default 4), each announced by
// provider_retry {attempt, max_attempts, delay_ms, error} with attempt
// 1..max_attempts.
//
// Network wait has no count limit: a positively identified outage before
// any request byte was written (FailConnect with RequestWritten false:
// DNS failure, connection refused, network unreachable) is announced by
// provider_waiting_for_network {attempt, delay_ms, error}, with its own
// 1-based attempt count, and never consumes the retry budget. It is
// bounded only by the network-wait ceiling below and by cancellation.
// With no ceiling an outage that never ends is an intended endless wait;
// the embedder's cancellation (process group, context) ends it.
//
// # The network-wait ceiling
//
// Config.MaxNetworkWaitMS (nil: no ceiling, the default; 0: waiting
// disabled, an outage fails the turn at once) is armed by the turn's first
// outage and from then on bounds the turn's whole recovery, measured from
// that outage (CONTRACT §12, §15):
//
//   - every later wait and every later retry, a server's Retry-After
//     included, must end strictly before the ceiling. A delay whose
//     minimum (the backoff's lower end; a Retry-After is exact, its own
//     minimum) does not fit what is left stops recovery at once with
//     network_wait_exceeded: never an early retry. A jittered delay that
//     would reach the ceiling is replaced by its minimum, so the attempt
//     after it keeps some of the allowance;
//   - the opening of every later request (dial and TLS handshake) gets
//     only what is left: EffStartAttempt carries it as OpenWithinMS. An
//     opening cut by it is an outage at the ceiling, which ends the turn
//     with network_wait_exceeded; a timer that fires after the allowance
//     is spent ends it without an attempt.
//
// Time spent streaming a response is not bounded (a provider body's own
// deadlines are the provider edge's), but it counts: a retry after a long
// stream finds less, or nothing, left. Before the first outage the
// ceiling plays no part.
//
// # Effect order
//
// A failed attempt's step returns, in this order:
//
//  1. PersistUsageUncertainty, when UsageUncertain(facts): durably append
//     the session's usage_uncertainty record, then emit
//     provider_usage_uncertain. It comes before anything that replaces or
//     abandons the attempt (CONTRACT §12: "before replacing the attempt").
//     If the append fails, the driver performs none of the later effects
//     and fires Abort instead.
//  2. DiscardAttempt: drop every provisional output of the failed attempt
//     (text, reasoning, media, tool calls not yet committed); committed
//     results stay.
//  3. Either EmitRetry + StartTimer (backing off), or
//     EmitWaitingForNetwork + StartTimer (waiting), or Fail (the outcome).
//
// TimerFired then returns StartAttempt (or, with the ceiling armed and
// spent, Fail). AttemptSucceeded returns Succeed.
// Every turn ends with exactly one outcome effect, Succeed or Fail, and
// the machine accepts nothing after it.
//
// # Time and randomness
//
// The machine never reads a clock or a random source: AttemptFailed
// carries NowMS (a monotonic clock reading, in milliseconds, taken when
// the attempt failed; TimerFired carries one taken when it fired) and Jitter (a number in [0, 1) from the driver's
// seeded source), so a recorded trace replays exactly.
//
// # Concurrency
//
// A Machine is owned by one goroutine (the run's driver). Classify,
// UsageUncertain, Delay and DefaultConfig are safe for concurrent use.
package recovery
