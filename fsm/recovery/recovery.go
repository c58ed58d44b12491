package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/internal/machine"
	"octet.dev/host/protocol"
)

// Config is one turn's recovery configuration. Start from DefaultConfig;
// New validates the whole value.
type Config struct {
	// MaxAttempts is the retry budget: how many times a turn's attempt may
	// be replaced after retryable failures (provider_retry.max_attempts).
	// The turn makes at most 1 + MaxAttempts attempts that reach the
	// provider. 0 disables retrying. Default 4.
	MaxAttempts int
	// MaxNetworkWaitMS bounds the turn's recovery once its first outage
	// armed it: measured from that outage, every later wait, every retry
	// (a server's Retry-After included) and the opening of every later
	// request must end within it (see the package doc, "The network-wait
	// ceiling"). nil means no ceiling (the default; CONTRACT §15
	// Agent.SetMaxNetworkWait(nil)); 0 disables waiting: an outage fails
	// the turn at once.
	MaxNetworkWaitMS *int64
	// Policy paces the waits.
	Policy Policy
}

// DefaultConfig returns the defaults: a retry budget of 4, no network wait
// ceiling, DefaultPolicy.
func DefaultConfig() Config {
	return Config{MaxAttempts: DefaultMaxAttempts, Policy: DefaultPolicy()}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("recovery: MaxAttempts %d, want ≥ 0", c.MaxAttempts))
	}
	if c.MaxNetworkWaitMS != nil && *c.MaxNetworkWaitMS < 0 {
		errs = append(errs, fmt.Errorf("recovery: MaxNetworkWaitMS %d, want nil or ≥ 0", *c.MaxNetworkWaitMS))
	}
	errs = append(errs, c.Policy.Validate())
	return errors.Join(errs...)
}

// Phase is the turn's recovery phase.
type Phase string

// Phases.
const (
	Idle              Phase = "idle"                // the turn has not started an attempt
	Attempting        Phase = "attempting"          // an attempt is in flight
	WaitingForNetwork Phase = "waiting_for_network" // an outage: the timer runs before the next attempt
	BackingOff        Phase = "backing_off"         // a retry is scheduled: the timer runs before it
	Succeeded         Phase = "succeeded"           // an attempt succeeded; absorbing
	Failed            Phase = "failed"              // the turn failed (State.Code says why); absorbing
)

// Phases lists every phase in a fixed order.
var Phases = []Phase{Idle, Attempting, WaitingForNetwork, BackingOff, Succeeded, Failed}

// Terminal reports whether p is an outcome (Succeeded or Failed).
func (p Phase) Terminal() bool { return p == Succeeded || p == Failed }

// Trigger is an input kind.
type Trigger string

// Triggers.
const (
	// TrStart: start the turn's first attempt.
	TrStart Trigger = "start"
	// TrAttemptFailed: the attempt in flight failed (Input.Facts,
	// Input.NowMS, Input.Jitter).
	TrAttemptFailed Trigger = "attempt_failed"
	// TrAttemptSucceeded: the attempt in flight completed (terminal event
	// and final usage received).
	TrAttemptSucceeded Trigger = "attempt_succeeded"
	// TrTimerFired: the timer of the last StartTimer expired (Input.NowMS:
	// when). With the network-wait ceiling armed and spent it fails the
	// turn instead of starting an attempt.
	TrTimerFired Trigger = "timer_fired"
	// TrCancel: the caller canceled the turn. In Attempting, Input.Facts
	// describe the attempt abandoned (RequestWritten, ContentStarted), so
	// that its usage uncertainty is persisted like a failure's.
	TrCancel Trigger = "cancel"
	// TrAbort: the driver could not carry out an effect (the
	// usage_uncertainty append failed, the request could not be built) and
	// ends the turn with Input.Code (non-empty) and Input.Message.
	TrAbort Trigger = "abort"
)

// Triggers lists every trigger in a fixed order.
var Triggers = []Trigger{TrStart, TrAttemptFailed, TrAttemptSucceeded, TrTimerFired, TrCancel, TrAbort}

