package machine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"octet.dev/host/fsm"
)

type phase string
type trigger string

type input struct {
	Trigger trigger
	N       int
}

type effect struct {
	Kind string
	N    int
}

// toy is a two-phase counter: "tick" in "on" is a fast internal
// transition, "add" in "on" a guarded one, "stop" leaves for "off".
type toy struct {
	w     *Machine[phase, trigger, input, effect]
	phase phase
	count int
}

var toySpec = NewSpec("toy", []phase{"on", "off"}, triggers, func(in input) trigger { return in.Trigger })

func newToy(p phase) *toy {
	t := &toy{phase: p}
	w := New[phase, trigger, input, effect](toySpec, &t.phase)
	t.w = w
	w.Internal("on", "tick", func(context.Context, ...any) error {
		t.count++
		w.Emit(effect{"ticked", t.count})
		return nil
	}).
		InternalTransition(trigger("add"), func(context.Context, ...any) error {
			t.count += w.In().N
			w.Emit(effect{"added", t.count})
			return nil
		}, func(context.Context, ...any) bool { return w.In().N > 0 }).
		Permit(trigger("stop"), phase("off"))
	w.Configure("off").
		OnEntry(func(context.Context, ...any) error {
			w.Emit(effect{"stopped", t.count}, effect{"bye", 0})
			return nil
		})
	return t
}

var triggers = []trigger{"tick", "add", "stop", "nope"}

// TestFastPathMatchesStateless fires every input from every state of the
// toy with and without the fast path and compares effects, state, errors
// and traces.
func TestFastPathMatchesStateless(t *testing.T) {
	for _, p := range []phase{"on", "off"} {
		for _, tr := range triggers {
			for _, n := range []int{0, 2} {
				in := input{tr, n}
				var traces [2][]fsm.Transition
				var effs [2][]effect
				var errs [2]error
				var toys [2]*toy
				for i, fast := range []bool{true, false} {
					m := newToy(p)
					m.count = 5
					m.w.SetFastPath(fast)
					m.w.SetTracer(func(tr fsm.Transition) { traces[i] = append(traces[i], tr) }, nil)
					e, err := m.w.Fire(in)
					effs[i], errs[i], toys[i] = slices.Clone(e), err, m
				}
				if (errs[0] == nil) != (errs[1] == nil) || !slices.Equal(effs[0], effs[1]) || !slices.Equal(traces[0], traces[1]) ||
					toys[0].phase != toys[1].phase || toys[0].count != toys[1].count {
					t.Errorf("%s on %+v: fast %v %v %v, stateless %v %v %v", p, in, errs[0], effs[0], traces[0], errs[1], effs[1], traces[1])
				}
			}
		}
	}
	m := newToy("on")
	if e, err := m.w.Fire(input{Trigger: "tick"}); err != nil || !slices.Equal(e, []effect{{"ticked", 1}}) {
		t.Errorf("tick: %v %v", e, err)
	}
	if e, err := m.w.Fire(input{Trigger: "stop"}); err != nil || !slices.Equal(e, []effect{{"stopped", 1}, {"bye", 0}}) || m.phase != "off" {
		t.Errorf("stop: %v %v, phase %s", e, err, m.phase)
	}
}

func TestRefusalIsTypedAndChangesNothing(t *testing.T) {
	m := newToy("on")
	var traced []fsm.Transition
	m.w.SetTracer(func(tr fsm.Transition) { traced = append(traced, tr) }, nil)
	for _, in := range []input{{Trigger: "add", N: 0}, {Trigger: "nope"}} {
		e, err := m.w.Fire(in)
		var te *fsm.TransitionError
		if e != nil || !errors.As(err, &te) || te.Machine != "toy" || te.Phase != "on" || te.Trigger != string(in.Trigger) || te.Err != nil {
			t.Fatalf("Fire(%+v) = %v, %#v", in, e, err)
		}
		if want := `fsm/toy: trigger "` + string(in.Trigger) + `" not permitted in phase "on"`; err.Error()[:len(want)] != want {
			t.Errorf("message %q, want prefix %q", err, want)
		}
	}
	if m.phase != "on" || m.count != 0 || len(traced) != 0 {
		t.Errorf("a refused input changed the machine: %s %d %v", m.phase, m.count, traced)
	}
	m.w.Fire(input{Trigger: "stop"})
	if _, err := m.w.Fire(input{Trigger: "tick"}); err == nil {
		t.Error("tick after stop was accepted: the fast path ignored the phase")
	}
}

func TestPermitted(t *testing.T) {
	m := newToy("on")
	with := func(n int) func(trigger) input { return func(tr trigger) input { return input{tr, n} } }
	if got := m.w.Permitted(triggers, with(0)); !slices.Equal(got, []trigger{"tick", "stop"}) {
		t.Errorf("Permitted(n=0) = %v", got)
	}
	if got := m.w.Permitted(triggers, with(1)); !slices.Equal(got, []trigger{"tick", "add", "stop"}) {
		t.Errorf("Permitted(n=1) = %v", got)
	}
	m.w.SetFastPath(false)
	if got := m.w.Permitted(triggers, with(0)); !slices.Equal(got, []trigger{"tick", "stop"}) {
		t.Errorf("Permitted without the fast path = %v", got)
	}
	if m.count != 0 || m.phase != "on" {
		t.Errorf("Permitted changed the machine")
	}
}

func TestInternalTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second internal transition of the same trigger was accepted")
		}
	}()
	m := newToy("on")
	m.w.Internal("on", "tick", func(context.Context, ...any) error { return nil })
}

func TestFastPathAllocatesNothing(t *testing.T) {
	if Invariants {
		t.Skip("the invariants build checks every fast step through stateless")
	}
	m := newToy("on")
	if a := testing.AllocsPerRun(1000, func() { m.w.Fire(input{Trigger: "tick"}) }); a != 0 {
		t.Errorf("a fast step allocates %.1f times", a)
	}
}

func BenchmarkFire(b *testing.B) {
	for _, fast := range []bool{true, false} {
		name := "stateless"
		if fast {
			name = "fast"
		}
		b.Run(name, func(b *testing.B) {
			m := newToy("on")
			m.w.SetFastPath(fast)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.w.Fire(input{Trigger: "tick"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
