package spec_test

import (
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

func maxA(n int) *int { return &n }

func retryEv(attempt, max int) spec.RecoveryEvent {
	return spec.RecoveryEvent{Type: protocol.TypeProviderRetry, Attempt: attempt, MaxAttempts: maxA(max), DelayMS: 500}
}

func waitEv(attempt int) spec.RecoveryEvent {
	return spec.RecoveryEvent{Type: protocol.TypeProviderWaitingForNetwork, Attempt: attempt, DelayMS: 1000}
}

var (
	uncertainEv = spec.RecoveryEvent{Type: protocol.TypeProviderUsageUncertain}
	stepKnown   = spec.RecoveryEvent{Type: protocol.TypeModelStep}
	stepSub     = spec.RecoveryEvent{Type: protocol.TypeModelStep, UsageUncertain: true}
	deltaEv     = spec.RecoveryEvent{Type: "model_delta"}
)

var recoveryPredicates = []predicate[spec.RecoveryEvent]{
	{spec.NameRetryCountWithinBudget, spec.RetryCountWithinBudget},
	{spec.NameNetworkWaitNeverConsumesBudget, spec.NetworkWaitNeverConsumesBudget},
	{spec.NameUncertaintySticky, spec.UncertaintySticky},
}

var recoveryTranscripts = []struct {
	name   string
	events []spec.RecoveryEvent
	want   map[string]int // invariant -> index of the violation
}{
	{"empty", nil, nil},
	{"no recovery", []spec.RecoveryEvent{deltaEv, stepKnown, deltaEv, stepKnown}, nil},
	{"retries within budget", []spec.RecoveryEvent{deltaEv, retryEv(1, 2), deltaEv, retryEv(2, 2), deltaEv, stepKnown}, nil},
	{"waits and retries interleaved", []spec.RecoveryEvent{
		waitEv(1), waitEv(2), retryEv(1, 4), waitEv(3), retryEv(2, 4), stepKnown,
	}, nil},
	{"counts restart each turn", []spec.RecoveryEvent{
		retryEv(1, 2), retryEv(2, 2), waitEv(1), stepKnown, retryEv(1, 2), waitEv(1), stepKnown,
	}, nil},
	{"uncertain then subtotals", []spec.RecoveryEvent{uncertainEv, retryEv(1, 4), stepSub, stepSub}, nil},
	{"subtotals before any uncertainty", []spec.RecoveryEvent{stepSub, stepKnown}, nil},

	{"retry above the budget", []spec.RecoveryEvent{retryEv(1, 2), retryEv(2, 2), retryEv(3, 2)}, map[string]int{
		spec.NameRetryCountWithinBudget: 2,
	}},
	{"retry with a zero budget", []spec.RecoveryEvent{retryEv(1, 0)}, map[string]int{spec.NameRetryCountWithinBudget: 0}},
	{"retry without max_attempts", []spec.RecoveryEvent{{Type: protocol.TypeProviderRetry, Attempt: 1}}, map[string]int{
		spec.NameRetryCountWithinBudget: 0,
	}},
	{"budget changes mid-turn", []spec.RecoveryEvent{retryEv(1, 2), retryEv(2, 3)}, map[string]int{spec.NameRetryCountWithinBudget: 1}},
	{"negative retry delay", []spec.RecoveryEvent{{Type: protocol.TypeProviderRetry, Attempt: 1, MaxAttempts: maxA(2), DelayMS: -1}}, map[string]int{
		spec.NameRetryCountWithinBudget: 0,
	}},
	{"wait consumed the budget", []spec.RecoveryEvent{waitEv(1), retryEv(2, 4)}, map[string]int{
		spec.NameNetworkWaitNeverConsumesBudget: 1,
	}},
	{"retry skipped a number", []spec.RecoveryEvent{retryEv(1, 4), retryEv(3, 4)}, map[string]int{
		spec.NameNetworkWaitNeverConsumesBudget: 1,
	}},
	{"retry count not restarted", []spec.RecoveryEvent{retryEv(1, 4), stepKnown, retryEv(2, 4)}, map[string]int{
		spec.NameNetworkWaitNeverConsumesBudget: 2,
	}},
	{"wait with max_attempts", []spec.RecoveryEvent{{Type: protocol.TypeProviderWaitingForNetwork, Attempt: 1, MaxAttempts: maxA(4)}}, map[string]int{
		spec.NameNetworkWaitNeverConsumesBudget: 0,
	}},
	{"wait counted with the retries", []spec.RecoveryEvent{retryEv(1, 4), waitEv(2)}, map[string]int{
		spec.NameNetworkWaitNeverConsumesBudget: 1,
	}},
	{"negative wait delay", []spec.RecoveryEvent{{Type: protocol.TypeProviderWaitingForNetwork, Attempt: 1, DelayMS: -5}}, map[string]int{
		spec.NameNetworkWaitNeverConsumesBudget: 0,
	}},
	{"uncertainty cleared", []spec.RecoveryEvent{uncertainEv, stepSub, deltaEv, stepKnown}, map[string]int{
		spec.NameUncertaintySticky: 3,
	}},
}

func TestRecoveryPredicates(t *testing.T) {
	for _, tt := range recoveryTranscripts {
		for _, p := range recoveryPredicates {
			checkVerdict(t, tt.name, p.name, "event", p.check(tt.events), tt.want)
		}
		err := spec.Recovery(tt.events)
		for _, p := range recoveryPredicates {
			checkMentions(t, tt.name, "Recovery", p.name, err, tt.want)
		}
	}
}

// Every recovery predicate is prefix-closed: checked on every transcript of
// up to 5 events over an alphabet of the events they read.
func TestRecoveryPrefixClosed(t *testing.T) {
	alpha := []spec.RecoveryEvent{
		retryEv(1, 2), retryEv(2, 2), retryEv(3, 2), retryEv(2, 3), waitEv(1), waitEv(2),
		{Type: protocol.TypeProviderWaitingForNetwork, Attempt: 1, MaxAttempts: maxA(2)}, uncertainEv, stepKnown, stepSub, deltaEv,
	}
	checked := checkPrefixClosed(t, alpha, recoveryPredicates, func(string) bool { return false })
	t.Logf("%d (predicate, transcript) pairs that hold, prefixes checked", checked)
}
