package recovery_test

// A rapid model of the machine: random configurations (retry budgets
// including 0, max network waits nil, 0 or bounded, random backoff
// policies) and random input sequences (every trigger in every phase, every
// failure kind with random statuses, codes, Retry-After values, clock
// readings that may stall or go backwards, jitter anywhere in [0, 1]). A
// plain reference model, written from the contract rather than from the
// machine, predicts each step; after every step the invariants of
// tla/Recovery.tla hold on the real machine: the retry count never exceeds
// the budget, network waits never consume it, uncertainty once set never
// clears, PersistUsageUncertainty precedes every replacement effect of its
// step, and the turn has at most one outcome, exactly one once over, and
// nothing after it. Every test case ends the turn (cancelling it if the
// random inputs did not) and requires exactly one outcome.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

var (
	allKinds = []recovery.FailKind{
		recovery.FailConnect, recovery.FailHTTPStatus, recovery.FailStreamCut, recovery.FailIdleTimeout,
		recovery.FailErrorEvent, recovery.FailDecode, recovery.FailCanceled, "mystery",
	}
	someStatuses = []int{0, 200, 400, 401, 402, 403, 404, 408, 409, 413, 418, 422, 425, 429, 500, 502, 503, 504, 529, 599, 600}
	someCodes    = []string{
		"", "insufficient_quota", "context_length_exceeded", "overloaded_error", "server_error", "api_error",
		"rate_limit_exceeded", "invalid_request_error", "authentication_error", "not_found_error", "request_too_large",
		"quota_exceeded", "model_context_window_exceeded", "invalid_api_key", "whatever",
	}
	someMessages = []string{"", "boom", "prompt is too long: 999999 tokens", "dial tcp: connection refused"}
)

func genConfig(t *rapid.T) recovery.Config {
	c := recovery.DefaultConfig()
	c.MaxAttempts = rapid.IntRange(0, 6).Draw(t, "max_attempts")
	switch rapid.IntRange(0, 3).Draw(t, "wait_kind") {
	case 0:
		c.MaxNetworkWaitMS = nil
	case 1:
		c.MaxNetworkWaitMS = ptr(0)
	default:
		c.MaxNetworkWaitMS = ptr(rapid.Int64Range(1, 120_000).Draw(t, "max_wait_ms"))
	}
	if rapid.Bool().Draw(t, "random_policy") {
		backoff := func(name string) recovery.Backoff {
			base := rapid.Int64Range(2, 5_000).Draw(t, name+"_base")
			return recovery.Backoff{
				BaseMS: base,
				Factor: rapid.Int64Range(1, 4).Draw(t, name+"_factor"),
				CapMS:  rapid.Int64Range(base, 120_000).Draw(t, name+"_cap"),
			}
		}
		c.Policy = recovery.Policy{
			Retry:               backoff("retry"),
			Network:             backoff("network"),
			RetryAfterCeilingMS: rapid.Int64Range(0, 120_000).Draw(t, "ceiling"),
		}
	}
	return c
}

func genFacts(t *rapid.T, ceiling int64) recovery.Facts {
	f := recovery.Facts{
		Kind:           rapid.SampledFrom(allKinds).Draw(t, "kind"),
		Code:           rapid.SampledFrom(someCodes).Draw(t, "code"),
		Message:        rapid.SampledFrom(someMessages).Draw(t, "message"),
		RequestWritten: rapid.Bool().Draw(t, "written"),
		ContentStarted: rapid.Bool().Draw(t, "content"),
	}
	if rapid.Bool().Draw(t, "any_status") {
		f.Status = rapid.IntRange(0, 700).Draw(t, "status")
	} else {
		f.Status = rapid.SampledFrom(someStatuses).Draw(t, "status")
	}
	switch rapid.IntRange(0, 4).Draw(t, "retry_after_kind") {
	case 0:
		f.RetryAfterMS = 0
	case 1:
		f.RetryAfterMS = rapid.Int64Range(1, max(ceiling, 1)).Draw(t, "retry_after_ms")
	case 2:
		f.RetryAfterMS = ceiling + rapid.Int64Range(0, 1).Draw(t, "retry_after_edge")
	case 3:
		f.RetryAfterMS = rapid.Int64Range(ceiling+1, math.MaxInt64/2).Draw(t, "retry_after_huge")
	default:
		f.RetryAfterMS = -rapid.Int64Range(1, 1000).Draw(t, "retry_after_negative")
	}
	return f
}