// Input is a trigger with its arguments.
type Input struct {
	Trigger Trigger
	// Facts of the failed attempt (TrAttemptFailed), or of the abandoned
	// one (TrCancel in Attempting; Kind is taken as FailCanceled).
	Facts Facts
	// NowMS is a monotonic clock reading in milliseconds, taken when the
	// attempt failed (TrAttemptFailed) or when the timer fired
	// (TrTimerFired). It only needs to be consistent within the turn. A
	// reading below the outage's start counts as no time elapsed, and
	// elapsed time is never taken below what the waits scheduled add up to
	// (State.OutageFloorMS), so a stalled clock cannot stretch the ceiling.
	NowMS int64
	// Jitter is a number in [0, 1) from the driver's seeded source
	// (TrAttemptFailed).
	Jitter float64
	// Code and Message are the failure of TrAbort.
	Code    protocol.Code
	Message string
}

// EffectKind names an effect the driver must perform.
type EffectKind string

// Effects, performed in the order returned (see the package doc).
const (
	// EffPersistUsageUncertainty: durably append the session's
	// usage_uncertainty record, then emit provider_usage_uncertain. Comes
	// before every effect that replaces or abandons the attempt; if the
	// append fails, perform nothing further and fire TrAbort.
	EffPersistUsageUncertainty EffectKind = "persist_usage_uncertainty"
	// EffDiscardAttempt: discard every provisional output of the failed
	// attempt; committed results stay.
	EffDiscardAttempt EffectKind = "discard_attempt"
	// EffEmitRetry: emit provider_retry {attempt, max_attempts, delay_ms,
	// error} from Effect.Attempt, MaxAttempts, DelayMS, Error.
	EffEmitRetry EffectKind = "emit_retry"
	// EffEmitWaitingForNetwork: emit provider_waiting_for_network
	// {attempt, delay_ms, error} from Effect.Attempt, DelayMS, Error.
	EffEmitWaitingForNetwork EffectKind = "emit_waiting_for_network"
	// EffStartTimer: start a timer of Effect.DelayMS; fire TrTimerFired
	// when it expires.
	EffStartTimer EffectKind = "start_timer"
	// EffStartAttempt: start attempt number Effect.Attempt of the turn
	// (1-based, counting every attempt: 1 + retries + network waits).
	// When Effect.OpenWithinMS > 0 the network-wait ceiling is armed: the
	// request must be open (connected, TLS handshake done) within that many
	// milliseconds, what is left of the allowance; an attempt that cannot
	// open in time fails as an outage (FailConnect, nothing written) read
	// at or after the deadline, which ends the turn with
	// network_wait_exceeded. 0 means no bound.
	EffStartAttempt EffectKind = "start_attempt"
	// EffSucceed: the turn's outcome: the attempt's output is the answer.
	EffSucceed EffectKind = "succeed"
	// EffFail: the turn's outcome: it failed with Effect.Code and
	// Effect.Message. Any timer still running is to be dropped.
	EffFail EffectKind = "fail"
)

// Effect is one thing the driver must do. Only the fields its kind names
// are set.
type Effect struct {
	Kind    EffectKind
	Attempt int // EffEmitRetry, EffEmitWaitingForNetwork, EffStartAttempt
	// OpenWithinMS bounds the opening of the attempt's request
	// (EffStartAttempt): > 0 once the ceiling is armed, 0 for no bound.
	OpenWithinMS int64
	MaxAttempts  int           // EffEmitRetry
	DelayMS      int64         // EffEmitRetry, EffEmitWaitingForNetwork, EffStartTimer
	Error        string        // EffEmitRetry, EffEmitWaitingForNetwork: the failure's sanitized text
	Code         protocol.Code // EffFail
	Message      string        // EffFail
}

// State is the machine's whole state. It is comparable.
type State struct {
	Phase Phase
	// Retries is the retry budget consumed: the number of provider_retry
	// events, at most Config.MaxAttempts.
	Retries int
	// NetworkWaits is the number of provider_waiting_for_network events.
	NetworkWaits int
	// Outage reports whether the turn has seen an outage; OutageStartMS is
	// the NowMS of its first one.
	Outage        bool
	OutageStartMS int64
	// OutageFloorMS is the least outage time the next failure can have
	// elapsed: when the last wait or retry after the first outage was
	// scheduled, the elapsed time plus its delay. Elapsed time is never
	// taken below it, so the delays scheduled count against
	// MaxNetworkWaitMS even if the clock input stalls: a bounded recovery
	// always ends.
	OutageFloorMS int64
	// Uncertain reports whether a failed attempt of this turn persisted
	// usage uncertainty. Sticky: once set it never clears.
	Uncertain bool
	// Code is the failure code in Failed, "" otherwise.
	Code protocol.Code
}

