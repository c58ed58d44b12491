// Package run is the run lifecycle machine (CONTRACT §9): a run request is
// received, then either rejected (a single final_result error, no accepted)
// or accepted → started → streaming → settled → final. Exactly one final,
// nothing after it; streaming events only between started and settled;
// settled announces the status final_result will carry.
//
// The machine is pure and built on github.com/qmuntal/stateless with
// external storage; tla/RunLifecycle.tla is its spec. A Machine is owned by
// one goroutine (the run's driver).
package run

import (
	"context"
	"fmt"

	"github.com/qmuntal/stateless"

	"octet.dev/host/fsm"
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

// Machine is the run lifecycle machine.
type Machine struct {
	noFast bool // tests: route every input through stateless
	sm     *stateless.StateMachine
	st     State
	in     Input
	out    []Effect
	tracer fsm.Tracer
}

// New returns a machine in the Received phase.
func New() *Machine { return FromState(State{Phase: Received}) }

// FromState returns a machine positioned at st (for enumeration in tests).
func FromState(st State) *Machine {
	m := &Machine{st: st}
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.st.Phase, nil },
		func(_ context.Context, s stateless.State) error { m.st.Phase = s.(Phase); return nil },
		stateless.FiringImmediate,
	)
	validStatus := func(context.Context, ...any) bool {
		for _, s := range Statuses {
			if m.in.Status == s {
				return true
			}
		}
		return false
	}
	stream := func(context.Context, ...any) error {
		m.out = append(m.out, Effect{Kind: EffStream})
		return nil
	}

	m.sm.Configure(Received).
		Permit(TrAccept, Accepted).
		Permit(TrReject, Final)

	m.sm.Configure(Accepted).
		OnEntry(func(context.Context, ...any) error {
			m.out = append(m.out, Effect{Kind: EffAccepted})
			return nil
		}).
		Permit(TrStart, Started).
		Permit(TrSettle, Settled, validStatus)

	m.sm.Configure(Started).
		OnEntry(func(context.Context, ...any) error {
			m.out = append(m.out, Effect{Kind: EffStarted})
			return nil
		}).
		Permit(TrStream, Streaming).
		Permit(TrSettle, Settled, validStatus)

	m.sm.Configure(Streaming).
		OnEntry(stream).
		InternalTransition(TrStream, stream).
		Permit(TrSettle, Settled, validStatus)

	m.sm.Configure(Settled).
		OnEntry(func(context.Context, ...any) error {
			m.st.Status = m.in.Status
			m.out = append(m.out, Effect{Kind: EffSettled, Status: m.st.Status})
			return nil
		}).
		Permit(TrFinalize, Final)

	m.sm.Configure(Final).
		OnEntryFrom(TrReject, func(context.Context, ...any) error {
			m.st.Status = StatusError
			m.out = append(m.out, Effect{Kind: EffFinal, Status: StatusError})
			return nil
		}).
		OnEntryFrom(TrFinalize, func(context.Context, ...any) error {
			m.out = append(m.out, Effect{Kind: EffFinal, Status: m.st.Status})
			return nil
		})
	return m
}

// SetTracer installs a tracer for every transition taken.
func (m *Machine) SetTracer(t fsm.Tracer) { m.tracer = t }

// State returns the current state.
func (m *Machine) State() State { return m.st }

// Permitted returns the triggers accepted for in's arguments in the current
// state, in the order of Triggers.
func (m *Machine) Permitted(in Input) []Trigger {
	var out []Trigger
	for _, t := range Triggers {
		in.Trigger = t
		m.in = in
		if ok, err := m.sm.CanFireCtx(context.Background(), t); err == nil && ok {
			out = append(out, t)
		}
	}
	return out
}

// Fire applies one input and returns the events to write, in order. An
// input the current state does not accept is an error and changes nothing.
// The returned slice is reused by the next Fire.
func (m *Machine) Fire(in Input) ([]Effect, error) {
	m.in = in
	m.out = m.out[:0]
	from := m.st.Phase
	// Fast path for the hottest input, one per streamed event: Streaming's
	// internal TrStream transition, done without stateless's per-fire
	// allocations. TestFastPathMatchesStateless checks it equals the
	// configured transition on every reachable state.
	if in.Trigger == TrStream && from == Streaming && !m.noFast {
		m.out = append(m.out, Effect{Kind: EffStream})
		if m.tracer != nil {
			m.tracer(fsm.Transition{Machine: "run", From: string(from), To: string(from), Trigger: string(in.Trigger)})
		}
		return m.out, nil
	}
	if ok, err := m.sm.CanFireCtx(context.Background(), in.Trigger); err != nil || !ok {
		return nil, fmt.Errorf("fsm/run: trigger %q (status %q) not permitted in phase %q", in.Trigger, in.Status, from)
	}
	if err := m.sm.FireCtx(context.Background(), in.Trigger); err != nil {
		panic(fmt.Sprintf("fsm/run: %s in %s: %v", in.Trigger, from, err))
	}
	if m.tracer != nil {
		m.tracer(fsm.Transition{Machine: "run", From: string(from), To: string(m.st.Phase), Trigger: string(in.Trigger)})
	}
	return m.out, nil
}