// refModel is the reference: the turn as CONTRACT §12 and the package doc
// describe it, computed without the machine.
type refModel struct {
	cfg       recovery.Config
	phase     recovery.Phase
	retries   int
	waits     int
	outage    bool
	start     int64
	floor     int64
	uncertain bool
	code      protocol.Code
}

// effect kinds that replace or abandon an attempt.
var replacing = []recovery.EffectKind{
	recovery.EffDiscardAttempt, recovery.EffEmitRetry, recovery.EffEmitWaitingForNetwork,
	recovery.EffStartTimer, recovery.EffStartAttempt, recovery.EffFail,
}

func (r *refModel) live() bool { return !r.phase.Terminal() }

func (r *refModel) fail(effs []recovery.EffectKind, code protocol.Code) []recovery.EffectKind {
	r.phase, r.code = recovery.Failed, code
	return append(effs, recovery.EffFail)
}

// abandon: the record (when billed) before the discard.
func (r *refModel) abandon(f recovery.Facts) []recovery.EffectKind {
	var effs []recovery.EffectKind
	if recovery.UsageUncertain(f) {
		r.uncertain = true
		effs = append(effs, recovery.EffPersistUsageUncertainty)
	}
	return append(effs, recovery.EffDiscardAttempt)
}

// allowance is what the ceiling leaves at the reading now, and whether it
// is armed (a ceiling is set and the turn has had its first outage).
func (r *refModel) allowance(now int64) (elapsed, left int64, armed bool) {
	elapsed = r.floor
	if now > r.start && now-r.start > elapsed {
		elapsed = now - r.start
	}
	lim := r.cfg.MaxNetworkWaitMS
	if !r.outage || lim == nil {
		return elapsed, 0, false
	}
	return elapsed, max(*lim-elapsed, 0), true
}

// fit is the ceiling's rule for a delay d of minimum lo: it must end
// strictly before the ceiling; a jittered delay that does not is replaced
// by its minimum; a minimum that does not either stops recovery.
func fit(d, lo, left int64) (int64, bool) {
	if lo >= left {
		return 0, false
	}
	if d >= left {
		return lo, true
	}
	return d, true
}

