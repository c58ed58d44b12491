package machine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/qmuntal/stateless"

	"octet.dev/host/fsm"
)

// Spec is what a machine package declares once, in a package variable:
// the machine's name (the tracer's Transition.Machine and the error's
// prefix), every phase and trigger, and how to read an input's trigger.
// It holds each phase and trigger already converted to the interface
// values stateless takes, so that building and firing a machine does not
// allocate them again.
type Spec[P ~string, T ~string, I any] struct {
	name     string
	trigger  func(I) T
	phases   map[P]stateless.State
	triggers map[T]stateless.Trigger
}

// NewSpec returns the Spec of a machine called name over phases and
// triggers; trigger returns an input's trigger.
func NewSpec[P ~string, T ~string, I any](name string, phases []P, triggers []T, trigger func(I) T) *Spec[P, T, I] {
	s := &Spec[P, T, I]{name: name, trigger: trigger, phases: map[P]stateless.State{}, triggers: map[T]stateless.Trigger{}}
	for _, p := range phases {
		s.phases[p] = p
	}
	for _, t := range triggers {
		s.triggers[t] = t
	}
	return s
}

// Phase returns p as stateless takes it.
func (s *Spec[P, T, I]) Phase(p P) stateless.State {
	if v, ok := s.phases[p]; ok {
		return v
	}
	return p
}

// Trigger returns t as stateless takes it.
func (s *Spec[P, T, I]) Trigger(t T) stateless.Trigger {
	if v, ok := s.triggers[t]; ok {
		return v
	}
	return t
}

// Machine is a stateless state machine over phases P and triggers T, fed
// inputs I and returning effects E.
type Machine[P ~string, T ~string, I any, E any] struct {
	spec   *Spec[P, T, I]
	phase  *P
	sm     *stateless.StateMachine
	in     I
	out    []E
	tracer fsm.Tracer
	state  func() any                  // the traced state (SetTracer); nil: none
	fast   [MaxInternal]fastStep[P, T] // held inline: building a machine allocates no table for them
	nfast  int
	noFast bool
}

// MaxInternal is how many transitions a machine may configure through
// Internal.
const MaxInternal = 4

// fastStep is a guard-free internal transition: trigger in phase runs
// action and stays.
type fastStep[P ~string, T ~string] struct {
	phase   P
	trigger T
	action  stateless.ActionFunc
}

// New returns a machine of spec whose phase is stored at *phase.
func New[P ~string, T ~string, I any, E any](spec *Spec[P, T, I], phase *P) *Machine[P, T, I, E] {
	m := &Machine[P, T, I, E]{spec: spec, phase: phase}
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.spec.Phase(*m.phase), nil },
		func(_ context.Context, s stateless.State) error { *m.phase = s.(P); return nil },
		stateless.FiringImmediate,
	)
	return m
}

// Configure returns the stateless configuration of phase p. Guards must be
// pure; actions read In and Emit effects and never return an error.
func (m *Machine[P, T, I, E]) Configure(p P) *stateless.StateConfiguration {
	return m.sm.Configure(m.spec.Phase(p))
}

// Internal configures a guard-free internal transition: t in p runs action
// and stays in p, without entry or exit actions. It must be the only
// transition of t in p. Fire takes it without stateless, calling action
// with a background context and no arguments. A machine has at most
// MaxInternal of them.
func (m *Machine[P, T, I, E]) Internal(p P, t T, action stateless.ActionFunc) *stateless.StateConfiguration {
	for _, f := range m.fast[:m.nfast] {
		if f.phase == p && f.trigger == t {
			panic(fmt.Sprintf("fsm/%s: internal transition %q in %q configured twice", m.spec.name, t, p))
		}
	}
	if m.nfast == MaxInternal {
		panic(fmt.Sprintf("fsm/%s: more than %d internal transitions", m.spec.name, MaxInternal))
	}
	m.fast[m.nfast] = fastStep[P, T]{p, t, action}
	m.nfast++
	return m.Configure(p).InternalTransition(m.spec.Trigger(t), action)
}

// In returns the input being fired (or tested by Can).
func (m *Machine[P, T, I, E]) In() I { return m.in }

