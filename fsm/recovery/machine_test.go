package recovery_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
)

// E builds expected effects tersely.
type E = recovery.Effect

func newMachine(t *testing.T, edit func(*recovery.Config)) *recovery.Machine {
	t.Helper()
	c := recovery.DefaultConfig()
	if edit != nil {
		edit(&c)
	}
	m, err := recovery.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func failed(f recovery.Facts, now int64, jitter float64) recovery.Input {
	return recovery.Input{Trigger: recovery.TrAttemptFailed, Facts: f, NowMS: now, Jitter: jitter}
}

func fired(now int64) recovery.Input {
	return recovery.Input{Trigger: recovery.TrTimerFired, NowMS: now}
}

var (
	start     = recovery.Input{Trigger: recovery.TrStart}
	timer     = recovery.Input{Trigger: recovery.TrTimerFired}
	succeeded = recovery.Input{Trigger: recovery.TrAttemptSucceeded}
)

// scenario fires the inputs in order and compares every step's effects.
type scenarioStep struct {
	in   recovery.Input
	want []E
}

func run(t *testing.T, m *recovery.Machine, steps []scenarioStep) {
	t.Helper()
	for i, s := range steps {
		got, err := m.Fire(s.in)
		if err != nil {
			t.Fatalf("step %d %s: %v", i, s.in.Trigger, err)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("step %d %s: effects (-want +got):\n%s", i, s.in.Trigger, diff)
		}
	}
}

func TestRetriesExhausted(t *testing.T) {
	m := newMachine(t, func(c *recovery.Config) { c.MaxAttempts = 2 })
	cut := recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before [DONE]"}
	r503 := with(status(503), func(f *recovery.Facts) { f.Message = "unavailable"; f.RetryAfterMS = 3000 })
	run(t, m, []scenarioStep{
		{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
		// A cut after content: billed, usage unknown; the record first.
		{failed(cut, 100, 0), []E{
			{Kind: recovery.EffPersistUsageUncertainty},
			{Kind: recovery.EffDiscardAttempt},
			{Kind: recovery.EffEmitRetry, Attempt: 1, MaxAttempts: 2, DelayMS: 250, Error: "stream ended before [DONE]"},
			{Kind: recovery.EffStartTimer, DelayMS: 250},
		}},
		{timer, []E{{Kind: recovery.EffStartAttempt, Attempt: 2}}},
		// A 503 with Retry-After: not billed; the server's delay.
		{failed(r503, 500, 0.9), []E{
			{Kind: recovery.EffDiscardAttempt},
			{Kind: recovery.EffEmitRetry, Attempt: 2, MaxAttempts: 2, DelayMS: 3000, Error: "HTTP 503: unavailable"},
			{Kind: recovery.EffStartTimer, DelayMS: 3000},
		}},
		{timer, []E{{Kind: recovery.EffStartAttempt, Attempt: 3}}},
		{failed(r503, 4000, 0), []E{
			{Kind: recovery.EffDiscardAttempt},
			{Kind: recovery.EffFail, Code: recovery.CodeRetriesExhausted, Message: "provider failed after 2 retries; last failure: HTTP 503: unavailable"},
		}},
	})
	if st := m.State(); st.Phase != recovery.Failed || st.Code != recovery.CodeRetriesExhausted || !st.Uncertain || st.Retries != 2 {
		t.Errorf("final state %+v", st)
	}
	if _, err := m.Fire(recovery.Input{Trigger: recovery.TrCancel}); err == nil {
		t.Error("cancel accepted after the outcome")
	}
}

func TestNetworkWaitDoesNotConsumeBudget(t *testing.T) {
	m := newMachine(t, func(c *recovery.Config) { c.MaxAttempts = 1 })
	down := recovery.Facts{Kind: recovery.FailConnect, Message: "dial tcp: connection refused"}
	steps := []scenarioStep{{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}}}
	// Ten waits, no ceiling: the delays back off to the 10 s cap.
	delays := []int64{500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000, 5000}
	now := int64(0)
	for i, d := range delays {
		steps = append(steps,
			scenarioStep{failed(down, now, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: i + 1, DelayMS: d, Error: "dial tcp: connection refused"},
				{Kind: recovery.EffStartTimer, DelayMS: d},
			}},
			scenarioStep{timer, []E{{Kind: recovery.EffStartAttempt, Attempt: i + 2}}})
		now += d + 10
	}
	// The network is back; a 429 takes the one retry there is.
	steps = append(steps,
		scenarioStep{failed(status(429), now, 0), []E{
			{Kind: recovery.EffDiscardAttempt},
			{Kind: recovery.EffEmitRetry, Attempt: 1, MaxAttempts: 1, DelayMS: 250, Error: "HTTP 429"},
			{Kind: recovery.EffStartTimer, DelayMS: 250},
		}},
		scenarioStep{timer, []E{{Kind: recovery.EffStartAttempt, Attempt: 12}}},
		scenarioStep{succeeded, []E{{Kind: recovery.EffSucceed}}})
	run(t, m, steps)
	if st := m.State(); st.Retries != 1 || st.NetworkWaits != 10 || st.Uncertain || st.Phase != recovery.Succeeded {
		t.Errorf("final state %+v", st)
	}
}