// step predicts in: whether it is accepted, the effect kinds, for waits
// and retries the delay, and for a started attempt its opening bound.
func (r *refModel) step(in recovery.Input) (ok bool, effs []recovery.EffectKind, delay int64) {
	if !r.live() {
		return false, nil, 0
	}
	switch in.Trigger {
	case recovery.TrStart:
		if r.phase != recovery.Idle {
			return false, nil, 0
		}
		r.phase = recovery.Attempting
		return true, []recovery.EffectKind{recovery.EffStartAttempt}, 0
	case recovery.TrAttemptSucceeded:
		if r.phase != recovery.Attempting {
			return false, nil, 0
		}
		r.phase = recovery.Succeeded
		return true, []recovery.EffectKind{recovery.EffSucceed}, 0
	case recovery.TrTimerFired:
		if r.phase != recovery.BackingOff && r.phase != recovery.WaitingForNetwork {
			return false, nil, 0
		}
		// The opening bound is the delay slot's value here.
		_, left, armed := r.allowance(in.NowMS)
		if armed && left <= 0 {
			return true, r.fail(nil, recovery.CodeNetworkWaitExceeded), 0
		}
		r.phase = recovery.Attempting
		return true, []recovery.EffectKind{recovery.EffStartAttempt}, left
	case recovery.TrCancel:
		if r.phase == recovery.Attempting {
			f := in.Facts
			f.Kind = recovery.FailCanceled
			effs = r.abandon(f)
		}
		return true, r.fail(effs, recovery.CodeCanceled), 0
	case recovery.TrAbort:
		if in.Code == "" {
			return false, nil, 0
		}
		if r.phase == recovery.Attempting {
			effs = []recovery.EffectKind{recovery.EffDiscardAttempt}
		}
		return true, r.fail(effs, in.Code), 0
	case recovery.TrAttemptFailed:
		if r.phase != recovery.Attempting {
			return false, nil, 0
		}
	default:
		return false, nil, 0
	}
	f := in.Facts
	effs = r.abandon(f)
	c := recovery.Classify(f)
	switch c.Kind {
	case recovery.Fatal:
		return true, r.fail(effs, c.Code), 0
	case recovery.Retry:
		if r.retries == r.cfg.MaxAttempts {
			return true, r.fail(effs, recovery.CodeRetriesExhausted), 0
		}
		if f.RetryAfterMS > r.cfg.Policy.RetryAfterCeilingMS {
			return true, r.fail(effs, recovery.CodeRetryAfterTooLong), 0
		}
		d, _ := recovery.Delay(r.cfg.Policy, f, r.retries+1, in.Jitter)
		if elapsed, left, armed := r.allowance(in.NowMS); armed {
			lo, _ := recovery.Delay(r.cfg.Policy, f, r.retries+1, 0)
			var fits bool
			if d, fits = fit(d, lo, left); !fits {
				return true, r.fail(effs, recovery.CodeNetworkWaitExceeded), 0
			}
			r.floor = elapsed + d
		}
		r.retries++
		r.phase = recovery.BackingOff
		return true, append(effs, recovery.EffEmitRetry, recovery.EffStartTimer), d
	}
	// Network wait.
	if !r.outage {
		r.outage, r.start = true, in.NowMS
	}
	d, _ := recovery.Delay(r.cfg.Policy, f, r.waits+1, in.Jitter)
	elapsed, left, armed := r.allowance(in.NowMS)
	if armed {
		if *r.cfg.MaxNetworkWaitMS == 0 {
			return true, r.fail(effs, recovery.CodeNetworkWaitExceeded), 0
		}
		lo, _ := recovery.Delay(r.cfg.Policy, f, r.waits+1, 0)
		var fits bool
		if d, fits = fit(d, lo, left); !fits {
			return true, r.fail(effs, recovery.CodeNetworkWaitExceeded), 0
		}
	}
	r.waits++
	r.floor = elapsed + d
	r.phase = recovery.WaitingForNetwork
	return true, append(effs, recovery.EffEmitWaitingForNetwork, recovery.EffStartTimer), d
}

// turnsPerCase is the number of independent turns one rapid case runs.
const turnsPerCase = 20

