package session

import (
	"context"
	"fmt"
	"slices"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/internal/machine"
	"octet.dev/host/protocol"
)

// Phase is the coarse state of the session.
type Phase string

// Phases.
const (
	Idle     Phase = "idle"     // waiting for the next request line
	Busy     Phase = "busy"     // serving a request; its terminal event not yet written
	Draining Phase = "draining" // stdin reached EOF while busy: finish, then exit 0
	Closed   Phase = "closed"   // exited 0 (shutdown, or EOF)
	Failed   Phase = "failed"   // the output failed: exit 1
)

// Trigger is an input kind.
type Trigger string

// Triggers.
const (
	// TrRequest: a well-formed request other than shutdown was read.
	TrRequest Trigger = "request"
	// TrShutdown: a well-formed shutdown request was read.
	TrShutdown Trigger = "shutdown"
	// TrMalformed: a line that is malformed as protocol was read.
	TrMalformed Trigger = "malformed"
	// TrEvent: the current request is about to write a non-terminal event.
	TrEvent Trigger = "event"
	// TrTerminal: the current request is about to write its terminal event.
	TrTerminal Trigger = "terminal"
	// TrEOF: stdin reached end of input.
	TrEOF Trigger = "eof"
	// TrWriteFailed: writing to stdout failed (the caller is gone).
	TrWriteFailed Trigger = "write_failed"
)

// Triggers lists every trigger, in a fixed order.
var Triggers = []Trigger{TrRequest, TrShutdown, TrMalformed, TrEvent, TrTerminal, TrEOF, TrWriteFailed}

// EffectKind names an effect the driver must perform.
type EffectKind string

// Effects, performed in the order returned.
const (
	// EffStart: start serving the request (Effect.RequestID).
	EffStart EffectKind = "start"
	// EffWrite: write a non-terminal event with Effect.Seq.
	EffWrite EffectKind = "write"
	// EffWriteTerminal: write the request's terminal event with Effect.Seq.
	EffWriteTerminal EffectKind = "write_terminal"
	// EffReject: write a terminal protocol_error with Effect.Code and seq 1
	// for Effect.RequestID ("" means null).
	EffReject EffectKind = "reject"
	// EffAbort: abort active work and clean up child process groups.
	EffAbort EffectKind = "abort"
	// EffExit: flush and exit with Effect.ExitCode.
	EffExit EffectKind = "exit"
)

// Effect is one thing the driver must do.
type Effect struct {
	Kind      EffectKind
	RequestID string
	Seq       int
	Code      protocol.Code
	ExitCode  int
}

// Input is one trigger with its arguments. RequestID is the request's ID
// (for TrMalformed, "" when the line yielded none); Code is the
// protocol_error code of TrMalformed.
type Input struct {
	Trigger   Trigger
	RequestID string
	Code      protocol.Code
}

// State is the machine's whole state.
type State struct {
	Phase   Phase
	Current string // request being served ("" when idle)
	Seq     int    // seq of the last event written for Current
	Used    []string
}

// Clone returns a deep copy.
func (s State) Clone() State {
	s.Used = slices.Clone(s.Used)
	return s
}

// Key is a canonical string for State, for graph enumeration.
func (s State) Key() string {
	return fmt.Sprintf("%s|%s|%d|%v", s.Phase, s.Current, s.Seq, s.Used)
}

func (s State) used(id string) bool {
	_, ok := slices.BinarySearch(s.Used, id)
	return ok
}

func (s *State) use(id string) {
	if i, ok := slices.BinarySearch(s.Used, id); !ok {
		s.Used = slices.Insert(s.Used, i, id)
	}
}

var spec = machine.NewSpec("session", []Phase{Idle, Busy, Draining, Closed, Failed}, Triggers,
	func(in Input) Trigger { return in.Trigger })

// Machine is the protocol session machine.
type Machine struct {
	w  *machine.Machine[Phase, Trigger, Input, Effect]
	st State
}

// New returns a machine in the Idle phase.
func New() *Machine { return FromState(State{Phase: Idle}) }