func TestNetworkWaitLimit(t *testing.T) {
	down := recovery.Facts{Kind: recovery.FailConnect, Message: "no such host"}
	t.Run("zero disables waiting", func(t *testing.T) {
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(0) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{failed(down, 1000, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffFail, Code: recovery.CodeNetworkWaitExceeded, Message: "network unavailable and network waiting is disabled: no such host"},
			}},
		})
	})
	t.Run("bounded", func(t *testing.T) {
		// 2.2 s allowance from the first outage at t=1000.
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(2200) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			// elapsed 0: first wait 500–1000 ms; jitter 0.9999 → 1000.
			{failed(down, 1000, 0.9999), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: 1, DelayMS: 1000, Error: "no such host"},
				{Kind: recovery.EffStartTimer, DelayMS: 1000},
			}},
			// The timer fires at 2000: 1200 ms left to open the request.
			{fired(2000), []E{{Kind: recovery.EffStartAttempt, Attempt: 2, OpenWithinMS: 1200}}},
			// elapsed 1100: the second wait (1000–2000 ms) would reach the
			// ceiling; its minimum, 1000 ms, ends before it.
			{failed(down, 2100, 0.9999), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: 2, DelayMS: 1000, Error: "no such host"},
				{Kind: recovery.EffStartTimer, DelayMS: 1000},
			}},
			{fired(3100), []E{{Kind: recovery.EffStartAttempt, Attempt: 3, OpenWithinMS: 100}}},
			// elapsed 2200: the third wait's minimum (1 s) is beyond the 0 ms
			// left: recovery stops rather than retrying early.
			{failed(down, 3200, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffFail, Code: recovery.CodeNetworkWaitExceeded, Message: "network unavailable for 2200 ms (limit 2200 ms): no such host"},
			}},
		})
	})
	t.Run("a stalled clock: the floor counts", func(t *testing.T) {
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(2200) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{failed(down, 0, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: 1, DelayMS: 500, Error: "no such host"},
				{Kind: recovery.EffStartTimer, DelayMS: 500},
			}},
			// A timer without a reading: the 500 ms waited count.
			{timer, []E{{Kind: recovery.EffStartAttempt, Attempt: 2, OpenWithinMS: 1700}}},
		})
	})
	t.Run("a late timer ends recovery", func(t *testing.T) {
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(2200) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{failed(down, 0, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: 1, DelayMS: 500, Error: "no such host"},
				{Kind: recovery.EffStartTimer, DelayMS: 500},
			}},
			{fired(2200), []E{{Kind: recovery.EffFail, Code: recovery.CodeNetworkWaitExceeded,
				Message: "max network wait reached: the 2200 ms allowed since the first outage were spent before the next attempt"}}},
		})
	})
	t.Run("minimum beyond the allowance", func(t *testing.T) {
		// 400 ms allowance: even the first wait's minimum (500 ms) does not fit.
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(400) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{failed(down, 0, 0.5), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffFail, Code: recovery.CodeNetworkWaitExceeded, Message: "network unavailable for 0 ms (limit 400 ms): no such host"},
			}},
		})
	})
	t.Run("measured from the first outage of the turn", func(t *testing.T) {
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(10_000) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{failed(down, 0, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: 1, DelayMS: 500, Error: "no such host"},
				{Kind: recovery.EffStartTimer, DelayMS: 500},
			}},
			{fired(500), []E{{Kind: recovery.EffStartAttempt, Attempt: 2, OpenWithinMS: 9500}}},
			{failed(status(500), 600, 0), []E{
				{Kind: recovery.EffPersistUsageUncertainty},
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitRetry, Attempt: 1, MaxAttempts: 4, DelayMS: 250, Error: "HTTP 500"},
				{Kind: recovery.EffStartTimer, DelayMS: 250},
			}},
			{fired(850), []E{{Kind: recovery.EffStartAttempt, Attempt: 3, OpenWithinMS: 9150}}},
			// A second outage 9.7 s after the first: 300 ms left, less than
			// the second wait's 1 s minimum.
			{failed(down, 9700, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffFail, Code: recovery.CodeNetworkWaitExceeded, Message: "network unavailable for 9700 ms (limit 10000 ms): no such host"},
			}},
		})
	})
	t.Run("retries after an outage fit the allowance", func(t *testing.T) {
		throttled := func(retryAfterMS int64) recovery.Facts {
			return recovery.Facts{Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true, RetryAfterMS: retryAfterMS, Message: "slow down"}
		}
		m := newMachine(t, func(c *recovery.Config) { c.MaxNetworkWaitMS = ptr(5_000) })
		run(t, m, []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			// No outage yet: a Retry-After of 20 s is honoured, the ceiling
			// is not armed.
			{failed(throttled(20_000), 0, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitRetry, Attempt: 1, MaxAttempts: 4, DelayMS: 20_000, Error: "HTTP 429: slow down"},
				{Kind: recovery.EffStartTimer, DelayMS: 20_000},
			}},
			{fired(20_000), []E{{Kind: recovery.EffStartAttempt, Attempt: 2}}},
			// The first outage arms the 5 s ceiling.
			{failed(down, 20_000, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitWaitingForNetwork, Attempt: 1, DelayMS: 500, Error: "no such host"},
				{Kind: recovery.EffStartTimer, DelayMS: 500},
			}},
			{fired(20_500), []E{{Kind: recovery.EffStartAttempt, Attempt: 3, OpenWithinMS: 4500}}},
			// A Retry-After of 2 s fits the 4.4 s left: honoured exactly.
			{failed(throttled(2_000), 20_600, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffEmitRetry, Attempt: 2, MaxAttempts: 4, DelayMS: 2_000, Error: "HTTP 429: slow down"},
				{Kind: recovery.EffStartTimer, DelayMS: 2_000},
			}},
			{fired(22_600), []E{{Kind: recovery.EffStartAttempt, Attempt: 4, OpenWithinMS: 2400}}},
			// A Retry-After of 3 s does not fit the 2.3 s left: recovery
			// stops at once rather than retrying early.
			{failed(throttled(3_000), 22_700, 0), []E{
				{Kind: recovery.EffDiscardAttempt},
				{Kind: recovery.EffFail, Code: recovery.CodeNetworkWaitExceeded,
					Message: "max network wait reached: a retry after 3000 ms does not fit the 2300 ms left of the 5000 ms allowed since the first outage; last failure: HTTP 429: slow down"},
			}},
		})
	})
	t.Run("the caller's value is copied", func(t *testing.T) {
		lim := int64(0)
		c := recovery.DefaultConfig()
		c.MaxNetworkWaitMS = &lim
		m, err := recovery.New(c)
		if err != nil {
			t.Fatal(err)
		}
		lim = 1 << 40
		if got := *m.Config().MaxNetworkWaitMS; got != 0 {
			t.Fatalf("config changed under the machine: %d", got)
		}
		mustFire(t, m, start)
		mustFire(t, m, failed(down, 0, 0))
		if m.State().Code != recovery.CodeNetworkWaitExceeded {
			t.Errorf("state %+v", m.State())
		}
	})
}

