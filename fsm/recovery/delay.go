package recovery

import (
	"errors"
	"fmt"
	"math"
)

// Backoff is an exponential backoff with "equal jitter": the n-th delay
// (n from 1) has the ceiling e = min(CapMS, BaseMS·Factor^(n-1)) and is
// drawn uniformly from the whole milliseconds in [e/2, e] by the jitter
// input. The lower end e/2 is the attempt's minimum delay; it is at least
// 1 ms (BaseMS ≥ 2), so every wait lets time pass.
type Backoff struct {
	BaseMS int64 // ceiling of the first delay; ≥ 2
	Factor int64 // growth per attempt; ≥ 1 (1 is a constant delay)
	CapMS  int64 // largest ceiling; ≥ BaseMS
}

// Policy is how long recovery waits.
type Policy struct {
	// Retry paces replacements after retryable failures without a
	// Retry-After. Default 500 ms, ×2, capped at 30 s: 0.25–0.5 s,
	// 0.5–1 s, 1–2 s, 2–4 s for the default budget of 4.
	Retry Backoff
	// Network paces network waits. Default 1 s, ×2, capped at 10 s: an
	// outage is polled at most every 5–10 s once it lasts, so recovery
	// follows the network back within seconds.
	Network Backoff
	// RetryAfterCeilingMS is the longest server-requested delay recovery
	// honours (default 60 s). A Retry-After above it makes the failure
	// fatal (retry_after_too_long) rather than silently sleeping for
	// minutes or retrying early against the server's wish.
	RetryAfterCeilingMS int64
}

// Defaults (CONTRACT §12; DESIGN §2). See Policy and Config.
const (
	DefaultMaxAttempts         = 4
	DefaultRetryBaseMS         = 500
	DefaultRetryCapMS          = 30_000
	DefaultNetworkBaseMS       = 1_000
	DefaultNetworkCapMS        = 10_000
	DefaultBackoffFactor       = 2
	DefaultRetryAfterCeilingMS = 60_000
)

// DefaultPolicy returns the default delays.
func DefaultPolicy() Policy {
	return Policy{
		Retry:               Backoff{BaseMS: DefaultRetryBaseMS, Factor: DefaultBackoffFactor, CapMS: DefaultRetryCapMS},
		Network:             Backoff{BaseMS: DefaultNetworkBaseMS, Factor: DefaultBackoffFactor, CapMS: DefaultNetworkCapMS},
		RetryAfterCeilingMS: DefaultRetryAfterCeilingMS,
	}
}

func (b Backoff) validate(name string) error {
	var errs []error
	if b.BaseMS < 2 {
		errs = append(errs, fmt.Errorf("recovery: %s.BaseMS %d, want ≥ 2", name, b.BaseMS))
	}
	if b.Factor < 1 {
		errs = append(errs, fmt.Errorf("recovery: %s.Factor %d, want ≥ 1", name, b.Factor))
	}
	if b.CapMS < b.BaseMS {
		errs = append(errs, fmt.Errorf("recovery: %s.CapMS %d, want ≥ BaseMS %d", name, b.CapMS, b.BaseMS))
	}
	return errors.Join(errs...)
}

// Validate reports every problem of p at once.
func (p Policy) Validate() error {
	var errs []error
	errs = append(errs, p.Retry.validate("Retry"), p.Network.validate("Network"))
	if p.RetryAfterCeilingMS < 0 {
		errs = append(errs, fmt.Errorf("recovery: RetryAfterCeilingMS %d, want ≥ 0", p.RetryAfterCeilingMS))
	}
	return errors.Join(errs...)
}

// ceiling is the n-th delay's ceiling min(CapMS, BaseMS·Factor^(n-1)),
// without overflow.
func (b Backoff) ceiling(n int) int64 {
	e := b.BaseMS
	for i := 1; i < n && e < b.CapMS; i++ {
		if b.Factor <= 1 {
			break
		}
		if e > b.CapMS/b.Factor {
			e = b.CapMS
			break
		}
		e *= b.Factor
	}
	return min(e, b.CapMS)
}

// delay is the n-th delay for jitter j: a whole number of milliseconds in
// [e/2, e], j = 0 giving the minimum e/2.
func (b Backoff) delay(n int, j float64) int64 {
	e := b.ceiling(max(n, 1))
	lo, hi := e/2, e
	switch {
	case math.IsNaN(j) || j < 0:
		j = 0
	case j >= 1:
		return hi
	}
	d := lo + int64(j*float64(hi-lo+1))
	return min(max(d, lo), hi)
}

// Delay is how long to wait before replacing an attempt that failed with f,
// when that replacement is the attempt-th of its kind (1-based: the retry
// number for Retry, the network-wait number for NetworkWait). jitter is a
// number in [0, 1) from the driver's seeded source (NaN and negatives count
// as 0, 1 and above as just below 1); jitter 0 gives the minimum delay.
//
//   - Retry with RetryAfterMS > 0: exactly RetryAfterMS (the server's wish,
//     no jitter, no cap), unless it exceeds RetryAfterCeilingMS: then fatal
//     is true (the turn fails with retry_after_too_long).
//   - Retry without one: p.Retry's backoff.
//   - NetworkWait: p.Network's backoff (an unanswered connection has no
//     Retry-After).
//   - Fatal: fatal is true; there is nothing to wait for.
func Delay(p Policy, f Facts, attempt int, jitter float64) (ms int64, fatal bool) {
	switch Classify(f).Kind {
	case NetworkWait:
		return p.Network.delay(attempt, jitter), false
	case Retry:
		if f.RetryAfterMS > 0 {
			if f.RetryAfterMS > p.RetryAfterCeilingMS {
				return 0, true
			}
			return f.RetryAfterMS, false
		}
		return p.Retry.delay(attempt, jitter), false
	}
	return 0, true
}
