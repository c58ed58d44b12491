package compaction

import (
	"context"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/internal/machine"
)

// Phase is where a run's step loop stands (tla/Compaction.tla's phase).
type Phase string

// Phases. Done is final.
const (
	PCheck      Phase = "check"      // before a model call: the threshold check
	PCalling    Phase = "calling"    // the model call is out
	PCompacting Phase = "compacting" // a compaction is running
	PDone       Phase = "done"       // the run is over
)

// Phases lists every phase.
var Phases = []Phase{PCheck, PCalling, PCompacting, PDone}

// Reason is why a compaction runs (None: no compaction in flight).
type Reason string

// Reasons.
const (
	ReasonNone      Reason = "none"
	ReasonThreshold Reason = "threshold"
	ReasonOverflow  Reason = "overflow"
)

// Status is the run's final status (None until it ends).
type Status string

// Statuses.
const (
	StatusNone      Status = "none"
	StatusCompleted Status = "completed"
	StatusError     Status = "error"
)

// Trigger is an input of the machine, one per action of the spec.
type Trigger string

// Triggers.
const (
	TrCheck          Trigger = "check"           // the threshold check (CheckCompact or CheckGo): Tokens, CanPlan
	TrAnswer         Trigger = "answer"          // the call answered: the run completes (CallAnswer)
	TrTools          Trigger = "tools"           // the call asked for tools: the next step (CallTools)
	TrFail           Trigger = "fail"            // the call failed for good (CallFail)
	TrOverflow       Trigger = "overflow"        // the call overflowed (CallOverflow)
	TrCompactOK      Trigger = "compact_ok"      // the compaction succeeded (CompactOK)
	TrCompactRefused Trigger = "compact_refused" // the compaction was refused or failed (CompactRefused): Tokens
	TrDone           Trigger = "done"            // the run is over: nothing happens (Done)
)

// Triggers lists every trigger in a fixed order.
var Triggers = []Trigger{TrCheck, TrAnswer, TrTools, TrFail, TrOverflow, TrCompactOK, TrCompactRefused, TrDone}

// Effect names what the driver must do.
type Effect string

// Effects; each trigger returns at most two, in this order.
const (
	EffCompactLocal  Effect = "compact_local"  // run a local compaction (the summarizer) with the state's Reason
	EffCompactNative Effect = "compact_native" // run a native compaction (the endpoint) with the state's Reason
	EffCall          Effect = "call"           // send the step's model call
	EffRetry         Effect = "retry"          // re-issue the step's model call after an overflow compaction
	EffHold          Effect = "hold"           // a refused threshold compaction: hold off until State.HoldUntil
	EffComplete      Effect = "complete"       // the final result: completed
	EffFail          Effect = "fail"           // the final result: error, as the call failed
	EffOverflow      Effect = "overflow"       // the final result: error, context_overflow
)

// Input is a trigger and its arguments.
type Input struct {
	Trigger Trigger
	// Tokens is the context's size: for TrCheck, to decide whether a
	// compaction is due; for TrCompactRefused, whether the run may go on.
	Tokens int64
	// CanPlan says a local compaction has something to summarize (TrCheck).
	CanPlan bool
}

// State is the machine's whole state.
type State struct {
	Phase      Phase
	Reason     Reason // the reason of the compaction in flight
	Overflowed bool   // this step already compacted for an overflow
	Status     Status // the run's final status
	HoldUntil  int64  // the hold-off a refused threshold compaction left (0: none)
}

// Start is the state of a run before its first step.
func Start() State {
	return State{Phase: PCheck, Reason: ReasonNone, Status: StatusNone}
}

var spec = machine.NewSpec("compaction", Phases, Triggers, func(in Input) Trigger { return in.Trigger })

// Machine is compaction inside one run.
type Machine struct {
	w   *machine.Machine[Phase, Trigger, Input, Effect]
	pol Policy
	st  State
}

// New returns a machine for a run with policy p, before its first step.
func New(p Policy) *Machine { return FromState(p, Start()) }

