//go:build invariants

package recovery

import "fmt"

// checkStep panics when a step Fire took breaks what the package documents
// about steps (go test -tags invariants; a no-op in production builds):
// the effect order, one outcome exactly when the turn ends, the code of a
// failed turn, the bounds and monotonicity of the counters.
func checkStep(cfg Config, from State, in Input, to State, effs []Effect) {
	fail := func(format string, args ...any) {
		panic(fmt.Sprintf("fsm/recovery: %s from %+v on %+v to %+v with %+v: ", in.Trigger, from, in, to, effs) + fmt.Sprintf(format, args...))
	}
	if len(effs) == 0 {
		fail("a step without effects")
	}
	for i, e := range effs {
		outcome := e.Kind == EffSucceed || e.Kind == EffFail
		if outcome != (i == len(effs)-1 && to.Phase.Terminal()) {
			fail("effect %d (%s): an outcome must be the last effect of exactly the steps that end the turn", i, e.Kind)
		}
		if e.Kind == EffPersistUsageUncertainty && i != 0 {
			fail("usage uncertainty must be persisted before anything else")
		}
	}
	if (to.Phase == Failed) != (to.Code != "") {
		fail("State.Code must be set exactly in Failed")
	}
	if to.Retries > cfg.MaxAttempts || to.Retries < from.Retries || to.NetworkWaits < from.NetworkWaits {
		fail("retry and wait counters must grow within the budget")
	}
	if from.Uncertain && !to.Uncertain {
		fail("usage uncertainty is sticky")
	}
	last := effs[len(effs)-1]
	switch to.Phase {
	case Attempting:
		if len(effs) != 1 || last.Kind != EffStartAttempt || last.Attempt != to.attempt() {
			fail("entering Attempting starts attempt %d and does nothing else", to.attempt())
		}
		armed := to.Outage && cfg.MaxNetworkWaitMS != nil
		if last.OpenWithinMS < 0 || armed != (last.OpenWithinMS > 0) {
			fail("an attempt's opening is bounded (OpenWithinMS > 0) exactly when the ceiling is armed")
		}
		if armed && satAdd(to.OutageFloorMS, last.OpenWithinMS) > *cfg.MaxNetworkWaitMS {
			fail("an attempt's opening ends past the ceiling")
		}
	case BackingOff, WaitingForNetwork:
		announce := EffEmitRetry
		if to.Phase == WaitingForNetwork {
			announce = EffEmitWaitingForNetwork
		}
		if len(effs) < 2 || effs[len(effs)-2].Kind != announce || last.Kind != EffStartTimer || effs[len(effs)-2].DelayMS != last.DelayMS {
			fail("a wait is announced by %s, then its timer starts with the same delay", announce)
		}
		if to.Outage && cfg.MaxNetworkWaitMS != nil && to.OutageFloorMS >= *cfg.MaxNetworkWaitMS {
			fail("a wait or retry after the first outage must end before the ceiling")
		}
	}
}