func TestFatalFailures(t *testing.T) {
	tests := []struct {
		name    string
		f       recovery.Facts
		persist bool
		code    protocol.Code
		msg     string
	}{
		{"auth", with(status(401), func(f *recovery.Facts) { f.Message = "invalid key [redacted]" }), false, recovery.CodeAuthFailed, "HTTP 401: invalid key [redacted]"},
		{"quota", with(status(429), func(f *recovery.Facts) { f.Code = "insufficient_quota" }), false, recovery.CodeQuotaExhausted, "HTTP 429 insufficient_quota"},
		{"overflow mid-stream", with(event("context_length_exceeded"), func(f *recovery.Facts) { f.ContentStarted = true; f.Message = "too long" }), true, recovery.CodeContextOverflow, "too long"},
		{"retry-after too long", with(retryAfter(120_000), func(f *recovery.Facts) { f.Message = "slow down" }), false, recovery.CodeRetryAfterTooLong,
			"provider asked to retry after 120000 ms, above the 60000 ms ceiling: HTTP 429: slow down"},
		{"decode", recovery.Facts{Kind: recovery.FailDecode, RequestWritten: true, Message: "invalid chunk JSON"}, false, recovery.CodeProviderError, "invalid chunk JSON"},
		{"canceled mid-stream", recovery.Facts{Kind: recovery.FailCanceled, RequestWritten: true, ContentStarted: true}, true, recovery.CodeCanceled, "provider: canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, nil)
			var want []E
			if tt.persist {
				want = append(want, E{Kind: recovery.EffPersistUsageUncertainty})
			}
			want = append(want, E{Kind: recovery.EffDiscardAttempt}, E{Kind: recovery.EffFail, Code: tt.code, Message: tt.msg})
			run(t, m, []scenarioStep{
				{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
				{failed(tt.f, 0, 0), want},
			})
			if st := m.State(); st.Code != tt.code || st.Uncertain != tt.persist || st.Retries != 0 {
				t.Errorf("state %+v", st)
			}
		})
	}
}