// FromState returns a machine positioned at st (for enumeration in tests).
func FromState(st State) *Machine {
	m := &Machine{st: st.Clone()}
	slices.Sort(m.st.Used) // used() relies on a sorted set
	m.st.Used = slices.Compact(m.st.Used)
	w := machine.New[Phase, Trigger, Input, Effect](spec, &m.st.Phase)
	m.w = w
	// A request needs an ID; guards are pure and mutually exclusive.
	fresh := func(context.Context, ...any) bool { id := w.In().RequestID; return id != "" && !m.st.used(id) }
	reused := func(context.Context, ...any) bool { id := w.In().RequestID; return id != "" && m.st.used(id) }

	reject := func(context.Context, ...any) error {
		// A reused request_id is reported as such even on a malformed
		// line: its own fault would be a second, ambiguous answer to the
		// earlier request's ID.
		in := w.In()
		code := in.Code
		if in.Trigger != TrMalformed || (in.RequestID != "" && m.st.used(in.RequestID)) {
			code = protocol.CodeDuplicateRequestID
		}
		if in.RequestID != "" {
			m.st.use(in.RequestID)
		}
		w.Emit(Effect{Kind: EffReject, RequestID: in.RequestID, Seq: 1, Code: code})
		return nil
	}
	// The hot input, one per written event: a guard-free internal
	// transition of Busy and Draining, which Fire takes without stateless.
	// Seq is counted here and nowhere else.
	event := func(context.Context, ...any) error {
		m.st.Seq++
		w.Emit(Effect{Kind: EffWrite, RequestID: m.st.Current, Seq: m.st.Seq})
		return nil
	}

	w.Configure(Idle).
		Permit(TrRequest, Busy, fresh).
		InternalTransition(TrRequest, reject, reused).
		Permit(TrShutdown, Closed, fresh).
		InternalTransition(TrShutdown, reject, reused).
		InternalTransition(TrMalformed, reject).
		Permit(TrEOF, Closed).
		Permit(TrWriteFailed, Failed).
		OnEntryFrom(TrTerminal, func(context.Context, ...any) error {
			m.finish()
			return nil
		})

	w.Internal(Busy, TrEvent, event).
		OnEntryFrom(TrRequest, func(context.Context, ...any) error {
			id := w.In().RequestID
			m.st.use(id)
			m.st.Current, m.st.Seq = id, 0
			w.Emit(Effect{Kind: EffStart, RequestID: id})
			return nil
		}).
		Permit(TrTerminal, Idle).
		Permit(TrEOF, Draining).
		Permit(TrWriteFailed, Failed)

	w.Internal(Draining, TrEvent, event).
		Permit(TrTerminal, Closed).
		Permit(TrWriteFailed, Failed)

	w.Configure(Closed).
		OnEntryFrom(TrShutdown, func(context.Context, ...any) error {
			id := w.In().RequestID
			m.st.use(id)
			w.Emit(Effect{Kind: EffWriteTerminal, RequestID: id, Seq: 1}, Effect{Kind: EffExit, ExitCode: 0})
			return nil
		}).
		OnEntryFrom(TrEOF, func(context.Context, ...any) error {
			w.Emit(Effect{Kind: EffExit, ExitCode: 0})
			return nil
		}).
		OnEntryFrom(TrTerminal, func(context.Context, ...any) error {
			m.finish()
			w.Emit(Effect{Kind: EffExit, ExitCode: 0})
			return nil
		})

	w.Configure(Failed).
		OnEntry(func(context.Context, ...any) error {
			m.st.Current, m.st.Seq = "", 0
			w.Emit(Effect{Kind: EffAbort}, Effect{Kind: EffExit, ExitCode: 1})
			return nil
		})
	return m
}

// finish emits the current request's terminal event and forgets it.
func (m *Machine) finish() {
	m.st.Seq++
	m.w.Emit(Effect{Kind: EffWriteTerminal, RequestID: m.st.Current, Seq: m.st.Seq})
	m.st.Current, m.st.Seq = "", 0
}

// SetTracer installs a tracer for every transition taken, with the
// machine's state (fsm.Transition).
func (m *Machine) SetTracer(t fsm.Tracer) {
	m.w.SetTracer(t, func() any { return traceState{m.st.Phase, m.st.Current, m.st.Seq, len(m.st.Used)} })
}

// traceState is the state a transition is traced with: the used request
// IDs are counted, not listed, so a trace line stays small however long
// the session.
type traceState struct {
	Phase   Phase
	Current string
	Seq     int
	Used    int
}

// State returns a copy of the current state.
func (m *Machine) State() State { return m.st.Clone() }

// NextSeq returns the seq the current request's next event, terminal or
// not, will carry (1 when no request is being served). The session machine
// is the one owner of seq: the driver encodes an event with NextSeq, fires
// TrEvent or TrTerminal for it, and writes it with the seq of the effect.
func (m *Machine) NextSeq() int { return m.st.Seq + 1 }

// Permitted returns the triggers the machine accepts for in's arguments in
// its current state, in the order of Triggers.
func (m *Machine) Permitted(in Input) []Trigger {
	return m.w.Permitted(Triggers, func(t Trigger) Input { in.Trigger = t; return in })
}

// Fire applies one input and returns the effects to perform, in order. An
// input the current state does not accept is a *fsm.TransitionError and
// changes nothing. The returned slice is reused by the next Fire.
func (m *Machine) Fire(in Input) ([]Effect, error) { return m.w.Fire(in) }
