package steering

import (
	"context"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/internal/machine"
)

// Phase says whether the run still takes messages.
type Phase string

// Phases.
const (
	Open   Phase = "open"   // the run takes messages
	Closed Phase = "closed" // the run completed or is ending; absorbing
)

// Trigger is an input kind.
type Trigger string

// Triggers.
const (
	TrSteer     Trigger = "steer"      // the application submits a steering message
	TrFollowUp  Trigger = "follow_up"  // the application submits a follow-up
	TrAfterTool Trigger = "after_tool" // a tool call finished and more calls of the turn remain
	TrAfterTurn Trigger = "after_turn" // the model's turn and its tool calls are done (Input.Answered: it made none)
	TrClose     Trigger = "close"      // the run ends without completing here (any status)
)

// Triggers lists every trigger in a fixed order.
var Triggers = []Trigger{TrSteer, TrFollowUp, TrAfterTool, TrAfterTurn, TrClose}

// EffectKind names what the driver must do.
type EffectKind string

// Effects, in the order a Fire returns them.
const (
	// EffSkipTools: answer the turn's remaining tool calls as skipped
	// (the model sees why) instead of running them.
	EffSkipTools EffectKind = "skip_tools"
	// EffDeliverSteering: append the first N pending steering messages, in
	// order, as user messages, each with a steering_delivered event.
	EffDeliverSteering EffectKind = "deliver_steering"
	// EffDeliverFollowUps: the same for the first N pending follow-ups
	// (follow_up_delivered).
	EffDeliverFollowUps EffectKind = "deliver_follow_ups"
	// EffContinue: the answered turn does not end the run: call the model
	// again.
	EffContinue EffectKind = "continue"
	// EffComplete: the run completes with the answered turn.
	EffComplete EffectKind = "complete"
	// EffDrop: the N messages still pending (steering first, then
	// follow-ups, each in submission order) are dropped; tell the
	// application.
	EffDrop EffectKind = "drop"
)

// Effect is one thing to do. N counts messages for the deliver and drop
// effects.
type Effect struct {
	Kind EffectKind
	N    int
}

// Input is a trigger with its argument (Answered for TrAfterTurn).
type Input struct {
	Trigger  Trigger
	Answered bool
}

// State is the machine's whole state.
type State struct {
	Phase     Phase
	Steering  int // pending steering messages
	FollowUps int // pending follow-ups
}

var spec = machine.NewSpec("steering", []Phase{Open, Closed}, Triggers,
	func(in Input) Trigger { return in.Trigger })

// Machine is the settlement machine of one run.
type Machine struct {
	w  *machine.Machine[Phase, Trigger, Input, Effect]
	st State
}

// New returns an open machine with nothing pending.
func New() *Machine { return FromState(State{Phase: Open}) }

// FromState returns a machine positioned at st (for enumeration in tests).
func FromState(st State) *Machine {
	m := &Machine{st: st}
	w := machine.New[Phase, Trigger, Input, Effect](spec, &m.st.Phase)
	m.w = w
	steeringPending := func(context.Context, ...any) bool { return m.st.Steering > 0 }
	noSteering := func(context.Context, ...any) bool { return m.st.Steering == 0 }
	// An answered turn completes the run only when nothing is pending.
	completes := func(context.Context, ...any) bool {
		return w.In().Answered && m.st.Steering == 0 && m.st.FollowUps == 0
	}
	goesOn := func(context.Context, ...any) bool {
		return !w.In().Answered || m.st.Steering > 0 || m.st.FollowUps > 0
	}
	deliverSteering := func() {
		w.Emit(Effect{Kind: EffDeliverSteering, N: m.st.Steering})
		m.st.Steering = 0
	}

	w.Internal(Open, TrSteer, func(context.Context, ...any) error { m.st.Steering++; return nil })
	w.Internal(Open, TrFollowUp, func(context.Context, ...any) error { m.st.FollowUps++; return nil })
	w.Configure(Open).
		InternalTransition(TrAfterTool, func(context.Context, ...any) error {
			w.Emit(Effect{Kind: EffSkipTools})
			deliverSteering()
			return nil
		}, steeringPending).
		InternalTransition(TrAfterTool, func(context.Context, ...any) error { return nil }, noSteering).
		InternalTransition(TrAfterTurn, func(context.Context, ...any) error {
			answered := w.In().Answered
			switch {
			case m.st.Steering > 0:
				deliverSteering()
			case answered:
				w.Emit(Effect{Kind: EffDeliverFollowUps, N: m.st.FollowUps})
				m.st.FollowUps = 0
			}
			if answered {
				w.Emit(Effect{Kind: EffContinue})
			}
			return nil
		}, goesOn).
		Permit(TrAfterTurn, Closed, completes).
		Permit(TrClose, Closed)

	w.Configure(Closed).
		OnEntryFrom(TrAfterTurn, func(context.Context, ...any) error {
			w.Emit(Effect{Kind: EffComplete})
			return nil
		}).
		OnEntryFrom(TrClose, func(context.Context, ...any) error {
			if n := m.st.Steering + m.st.FollowUps; n > 0 {
				w.Emit(Effect{Kind: EffDrop, N: n})
			}
			m.st.Steering, m.st.FollowUps = 0, 0
			return nil
		})
	return m
}

// SetTracer installs a tracer for every transition taken, with the
// machine's state (fsm.Transition).
func (m *Machine) SetTracer(t fsm.Tracer) { m.w.SetTracer(t, func() any { return m.st }) }

// State returns the current state.
func (m *Machine) State() State { return m.st }

// Permitted returns the triggers accepted for in's arguments in the current
// state, in the order of Triggers.
func (m *Machine) Permitted(in Input) []Trigger {
	return m.w.Permitted(Triggers, func(t Trigger) Input { in.Trigger = t; return in })
}

// Fire applies one input and returns the effects, in order. An input the
// current state does not accept (anything once closed) is a
// *fsm.TransitionError and changes nothing. The returned slice is reused by
// the next Fire.
func (m *Machine) Fire(in Input) ([]Effect, error) { return m.w.Fire(in) }