func TestModel(t *testing.T) {
	seen := map[string]int{} // coverage: outcomes and effects the cases reached
	// turn runs one turn under a random configuration.
	//
	// The turns of one case are the turns of one run while they succeed
	// (a failed turn ends the run; the next starts a new one): the events
	// their effects write must satisfy spec.Recovery, the client's view of
	// the same invariants, after every step.
	type runLog struct {
		events    []spec.RecoveryEvent
		uncertain bool // the session's sticky flag
	}
	turn := func(t *rapid.T, run *runLog) {
		cfg := genConfig(t)
		m, err := recovery.New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		ref := &refModel{cfg: cfg, phase: recovery.Idle}
		now := rapid.Int64Range(-1_000_000, 1_000_000).Draw(t, "clock0")
		var (
			outcomes     int // outcome effects over the turn
			retryEvents  int
			waitEvents   int
			wasUncertain bool
		)
		check := func(t *rapid.T) {
			st := m.State()
			if st.Retries > cfg.MaxAttempts {
				t.Fatalf("retries %d above the budget %d", st.Retries, cfg.MaxAttempts)
			}
			if st.Retries != retryEvents || st.NetworkWaits != waitEvents {
				t.Fatalf("state %+v after %d retry and %d wait events", st, retryEvents, waitEvents)
			}
			if wasUncertain && !st.Uncertain {
				t.Fatalf("uncertainty cleared: %+v", st)
			}
			wasUncertain = wasUncertain || st.Uncertain
			if outcomes > 1 || st.Phase.Terminal() != (outcomes == 1) {
				t.Fatalf("%d outcomes in %s", outcomes, st.Phase)
			}
			if (st.Phase == recovery.Failed) != (st.Code != "") {
				t.Fatalf("code %q in %s", st.Code, st.Phase)
			}
		}
		fire := func(t *rapid.T, in recovery.Input) {
			before := m.State()
			wantOK, wantKinds, wantDelay := ref.step(in)
			effs, err := m.Fire(in)
			if !wantOK {
				if err == nil {
					t.Fatalf("%+v accepted %+v (effects %+v); the model refuses it", before, in, effs)
				}
				if m.State() != before {
					t.Fatalf("refused %+v changed %+v to %+v", in, before, m.State())
				}
				return
			}
			if err != nil {
				t.Fatalf("%+v refused %+v: %v", before, in, err)
			}
			after := m.State()
			kinds := make([]recovery.EffectKind, len(effs))
			for i, e := range effs {
				kinds[i] = e.Kind
				switch e.Kind {
				case recovery.EffPersistUsageUncertainty:
					run.uncertain = true
					run.events = append(run.events, spec.RecoveryEvent{Type: protocol.TypeProviderUsageUncertain})
				case recovery.EffEmitRetry:
					run.events = append(run.events, spec.RecoveryEvent{Type: protocol.TypeProviderRetry, Attempt: e.Attempt, MaxAttempts: &e.MaxAttempts, DelayMS: e.DelayMS})
				case recovery.EffEmitWaitingForNetwork:
					run.events = append(run.events, spec.RecoveryEvent{Type: protocol.TypeProviderWaitingForNetwork, Attempt: e.Attempt, DelayMS: e.DelayMS})
				case recovery.EffSucceed:
					run.events = append(run.events, spec.RecoveryEvent{Type: protocol.TypeModelStep, UsageUncertain: run.uncertain})
				case recovery.EffFail:
					defer func() { *run = runLog{} }() // the run ends
				}
				if err := spec.Recovery(run.events); err != nil {
					t.Fatalf("%v\nevents: %+v", err, run.events)
				}
				seen[string(e.Kind)]++
				if e.Kind == recovery.EffFail {
					seen["fail "+string(e.Code)]++
				}
			}
			if after.Phase == recovery.WaitingForNetwork && cfg.MaxNetworkWaitMS != nil {
				seen["bounded wait"]++
			}
			if after.Phase == recovery.BackingOff && after.Outage && cfg.MaxNetworkWaitMS != nil {
				seen["bounded retry"]++
			}
			if after.Uncertain && after.Phase == recovery.Succeeded {
				seen["uncertain success"]++
			}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Fatalf("%+v -%s(%+v)-> effects (-model +machine):\n%s", before, in.Trigger, in.Facts, diff)
			}
			if outcomes > 0 && len(effs) > 0 {
				t.Fatalf("effects %v after the outcome", kinds)
			}
			// PersistUsageUncertainty precedes every replacement effect of
			// its step, and comes at most once.
			if p := slices.Index(kinds, recovery.EffPersistUsageUncertainty); p >= 0 {
				if slices.Contains(kinds[p+1:], recovery.EffPersistUsageUncertainty) {
					t.Fatalf("persisted twice: %v", kinds)
				}
				for _, k := range kinds[:p] {
					if slices.Contains(replacing, k) {
						t.Fatalf("%s before the usage_uncertainty record: %v", k, kinds)
					}
				}
			}
			for _, e := range effs {
				switch e.Kind {
				case recovery.EffSucceed, recovery.EffFail:
					outcomes++
				case recovery.EffEmitRetry:
					retryEvents++
					if e.Attempt != after.Retries || e.MaxAttempts != cfg.MaxAttempts || e.DelayMS != wantDelay || e.Error == "" {
						t.Fatalf("retry event %+v: retries %d, budget %d, delay %d", e, after.Retries, cfg.MaxAttempts, wantDelay)
					}
					if f := in.Facts; f.RetryAfterMS > 0 && e.DelayMS != f.RetryAfterMS {
						t.Fatalf("retry event %+v ignores Retry-After %d", e, f.RetryAfterMS)
					}
					if in.Facts.Message != "" && !strings.HasSuffix(e.Error, in.Facts.Message) {
						t.Fatalf("retry event %+v: error does not carry the failure's message %q", e, in.Facts.Message)
					}
					if f := in.Facts; f.Kind == recovery.FailHTTPStatus && f.Status != 0 && !strings.HasPrefix(e.Error, "HTTP "+strconv.Itoa(f.Status)) {
						t.Fatalf("retry event %+v does not name the status %d", e, f.Status)
					}
				case recovery.EffEmitWaitingForNetwork:
					waitEvents++
					if e.Attempt != after.NetworkWaits || e.DelayMS != wantDelay || e.DelayMS < 1 || e.Error == "" {
						t.Fatalf("wait event %+v: waits %d, delay %d", e, after.NetworkWaits, wantDelay)
					}
					if lim := cfg.MaxNetworkWaitMS; lim != nil && after.OutageFloorMS > *lim {
						t.Fatalf("wait event %+v: the wait ends %d ms into the outage, past %d", e, after.OutageFloorMS, *lim)
					}
				case recovery.EffStartTimer:
					if e.DelayMS != wantDelay {
						t.Fatalf("timer %+v, want %d ms", e, wantDelay)
					}
				case recovery.EffStartAttempt:
					if e.Attempt != 1+after.Retries+after.NetworkWaits {
						t.Fatalf("start attempt %+v, state %+v", e, after)
					}
					// The model's delay slot carries the opening bound.
					if e.OpenWithinMS != wantDelay {
						t.Fatalf("start attempt %+v, want an opening bound of %d ms", e, wantDelay)
					}
					if e.OpenWithinMS > 0 {
						seen["bounded opening"]++
					}
				}
			}
			// Armed, a wait or retry ends strictly before the ceiling.
			if lim := cfg.MaxNetworkWaitMS; lim != nil && after.Outage && slices.Contains(kinds, recovery.EffStartTimer) && after.OutageFloorMS >= *lim {
				t.Fatalf("%v: the delay ends %d ms into the outage, not before the ceiling %d", kinds, after.OutageFloorMS, *lim)
			}
			if after.Retries > before.Retries && slices.Contains(kinds, recovery.EffEmitWaitingForNetwork) {
				t.Fatalf("a network wait consumed the budget: %+v -> %+v", before, after)
			}
			want := recovery.State{
				Phase: ref.phase, Retries: ref.retries, NetworkWaits: ref.waits, Outage: ref.outage,
				OutageStartMS: ref.start, OutageFloorMS: ref.floor, Uncertain: ref.uncertain, Code: ref.code,
			}
			if !ref.outage {
				want.OutageStartMS = 0
			}
			if after != want {
				t.Fatalf("after %s(%+v): machine %+v, model %+v", in.Trigger, in, after, want)
			}
		}
		// Inputs. Each step draws one from a list that starts with what the
		// phase expects (rapid favours the first entries) and ends with
		// what it must refuse, cancellation and aborts.
		failure := func(t *rapid.T) recovery.Input {
			// Readings usually advance, sometimes stall, rarely go back.
			switch rapid.IntRange(0, 9).Draw(t, "clock_move") {
			case 0:
			case 1:
				now -= rapid.Int64Range(1, 10_000).Draw(t, "back")
			default:
				now += rapid.Int64Range(1, 40_000).Draw(t, "forward")
			}
			return recovery.Input{Trigger: recovery.TrAttemptFailed, NowMS: now,
				Facts: genFacts(t, cfg.Policy.RetryAfterCeilingMS), Jitter: rapid.Float64Range(0, 1).Draw(t, "jitter")}
		}
		// Outages are the only failures that can repeat without end: they
		// get their own entry.
		outage := func(t *rapid.T) recovery.Input {
			now += rapid.Int64Range(0, 20_000).Draw(t, "outage_forward")
			return recovery.Input{Trigger: recovery.TrAttemptFailed, NowMS: now,
				Facts:  recovery.Facts{Kind: recovery.FailConnect, Message: "dial tcp: connect: network is unreachable"},
				Jitter: rapid.Float64Range(0, 1).Draw(t, "outage_jitter")}
		}
		simple := func(tr recovery.Trigger) func(*rapid.T) recovery.Input {
			return func(*rapid.T) recovery.Input { return recovery.Input{Trigger: tr} }
		}
		// A timer fires with a reading: usually on time, sometimes late,
		// now and then with a stalled clock.
		timerFired := func(t *rapid.T) recovery.Input {
			if rapid.IntRange(0, 3).Draw(t, "timer_moves") > 0 {
				now += rapid.Int64Range(0, 30_000).Draw(t, "timer_forward")
			}
			return recovery.Input{Trigger: recovery.TrTimerFired, NowMS: now}
		}
		// A throttle with a Retry-After, the failure that mixes with
		// outages in a turn.
		throttle := func(t *rapid.T) recovery.Input {
			now += rapid.Int64Range(0, 5_000).Draw(t, "throttle_forward")
			return recovery.Input{Trigger: recovery.TrAttemptFailed, NowMS: now,
				Facts: recovery.Facts{Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true, Message: "slow down",
					RetryAfterMS: rapid.Int64Range(0, max(cfg.Policy.RetryAfterCeilingMS, 0)).Draw(t, "throttle_retry_after")},
				Jitter: rapid.Float64Range(0, 1).Draw(t, "throttle_jitter")}
		}
		cancel := func(t *rapid.T) recovery.Input {
			return recovery.Input{Trigger: recovery.TrCancel, Facts: recovery.Facts{
				RequestWritten: rapid.Bool().Draw(t, "cancel_written"),
				ContentStarted: rapid.Bool().Draw(t, "cancel_content"),
			}}
		}
		abort := func(t *rapid.T) recovery.Input {
			return recovery.Input{Trigger: recovery.TrAbort, Code: rapid.SampledFrom([]protocol.Code{"session_write_failed", ""}).Draw(t, "abort_code")}
		}
		type gen = func(*rapid.T) recovery.Input
		var (
			start   = simple(recovery.TrStart)
			succeed = simple(recovery.TrAttemptSucceeded)
			timer   = timerFired
		)
		// Weighted menus: mostly what the phase expects, now and then an
		// input it must refuse, rarely the end of the turn by cancellation
		// or abort.
		repeat := func(g gen, n int) []gen { return slices.Repeat([]gen{g}, n) }
		menu := func(p recovery.Phase) []gen {
			var out []gen
			switch p {
			case recovery.Idle:
				out = repeat(start, 8)
			case recovery.Attempting:
				out = slices.Concat(repeat(failure, 5), repeat(outage, 4), repeat(throttle, 3), repeat(succeed, 3), []gen{start, timer})
			case recovery.WaitingForNetwork, recovery.BackingOff:
				out = slices.Concat(repeat(timer, 10), []gen{failure, succeed, start})
			}
			return append(out, failure, succeed, timer, cancel, abort)
		}
		steps := rapid.IntRange(8, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			choices := menu(m.State().Phase)
			pick := rapid.IntRange(0, len(choices)-1).Draw(t, "input")
			fire(t, choices[pick](t))
			check(t)
		}
		// Every turn ends with exactly one outcome: cancel whatever is
		// still live, then nothing is accepted.
		if !m.State().Phase.Terminal() {
			fire(t, recovery.Input{Trigger: recovery.TrCancel})
			check(t)
		}
		if outcomes != 1 || !m.State().Phase.Terminal() {
			t.Fatalf("turn ended in %+v with %d outcomes", m.State(), outcomes)
		}
		for _, tr := range recovery.Triggers {
			if effs, err := m.Fire(recovery.Input{Trigger: tr, Code: "x"}); err == nil {
				t.Fatalf("%s accepted after the outcome: %v", tr, effs)
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var run runLog
		for range turnsPerCase {
			turn(t, &run)
		}
	})
	// The cases must reach every outcome and effect, or the properties
	// above hold vacuously.
	for _, k := range []string{
		string(recovery.EffPersistUsageUncertainty), string(recovery.EffEmitRetry), string(recovery.EffEmitWaitingForNetwork),
		string(recovery.EffSucceed), "bounded wait", "bounded retry", "bounded opening", "uncertain success",
		"fail " + string(recovery.CodeRetriesExhausted), "fail " + string(recovery.CodeNetworkWaitExceeded),
		"fail " + string(recovery.CodeRetryAfterTooLong), "fail " + string(recovery.CodeCanceled), "fail session_write_failed",
		"fail " + string(recovery.CodeProviderError), "fail " + string(recovery.CodeQuotaExhausted), "fail " + string(recovery.CodeContextOverflow),
		"fail " + string(recovery.CodeAuthFailed), "fail " + string(recovery.CodeBadRequest),
	} {
		if seen[k] == 0 {
			t.Errorf("no case reached %q: %v", k, seen)
		}
	}
	t.Logf("coverage: %v", seen)
}