// attempt is the number of the attempt that starts next (or is in
// flight): every failure that did not end the turn replaced one.
func (s State) attempt() int { return 1 + s.Retries + s.NetworkWaits }

var spec = machine.NewSpec("recovery", Phases, Triggers, func(in Input) Trigger { return in.Trigger })

// Machine is one turn's recovery machine.
type Machine struct {
	w        *machine.Machine[Phase, Trigger, Input, Effect]
	cfg      Config
	st       State
	next     step // the step Fire is taking
	deciding bool // Fire is taking next
}

// step is what an input does: the phase and state it leads to and the
// effects it returns. to is "" when the input is not accepted.
type step struct {
	to      Phase
	st      State
	effects []Effect
}

// New returns a machine in Idle for one turn, or the problems of cfg.
func New(cfg Config) (*Machine, error) { return FromState(cfg, State{Phase: Idle}) }

// FromState returns a machine positioned at st (for enumeration in tests),
// or the problems of cfg.
func FromState(cfg Config, st State) (*Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !slices.Contains(Phases, st.Phase) {
		return nil, fmt.Errorf("recovery: unknown phase %q", st.Phase)
	}
	if c := cfg.MaxNetworkWaitMS; c != nil {
		v := *c // the machine keeps its own copy
		cfg.MaxNetworkWaitMS = &v
	}
	m := &Machine{cfg: cfg, st: st}
	w := machine.New[Phase, Trigger, Input, Effect](spec, &m.st.Phase)
	m.w = w
	// decide is the one source of truth; the stateless table is derived
	// from it. Each trigger a phase may accept (accepts, which decide
	// consults first) is a dynamic transition, permitted when decide
	// accepts the input and leading where decide's step leads. Every
	// phase is entered through that step: the phase itself is the one
	// stateless stored. Fire computes the step once (m.deciding); Permitted
	// asks decide.
	accepted := func(context.Context, ...any) bool {
		if m.deciding {
			return m.next.to != ""
		}
		return m.decide(w.In()).to != ""
	}
	to := func(context.Context, ...any) (any, error) { return spec.Phase(m.next.to), nil }
	enter := func(context.Context, ...any) error {
		phase := m.st.Phase
		m.st = m.next.st
		m.st.Phase = phase
		w.Emit(m.next.effects...)
		return nil
	}
	for _, p := range Phases {
		c := w.Configure(p).OnEntry(enter)
		for _, t := range accepts(p) {
			c.PermitDynamic(spec.Trigger(t), to, accepted)
		}
	}
	return m, nil
}

// decide computes the step in takes from the current state: a pure
// function of the configuration, the state and the input.
func (m *Machine) decide(in Input) step {
	st := m.st
	if !slices.Contains(accepts(st.Phase), in.Trigger) {
		return step{}
	}
	switch in.Trigger {
	case TrStart:
		return step{Attempting, st, []Effect{{Kind: EffStartAttempt, Attempt: st.attempt()}}}

	case TrTimerFired:
		start := Effect{Kind: EffStartAttempt, Attempt: st.attempt()}
		if a, armed := m.allowance(st, in.NowMS); armed {
			left := a.left()
			if left <= 0 {
				// The timer fired late: nothing is left to open a request
				// in.
				return failStep(st, nil, CodeNetworkWaitExceeded, "max network wait reached: the "+
					strconv.FormatInt(a.limit, 10)+" ms allowed since the first outage were spent before the next attempt")
			}
			start.OpenWithinMS = left
		}
		return step{Attempting, st, []Effect{start}}

	case TrAttemptSucceeded:
		return step{Succeeded, st, []Effect{{Kind: EffSucceed}}}

	case TrCancel:
		var effs []Effect
		if st.Phase == Attempting {
			f := in.Facts
			f.Kind = FailCanceled
			effs = abandon(&st, f)
		}
		return failStep(st, effs, CodeCanceled, "canceled")

	case TrAbort:
		if in.Code == "" {
			return step{}
		}
		var effs []Effect
		if st.Phase == Attempting {
			effs = []Effect{{Kind: EffDiscardAttempt}}
		}
		return failStep(st, effs, in.Code, in.Message)

	case TrAttemptFailed:
		return m.failed(st, in)
	}
	return step{}
}

