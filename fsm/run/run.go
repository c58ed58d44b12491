package run

import (
	"context"
	"slices"

	"github.com/qmuntal/stateless"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/internal/machine"
	"octet.dev/host/protocol"
)

// Phase is the lifecycle phase of a run.
type Phase string

// Phases.
const (
	Received  Phase = "received"  // decoded, not yet validated
	Accepted  Phase = "accepted"  // validated; accepted event written
	Started   Phase = "started"   // started event written
	Streaming Phase = "streaming" // at least one streaming event written
	Settled   Phase = "settled"   // settled event written; status fixed
	Final     Phase = "final"     // final_result written; absorbing
)

// Trigger is an input kind.
type Trigger string

// Triggers.
const (
	TrAccept   Trigger = "accept"   // validation passed
	TrReject   Trigger = "reject"   // validation failed: final error without accepted
	TrStart    Trigger = "start"    // the run begins working
	TrStream   Trigger = "stream"   // a streaming event (delta, tool, step, retry…)
	TrSettle   Trigger = "settle"   // the outcome is known (Input.Status)
	TrFinalize Trigger = "finalize" // write final_result
)

// Triggers lists every trigger in a fixed order.
var Triggers = []Trigger{TrAccept, TrReject, TrStart, TrStream, TrSettle, TrFinalize}

// Statuses of a settled run (final_result.status): the protocol's, named
// here for this package.
const (
	StatusCompleted = protocol.StatusCompleted
	StatusBlocked   = protocol.StatusBlocked
	StatusError     = protocol.StatusError
)

// Statuses lists the statuses in a fixed order.
var Statuses = []string{StatusCompleted, StatusBlocked, StatusError}

// EffectKind names an event the driver must write.
type EffectKind string

// Effects.
const (
	EffAccepted EffectKind = "accepted"
	EffStarted  EffectKind = "started"
	EffStream   EffectKind = "stream"
	EffSettled  EffectKind = "settled"
	EffFinal    EffectKind = "final_result"
)

// Effect is one event to write. Status is set for EffSettled and EffFinal.
type Effect struct {
	Kind   EffectKind
	Status string
}

// Input is a trigger with its argument (Status for TrSettle).
type Input struct {
	Trigger Trigger
	Status  string
}

// State is the machine's whole state.
type State struct {
	Phase  Phase
	Status string // set from settled on ("error" for a rejected run)
}

var spec = machine.NewSpec("run", []Phase{Received, Accepted, Started, Streaming, Settled, Final}, Triggers,
	func(in Input) Trigger { return in.Trigger })

// Machine is the run lifecycle machine.
type Machine struct {
	w  *machine.Machine[Phase, Trigger, Input, Effect]
	st State
}

// New returns a machine in the Received phase.
func New() *Machine { return FromState(State{Phase: Received}) }

// FromState returns a machine positioned at st (for enumeration in tests).
func FromState(st State) *Machine {
	m := &Machine{st: st}
	w := machine.New[Phase, Trigger, Input, Effect](spec, &m.st.Phase)
	m.w = w
	validStatus := func(context.Context, ...any) bool {
		return slices.Contains(Statuses, w.In().Status)
	}
	emit := func(k EffectKind) stateless.ActionFunc {
		return func(context.Context, ...any) error { w.Emit(Effect{Kind: k}); return nil }
	}
	stream := emit(EffStream)

	w.Configure(Received).
		Permit(TrAccept, Accepted).
		Permit(TrReject, Final)

	w.Configure(Accepted).
		OnEntry(emit(EffAccepted)).
		Permit(TrStart, Started).
		Permit(TrSettle, Settled, validStatus)

	w.Configure(Started).
		OnEntry(emit(EffStarted)).
		Permit(TrStream, Streaming).
		Permit(TrSettle, Settled, validStatus)

	// The hot input, one per streamed event: a guard-free internal
	// transition, which Fire takes without stateless.
	w.Internal(Streaming, TrStream, stream).
		OnEntry(stream).
		Permit(TrSettle, Settled, validStatus)

	w.Configure(Settled).
		OnEntry(func(context.Context, ...any) error {
			m.st.Status = w.In().Status
			w.Emit(Effect{Kind: EffSettled, Status: m.st.Status})
			return nil
		}).
		Permit(TrFinalize, Final)

	w.Configure(Final).
		OnEntryFrom(TrReject, func(context.Context, ...any) error {
			m.st.Status = StatusError
			w.Emit(Effect{Kind: EffFinal, Status: StatusError})
			return nil
		}).
		OnEntryFrom(TrFinalize, func(context.Context, ...any) error {
			w.Emit(Effect{Kind: EffFinal, Status: m.st.Status})
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

// Fire applies one input and returns the events to write, in order. An
// input the current state does not accept is a *fsm.TransitionError and
// changes nothing. The returned slice is reused by the next Fire.
func (m *Machine) Fire(in Input) ([]Effect, error) { return m.w.Fire(in) }