func TestCancelAndAbort(t *testing.T) {
	cancel := func(f recovery.Facts) recovery.Input { return recovery.Input{Trigger: recovery.TrCancel, Facts: f} }
	fail := E{Kind: recovery.EffFail, Code: recovery.CodeCanceled, Message: "canceled"}
	t.Run("idle", func(t *testing.T) {
		run(t, newMachine(t, nil), []scenarioStep{{cancel(recovery.Facts{}), []E{fail}}})
	})
	t.Run("attempt in flight, request written", func(t *testing.T) {
		run(t, newMachine(t, nil), []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{cancel(recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true}), []E{
				{Kind: recovery.EffPersistUsageUncertainty}, {Kind: recovery.EffDiscardAttempt}, fail,
			}},
		})
	})
	t.Run("attempt in flight, nothing written", func(t *testing.T) {
		run(t, newMachine(t, nil), []scenarioStep{
			{start, []E{{Kind: recovery.EffStartAttempt, Attempt: 1}}},
			{cancel(recovery.Facts{}), []E{{Kind: recovery.EffDiscardAttempt}, fail}},
		})
	})
	t.Run("backing off", func(t *testing.T) {
		m := newMachine(t, nil)
		mustFire(t, m, start)
		mustFire(t, m, failed(status(502), 0, 0))
		run(t, m, []scenarioStep{{cancel(recovery.Facts{RequestWritten: true}), []E{fail}}})
		if st := m.State(); !st.Uncertain || st.Code != recovery.CodeCanceled {
			t.Errorf("state %+v", st)
		}
	})
	t.Run("abort after a failed record", func(t *testing.T) {
		m := newMachine(t, nil)
		mustFire(t, m, start)
		mustFire(t, m, failed(recovery.Facts{Kind: recovery.FailIdleTimeout, RequestWritten: true}, 0, 0))
		if _, err := m.Fire(recovery.Input{Trigger: recovery.TrAbort}); err == nil {
			t.Fatal("abort without a code accepted")
		}
		run(t, m, []scenarioStep{{recovery.Input{Trigger: recovery.TrAbort, Code: "session_write_failed", Message: "disk full"},
			[]E{{Kind: recovery.EffFail, Code: "session_write_failed", Message: "disk full"}}}})
	})
	t.Run("abort in flight", func(t *testing.T) {
		m := newMachine(t, nil)
		mustFire(t, m, start)
		run(t, m, []scenarioStep{{recovery.Input{Trigger: recovery.TrAbort, Code: "internal_error"},
			[]E{{Kind: recovery.EffDiscardAttempt}, {Kind: recovery.EffFail, Code: "internal_error"}}}})
	})
}