// Emit appends effects to the result of the Fire in progress. It appends
// them one by one: an append of the variadic slice is a bulk copy through
// the runtime (typedslicecopy), the dearer part of a hot Fire.
func (m *Machine[P, T, I, E]) Emit(e ...E) {
	for i := range e {
		m.out = append(m.out, e[i])
	}
}

// Phase returns the current phase.
func (m *Machine[P, T, I, E]) Phase() P { return *m.phase }

// SetTracer installs a tracer for every transition taken (nil: none).
// state, if not nil, returns the machine's whole state: each traced
// transition carries it, as JSON, from before and after the step
// (fsm.Transition's FromState and ToState). Neither is called while t is
// nil.
func (m *Machine[P, T, I, E]) SetTracer(t fsm.Tracer, state func() any) {
	m.tracer, m.state = t, state
	if t == nil {
		m.state = nil
	}
}

// SetFastPath turns the fast path on (the default) or off, in which case
// every input goes through stateless. Tests compare the two.
func (m *Machine[P, T, I, E]) SetFastPath(on bool) { m.noFast = !on }

// fastFor returns the fast step of t in the current phase, if any.
func (m *Machine[P, T, I, E]) fastFor(t T) *fastStep[P, T] {
	if m.noFast {
		return nil
	}
	p := *m.phase
	for i := range m.nfast {
		if f := &m.fast[i]; f.trigger == t && f.phase == p {
			return f
		}
	}
	return nil
}

// Can reports whether the current phase accepts in. It changes nothing
// but the input In returns.
func (m *Machine[P, T, I, E]) Can(in I) bool {
	m.in = in
	t := m.spec.trigger(in)
	if m.fastFor(t) != nil {
		return true
	}
	ok, err := m.sm.CanFireCtx(context.Background(), m.spec.Trigger(t))
	return err == nil && ok
}

// Permitted returns, of triggers and in their order, those the current
// phase accepts; with builds the input tested for each.
func (m *Machine[P, T, I, E]) Permitted(triggers []T, with func(T) I) []T {
	var out []T
	for _, t := range triggers {
		if m.Can(with(t)) {
			out = append(out, t)
		}
	}
	return out
}

// Fire applies one input and returns the effects its actions emitted, in
// order. An input the current phase does not accept is a
// *fsm.TransitionError and changes nothing. The returned slice is reused
// by the next Fire.
func (m *Machine[P, T, I, E]) Fire(in I) ([]E, error) {
	m.in = in
	m.out = m.out[:0]
	from := *m.phase
	var fromState string
	if m.tracer != nil { // the hot path (a written event) skips both calls
		fromState = m.traceState()
	}
	t := m.spec.trigger(in)
	if f := m.fastFor(t); f != nil {
		checkFast(m, t)
		if err := f.action(context.Background()); err != nil {
			return nil, m.refuse(from, t, err)
		}
		if m.tracer != nil {
			m.trace(from, fromState, t)
		}
		return m.out, nil
	}
	st := m.spec.Trigger(t)
	if ok, err := m.sm.CanFireCtx(context.Background(), st); err != nil || !ok {
		return nil, m.refuse(from, t, err)
	}
	if err := m.sm.FireCtx(context.Background(), st); err != nil {
		return nil, m.refuse(from, t, err)
	}
	m.trace(from, fromState, t)
	return m.out, nil
}

func (m *Machine[P, T, I, E]) refuse(from P, t T, err error) error {
	return &fsm.TransitionError{Machine: m.spec.name, Phase: string(from), Trigger: string(t), Input: fmt.Sprintf("%+v", m.in), Err: err}
}

func (m *Machine[P, T, I, E]) trace(from P, fromState string, t T) {
	if m.tracer != nil {
		m.tracer(fsm.Transition{Machine: m.spec.name, From: string(from), To: string(*m.phase), Trigger: string(t),
			FromState: fromState, ToState: m.traceState()})
	}
}

// traceState returns the traced state as JSON, or "" when there is no
// tracer or no state to trace.
func (m *Machine[P, T, I, E]) traceState() string {
	if m.tracer == nil || m.state == nil {
		return ""
	}
	b, err := json.Marshal(m.state())
	if err != nil {
		return fmt.Sprintf("%q", err.Error()) // a State is plain data; never happens
	}
	return string(b)
}