// FromState returns a machine positioned at st.
func FromState(p Policy, st State) *Machine {
	m := &Machine{pol: p, st: st}
	w := machine.New[Phase, Trigger, Input, Effect](spec, &m.st.Phase)
	m.w = w
	none := func(context.Context, ...any) error { return nil }
	compact := func(r Reason) {
		m.st.Reason = r
		if m.pol.Native {
			w.Emit(EffCompactNative)
		} else {
			w.Emit(EffCompactLocal)
		}
	}
	end := func(s Status, e Effect) {
		m.st.Status, m.st.Reason = s, ReasonNone
		w.Emit(e)
	}

	w.Configure(PCheck).
		PermitDynamic(spec.Trigger(TrCheck), func(context.Context, ...any) (any, error) {
			in := w.In()
			if m.pol.Due(in.Tokens, m.st.HoldUntil) && m.pol.Choose(in.CanPlan) != KindNone {
				return spec.Phase(PCompacting), nil
			}
			return spec.Phase(PCalling), nil
		})
	w.Configure(PCalling).
		Permit(spec.Trigger(TrAnswer), spec.Phase(PDone)).
		Permit(spec.Trigger(TrTools), spec.Phase(PCheck)).
		Permit(spec.Trigger(TrFail), spec.Phase(PDone)).
		PermitDynamic(spec.Trigger(TrOverflow), func(context.Context, ...any) (any, error) {
			if m.st.Overflowed {
				return spec.Phase(PDone), nil
			}
			return spec.Phase(PCompacting), nil
		}).
		OnEntryFrom(spec.Trigger(TrCheck), func(context.Context, ...any) error { w.Emit(EffCall); return nil }).
		OnEntryFrom(spec.Trigger(TrCompactOK), func(context.Context, ...any) error {
			if m.st.Reason == ReasonOverflow {
				w.Emit(EffRetry)
			} else {
				w.Emit(EffCall)
			}
			m.st.Reason = ReasonNone
			return nil
		}).
		OnEntryFrom(spec.Trigger(TrCompactRefused), func(context.Context, ...any) error {
			m.st.HoldUntil = m.pol.HoldUntil(w.In().Tokens)
			m.st.Reason = ReasonNone
			w.Emit(EffHold, EffCall)
			return nil
		})
	w.Configure(PCheck).
		OnEntryFrom(spec.Trigger(TrTools), func(context.Context, ...any) error { m.st.Overflowed = false; return nil })
	w.Configure(PCompacting).
		Permit(spec.Trigger(TrCompactOK), spec.Phase(PCalling)).
		PermitDynamic(spec.Trigger(TrCompactRefused), func(context.Context, ...any) (any, error) {
			if m.pol.OnRefusal(m.st.Reason == ReasonOverflow, w.In().Tokens) == RefusalGoOn {
				return spec.Phase(PCalling), nil
			}
			return spec.Phase(PDone), nil
		}).
		OnEntryFrom(spec.Trigger(TrCheck), func(context.Context, ...any) error { compact(ReasonThreshold); return nil }).
		OnEntryFrom(spec.Trigger(TrOverflow), func(context.Context, ...any) error {
			m.st.Overflowed = true
			compact(ReasonOverflow)
			return nil
		})
	w.Configure(PDone).
		OnEntryFrom(spec.Trigger(TrAnswer), func(context.Context, ...any) error { end(StatusCompleted, EffComplete); return nil }).
		OnEntryFrom(spec.Trigger(TrFail), func(context.Context, ...any) error { end(StatusError, EffFail); return nil }).
		OnEntryFrom(spec.Trigger(TrOverflow), func(context.Context, ...any) error { end(StatusError, EffOverflow); return nil }).
		OnEntryFrom(spec.Trigger(TrCompactRefused), func(context.Context, ...any) error { end(StatusError, EffOverflow); return nil })
	w.Internal(PDone, TrDone, none)
	return m
}

// SetTracer installs a tracer for every transition taken, with the
// machine's state (fsm.Transition).
func (m *Machine) SetTracer(t fsm.Tracer) { m.w.SetTracer(t, func() any { return m.st }) }

// State returns the current state.
func (m *Machine) State() State { return m.st }

// Policy returns the run's policy.
func (m *Machine) Policy() Policy { return m.pol }

// Permitted returns the triggers accepted in the current state, in the
// order of Triggers.
func (m *Machine) Permitted() []Trigger {
	return m.w.Permitted(Triggers, func(t Trigger) Input { return Input{Trigger: t} })
}

// Fire applies one input and returns the effects, in order. An input the
// current phase does not accept is a *fsm.TransitionError and changes
// nothing. The returned slice is reused by the next Fire.
func (m *Machine) Fire(in Input) ([]Effect, error) { return m.w.Fire(in) }