// The triggers each phase may accept, in the order of Triggers. decide
// refuses every other one, and the stateless table has a transition for
// exactly these.
var (
	acceptsIdle       = []Trigger{TrStart, TrCancel, TrAbort}
	acceptsAttempting = []Trigger{TrAttemptFailed, TrAttemptSucceeded, TrCancel, TrAbort}
	acceptsWaiting    = []Trigger{TrTimerFired, TrCancel, TrAbort}
)

// accepts returns the triggers phase p may accept (none once terminal).
func accepts(p Phase) []Trigger {
	switch p {
	case Idle:
		return acceptsIdle
	case Attempting:
		return acceptsAttempting
	case WaitingForNetwork, BackingOff:
		return acceptsWaiting
	}
	return nil
}

// abandon returns the effects that give up the attempt that failed with f:
// the usage_uncertainty record first when the rule says so, then the
// discard.
func abandon(st *State, f Facts) []Effect {
	var effs []Effect
	if UsageUncertain(f) {
		st.Uncertain = true
		effs = append(effs, Effect{Kind: EffPersistUsageUncertainty})
	}
	return append(effs, Effect{Kind: EffDiscardAttempt})
}

func failStep(st State, effs []Effect, code protocol.Code, msg string) step {
	st.Code = code
	return step{Failed, st, append(effs, Effect{Kind: EffFail, Code: code, Message: msg})}
}

// failed is the step of TrAttemptFailed.
func (m *Machine) failed(st State, in Input) step {
	f := in.Facts
	effs := abandon(&st, f)
	msg := describe(f)
	c := Classify(f)
	switch c.Kind {
	case Retry:
		if st.Retries >= m.cfg.MaxAttempts {
			return failStep(st, effs, CodeRetriesExhausted,
				"provider failed after "+strconv.Itoa(st.Retries)+" retries; last failure: "+msg)
		}
		ms, fatal := Delay(m.cfg.Policy, f, st.Retries+1, in.Jitter)
		if fatal {
			return failStep(st, effs, CodeRetryAfterTooLong,
				"provider asked to retry after "+strconv.FormatInt(f.RetryAfterMS, 10)+
					" ms, above the "+strconv.FormatInt(m.cfg.Policy.RetryAfterCeilingMS, 10)+" ms ceiling: "+msg)
		}
		if a, armed := m.allowance(st, in.NowMS); armed {
			// After an outage the retry must fit the allowance too: a
			// minimum delay (the server's exact Retry-After, or the
			// backoff's lower end) that does not stops recovery rather
			// than retrying early.
			minMS, _ := Delay(m.cfg.Policy, f, st.Retries+1, 0)
			var ok bool
			if ms, ok = a.fit(ms, minMS); !ok {
				return failStep(st, effs, CodeNetworkWaitExceeded, "max network wait reached: a retry after "+
					strconv.FormatInt(minMS, 10)+" ms does not fit the "+strconv.FormatInt(max(a.left(), 0), 10)+
					" ms left of the "+strconv.FormatInt(a.limit, 10)+" ms allowed since the first outage; last failure: "+msg)
			}
			st.OutageFloorMS = satAdd(a.elapsed, ms)
		}
		st.Retries++
		effs = append(effs,
			Effect{Kind: EffEmitRetry, Attempt: st.Retries, MaxAttempts: m.cfg.MaxAttempts, DelayMS: ms, Error: msg},
			Effect{Kind: EffStartTimer, DelayMS: ms})
		return step{BackingOff, st, effs}

	case NetworkWait:
		if !st.Outage {
			st.Outage, st.OutageStartMS = true, in.NowMS
		}
		n := st.NetworkWaits + 1
		ms, _ := Delay(m.cfg.Policy, f, n, in.Jitter)
		a, armed := m.allowance(st, in.NowMS)
		if armed {
			// A minimum delay beyond the remaining allowance stops recovery
			// rather than retrying early.
			if a.limit == 0 {
				return failStep(st, effs, CodeNetworkWaitExceeded, "network unavailable and network waiting is disabled: "+msg)
			}
			minMS, _ := Delay(m.cfg.Policy, f, n, 0)
			var ok bool
			if ms, ok = a.fit(ms, minMS); !ok {
				return failStep(st, effs, CodeNetworkWaitExceeded,
					"network unavailable for "+strconv.FormatInt(a.elapsed, 10)+" ms (limit "+
						strconv.FormatInt(a.limit, 10)+" ms): "+msg)
			}
		}
		st.NetworkWaits = n
		st.OutageFloorMS = satAdd(a.elapsed, ms)
		effs = append(effs,
			Effect{Kind: EffEmitWaitingForNetwork, Attempt: n, DelayMS: ms, Error: msg},
			Effect{Kind: EffStartTimer, DelayMS: ms})
		return step{WaitingForNetwork, st, effs}
	}
	return failStep(st, effs, c.Code, msg)
}