// TestCeilingUnderFakeClock drives the machine as the run's driver does,
// under a fake clock: attempts take time to open and to stream, timers
// fire on time or late, and a turn mixes outages, throttles with and
// without Retry-After, and cut streams. Once the first outage armed a
// bounded ceiling L at T0, the whole recovery stays within [T0, T0+L]:
// every wait and retry ends before T0+L, every later request's opening is
// cut at T0+L at the latest (an opening cut by it is reported as an
// outage, as the driver does), a Retry-After is honoured exactly, no delay
// is shorter than its minimum, and the turn ends; a stop by the ceiling
// happens only when the minimum delay does not fit what is left.
func TestCeilingUnderFakeClock(t *testing.T) {
	seen := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		cfg := recovery.DefaultConfig()
		cfg.MaxAttempts = rapid.IntRange(0, 8).Draw(t, "max_attempts")
		limit := rapid.Int64Range(1, 90_000).Draw(t, "limit")
		cfg.MaxNetworkWaitMS = &limit
		m, err := recovery.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clock := rapid.Int64Range(0, 1_000_000).Draw(t, "clock0")
		armedAt := int64(-1) // T0
		effs, err := m.Fire(recovery.Input{Trigger: recovery.TrStart})
		if err != nil {
			t.Fatal(err)
		}
		for range 10_000 {
			if m.State().Phase.Terminal() {
				break
			}
			e := effs[len(effs)-1]
			var in recovery.Input
			switch e.Kind {
			case recovery.EffStartAttempt:
				if armedAt >= 0 {
					if e.OpenWithinMS <= 0 || clock+e.OpenWithinMS > armedAt+limit {
						t.Fatalf("attempt at %d (outage at %d, limit %d) opens within %d ms", clock, armedAt, limit, e.OpenWithinMS)
					}
				} else if e.OpenWithinMS != 0 {
					t.Fatalf("an unbounded attempt got an opening bound %+v", e)
				}
				open := rapid.Int64Range(0, 20_000).Draw(t, "open_ms")
				kind := rapid.SampledFrom([]string{"outage", "outage", "throttle", "retry_after", "cut", "success"}).Draw(t, "outcome")
				if e.OpenWithinMS > 0 && open >= e.OpenWithinMS {
					// The opening is cut at the deadline: an outage then.
					clock += e.OpenWithinMS
					kind = "outage"
					seen["opening cut"]++
				} else {
					clock += open
				}
				f := recovery.Facts{Kind: recovery.FailConnect, Message: "connection refused"}
				switch kind {
				case "success":
					in = recovery.Input{Trigger: recovery.TrAttemptSucceeded}
				case "throttle", "retry_after":
					clock += rapid.Int64Range(0, 2_000).Draw(t, "answer_ms")
					f = recovery.Facts{Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true, Message: "slow down"}
					if kind == "retry_after" {
						f.RetryAfterMS = rapid.Int64Range(1, cfg.Policy.RetryAfterCeilingMS).Draw(t, "retry_after_ms")
					}
				case "cut":
					clock += rapid.Int64Range(0, 120_000).Draw(t, "stream_ms") // a body is not bounded
					f = recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "cut"}
				}
				if in.Trigger == "" {
					in = recovery.Input{Trigger: recovery.TrAttemptFailed, Facts: f, NowMS: clock, Jitter: rapid.Float64Range(0, 1).Draw(t, "jitter")}
					if kind == "outage" && armedAt < 0 {
						armedAt = clock
					}
				}
			case recovery.EffStartTimer:
				clock += e.DelayMS
				if late := rapid.IntRange(0, 3).Draw(t, "late"); late == 0 {
					clock += rapid.Int64Range(1, 5_000).Draw(t, "late_ms")
					seen["late timer"]++
				}
				in = recovery.Input{Trigger: recovery.TrTimerFired, NowMS: clock}
			default:
				t.Fatalf("unexpected last effect %+v of %+v", e, effs)
			}
			before := m.State()
			effs, err = m.Fire(in)
			if err != nil {
				t.Fatalf("%+v refused %+v: %v", before, in, err)
			}
			effs = slices.Clone(effs)
			for i, e := range effs {
				switch e.Kind {
				case recovery.EffStartTimer:
					lo, _ := recovery.Delay(cfg.Policy, in.Facts, max(m.State().Retries, 1), 0)
					announce := effs[i-1]
					if announce.Kind == recovery.EffEmitWaitingForNetwork {
						lo, _ = recovery.Delay(cfg.Policy, in.Facts, announce.Attempt, 0)
						seen["wait"]++
					} else if armedAt >= 0 {
						seen["retry after an outage"]++
					}
					if e.DelayMS < lo {
						t.Fatalf("a delay of %d ms, below its minimum %d: %+v", e.DelayMS, lo, effs)
					}
					if ra := in.Facts.RetryAfterMS; ra > 0 && e.DelayMS != ra {
						t.Fatalf("Retry-After %d ms not honoured: %+v", ra, effs)
					}
					if armedAt >= 0 && in.NowMS+e.DelayMS >= armedAt+limit {
						t.Fatalf("a delay ending at %d, not before the ceiling %d+%d: %+v", in.NowMS+e.DelayMS, armedAt, limit, effs)
					}
				case recovery.EffFail:
					if e.Code != recovery.CodeNetworkWaitExceeded {
						seen["fail "+string(e.Code)]++
						break
					}
					seen["stopped by the ceiling"]++
					if in.Trigger == recovery.TrTimerFired {
						if clock-armedAt < limit {
							t.Fatalf("stopped at timer %d with %d ms left", clock, armedAt+limit-clock)
						}
						break
					}
					// Only when the minimum delay does not fit.
					elapsed := max(in.NowMS-armedAt, before.OutageFloorMS)
					n := before.NetworkWaits + 1
					if recovery.Classify(in.Facts).Kind == recovery.Retry {
						n = before.Retries + 1
					}
					if lo, _ := recovery.Delay(cfg.Policy, in.Facts, n, 0); lo < limit-elapsed {
						t.Fatalf("stopped early: minimum %d ms, %d ms left: %+v", lo, limit-elapsed, effs)
					}
				}
			}
		}
		if !m.State().Phase.Terminal() {
			t.Fatalf("the turn did not end: %+v", m.State())
		}
	})
	for _, k := range []string{"opening cut", "late timer", "wait", "retry after an outage", "stopped by the ceiling", "fail " + string(recovery.CodeRetriesExhausted)} {
		if seen[k] == 0 {
			t.Errorf("no case reached %q: %v", k, seen)
		}
	}
	t.Logf("coverage: %v", seen)
}
