package spec

import (
	"errors"
	"fmt"

	"octet.dev/host/protocol"
)

// Recovery as a client sees it (CONTRACT §12; tla/Recovery.tla,
// fsm/recovery): in a run transcript, each logical turn (one model call,
// ended by its model_step) may be replaced after retryable failures, each
// announced by provider_retry with attempt 1, 2, … up to max_attempts, and
// may wait for the network, each wait announced by
// provider_waiting_for_network with its own attempt count and no
// max_attempts. provider_usage_uncertain marks the session's usage as
// uncertain for good: every later model_step says usage_uncertain.
//
// The predicates below read a run transcript reduced to RecoveryEvents
// (every event of the run, in order; those of other types are passed
// over). They are prefix-closed, like the other predicates of the package.
// What the wire cannot show (whether a failed attempt was billed, so that
// the record had to come before its replacement) is checked on the machine
// itself, by tla/Recovery.tla's PersistBeforeReplace and fsm/recovery's
// tests.

// RecoveryEvent is one event of a run transcript as the recovery
// predicates read it: its type and the data fields they check.
type RecoveryEvent struct {
	Type protocol.EventType
	// Attempt is data.attempt of provider_retry and
	// provider_waiting_for_network.
	Attempt int
	// MaxAttempts is data.max_attempts of provider_retry; nil when the
	// event has none (as provider_waiting_for_network must not).
	MaxAttempts *int
	// DelayMS is data.delay_ms of provider_retry and
	// provider_waiting_for_network.
	DelayMS int64
	// UsageUncertain is data.usage_uncertain of model_step.
	UsageUncertain bool
}

// Names of the recovery invariants, as in tla/Recovery.tla.
const (
	NameRetryCountWithinBudget         = "RetryCountWithinBudget"
	NameNetworkWaitNeverConsumesBudget = "NetworkWaitNeverConsumesBudget"
	NameUncertaintySticky              = "UncertaintySticky"
)

// RetryCountWithinBudget reports whether every provider_retry carries
// max_attempts, the same within its turn, and an attempt in
// 1..max_attempts with a delay_ms ≥ 0: the budget is never exceeded.
func RetryCountWithinBudget(events []RecoveryEvent) error {
	var budget *int // max_attempts of the turn's first retry
	for i, e := range events {
		switch e.Type {
		case protocol.TypeModelStep:
			budget = nil
		case protocol.TypeProviderRetry:
			switch {
			case e.MaxAttempts == nil:
				return &Violation{NameRetryCountWithinBudget, i, "provider_retry without max_attempts"}
			case e.Attempt < 1 || e.Attempt > *e.MaxAttempts:
				return &Violation{NameRetryCountWithinBudget, i, fmt.Sprintf("provider_retry attempt %d outside 1..max_attempts %d", e.Attempt, *e.MaxAttempts)}
			case budget != nil && *budget != *e.MaxAttempts:
				return &Violation{NameRetryCountWithinBudget, i, fmt.Sprintf("max_attempts %d, earlier in the turn %d", *e.MaxAttempts, *budget)}
			case e.DelayMS < 0:
				return &Violation{NameRetryCountWithinBudget, i, fmt.Sprintf("provider_retry delay_ms %d", e.DelayMS)}
			}
			if budget == nil {
				budget = e.MaxAttempts
			}
		}
	}
	return nil
}

// NetworkWaitNeverConsumesBudget reports whether the two recovery counts
// stay apart within each turn: provider_retry attempts count the retries
// alone (1 + the retries before it in the turn, whatever waits came in
// between), and provider_waiting_for_network carries no max_attempts, a
// delay_ms ≥ 0 and an attempt counting the waits alone.
func NetworkWaitNeverConsumesBudget(events []RecoveryEvent) error {
	retries, waits := 0, 0
	for i, e := range events {
		switch e.Type {
		case protocol.TypeModelStep:
			retries, waits = 0, 0
		case protocol.TypeProviderRetry:
			retries++
			if e.Attempt != retries {
				return &Violation{NameNetworkWaitNeverConsumesBudget, i, fmt.Sprintf("provider_retry attempt %d after %d retries (and %d network waits) in the turn", e.Attempt, retries-1, waits)}
			}
		case protocol.TypeProviderWaitingForNetwork:
			waits++
			switch {
			case e.MaxAttempts != nil:
				return &Violation{NameNetworkWaitNeverConsumesBudget, i, fmt.Sprintf("provider_waiting_for_network with max_attempts %d: network waits have no count limit", *e.MaxAttempts)}
			case e.Attempt != waits:
				return &Violation{NameNetworkWaitNeverConsumesBudget, i, fmt.Sprintf("provider_waiting_for_network attempt %d after %d waits (and %d retries) in the turn", e.Attempt, waits-1, retries)}
			case e.DelayMS < 0:
				return &Violation{NameNetworkWaitNeverConsumesBudget, i, fmt.Sprintf("provider_waiting_for_network delay_ms %d", e.DelayMS)}
			}
		}
	}
	return nil
}

// UncertaintySticky reports whether, once provider_usage_uncertain was
// written, every later model_step says usage_uncertain: its figures are
// known subtotals.
func UncertaintySticky(events []RecoveryEvent) error {
	uncertain := -1
	for i, e := range events {
		switch {
		case e.Type == protocol.TypeProviderUsageUncertain && uncertain < 0:
			uncertain = i
		case e.Type == protocol.TypeModelStep && uncertain >= 0 && !e.UsageUncertain:
			return &Violation{NameUncertaintySticky, i, fmt.Sprintf("model_step with usage_uncertain false after provider_usage_uncertain at event %d", uncertain)}
		}
	}
	return nil
}

// Recovery checks RetryCountWithinBudget, NetworkWaitNeverConsumesBudget
// and UncertaintySticky and joins their violations. Like each of them it
// holds on every prefix of a transcript it holds on.
func Recovery(events []RecoveryEvent) error {
	return errors.Join(
		RetryCountWithinBudget(events),
		NetworkWaitNeverConsumesBudget(events),
		UncertaintySticky(events),
	)
}