// allowance is the network-wait ceiling's account at one moment of a turn
// whose first outage armed it.
type allowance struct {
	limit   int64 // Config.MaxNetworkWaitMS
	elapsed int64 // since the first outage, never below OutageFloorMS
}

// left is what remains of the allowance; ≤ 0 when it is spent.
func (a allowance) left() int64 { return a.limit - min(a.elapsed, a.limit) }

// fit returns the delay to schedule instead of ms, whose minimum is minMS,
// so that the next attempt starts strictly before the ceiling and keeps
// some of the allowance to open its request in: ms itself when it ends
// before the ceiling, else the minimum when that does. ok is false when
// not even the minimum does: recovery stops rather than retrying early.
func (a allowance) fit(ms, minMS int64) (int64, bool) {
	left := a.left()
	switch {
	case minMS >= left:
		return 0, false
	case ms >= left:
		return minMS, true
	}
	return ms, true
}

// allowance returns the ceiling's account at the clock reading now, and
// whether the ceiling is armed: a max network wait is set and the turn has
// had its first outage. elapsed is the outage time in either case.
func (m *Machine) allowance(st State, now int64) (allowance, bool) {
	a := allowance{elapsed: max(elapsedMS(st.OutageStartMS, now), st.OutageFloorMS)}
	if !st.Outage {
		a.elapsed = 0
	}
	if m.cfg.MaxNetworkWaitMS == nil || !st.Outage {
		return a, false
	}
	a.limit = *m.cfg.MaxNetworkWaitMS
	return a, true
}

// elapsedMS is now - start, 0 when now is before start, without overflow.
func elapsedMS(start, now int64) int64 {
	if now <= start {
		return 0
	}
	d := now - start
	if d < 0 { // overflowed
		return int64(^uint64(0) >> 1)
	}
	return d
}

func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return int64(^uint64(0) >> 1)
}

// Config returns the machine's configuration.
func (m *Machine) Config() Config {
	c := m.cfg
	if c.MaxNetworkWaitMS != nil {
		v := *c.MaxNetworkWaitMS
		c.MaxNetworkWaitMS = &v
	}
	return c
}

// SetTracer installs a tracer for every transition taken, with the
// machine's state (fsm.Transition).
func (m *Machine) SetTracer(t fsm.Tracer) { m.w.SetTracer(t, func() any { return m.st }) }

// State returns the current state.
func (m *Machine) State() State { return m.st }

// Permitted returns the triggers the machine accepts for in's arguments in
// its current state, in the order of Triggers.
func (m *Machine) Permitted(in Input) []Trigger {
	return m.w.Permitted(Triggers, func(t Trigger) Input { in.Trigger = t; return in })
}

// Fire applies one input and returns the effects to perform, in order. An
// input the current state does not accept is a *fsm.TransitionError and
// changes nothing. The returned slice is reused by the next Fire.
func (m *Machine) Fire(in Input) ([]Effect, error) {
	from := m.st
	m.next, m.deciding = m.decide(in), true
	effects, err := m.w.Fire(in)
	m.deciding = false
	if err == nil {
		checkStep(m.cfg, from, in, m.st, effects)
	}
	return effects, err
}