func TestRefusedInputs(t *testing.T) {
	m := newMachine(t, nil)
	for _, in := range []recovery.Input{timer, succeeded, failed(status(500), 0, 0), {Trigger: "bogus"}} {
		if effs, err := m.Fire(in); err == nil || effs != nil {
			t.Errorf("idle accepted %s: %v", in.Trigger, effs)
		} else if !strings.Contains(err.Error(), "not permitted") {
			t.Errorf("error %v", err)
		}
	}
	if got := m.Permitted(recovery.Input{Code: "x"}); !cmp.Equal(got, []recovery.Trigger{recovery.TrStart, recovery.TrCancel, recovery.TrAbort}) {
		t.Errorf("idle permits %v", got)
	}
	if got := m.Permitted(recovery.Input{}); !cmp.Equal(got, []recovery.Trigger{recovery.TrStart, recovery.TrCancel}) {
		t.Errorf("idle permits %v without an abort code", got)
	}
	if m.State() != (recovery.State{Phase: recovery.Idle}) {
		t.Errorf("refused inputs changed the state: %+v", m.State())
	}
}

func TestFromStateRefusesUnknownPhase(t *testing.T) {
	if _, err := recovery.FromState(recovery.DefaultConfig(), recovery.State{}); err == nil {
		t.Error("FromState accepted the zero State")
	}
}

func TestTracer(t *testing.T) {
	m := newMachine(t, nil)
	var got []fsm.Transition
	m.SetTracer(func(tr fsm.Transition) { got = append(got, tr) })
	mustFire(t, m, start)
	mustFire(t, m, failed(status(429), 0, 0))
	mustFire(t, m, timer)
	mustFire(t, m, succeeded)
	st := func(phase string, retries int) string {
		return `{"Phase":"` + phase + `","Retries":` + string(rune('0'+retries)) +
			`,"NetworkWaits":0,"Outage":false,"OutageStartMS":0,"OutageFloorMS":0,"Uncertain":false,"Code":""}`
	}
	want := []fsm.Transition{
		{Machine: "recovery", From: "idle", To: "attempting", Trigger: "start", FromState: st("idle", 0), ToState: st("attempting", 0)},
		{Machine: "recovery", From: "attempting", To: "backing_off", Trigger: "attempt_failed", FromState: st("attempting", 0), ToState: st("backing_off", 1)},
		{Machine: "recovery", From: "backing_off", To: "attempting", Trigger: "timer_fired", FromState: st("backing_off", 1), ToState: st("attempting", 1)},
		{Machine: "recovery", From: "attempting", To: "succeeded", Trigger: "attempt_succeeded", FromState: st("attempting", 1), ToState: st("succeeded", 1)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
}
