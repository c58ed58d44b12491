package session

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFastPathMatchesStateless checks, on every state reachable with ids
// a and b and up to three events per request, that Fire's fast path for
// TrEvent gives exactly the effects and state of the transition configured
// in stateless.
func TestFastPathMatchesStateless(t *testing.T) {
	var inputs []Input
	for _, tr := range Triggers {
		for _, id := range []string{"a", "b", ""} {
			inputs = append(inputs, Input{Trigger: tr, RequestID: id, Code: "invalid_json"})
		}
	}
	seen := map[string]bool{}
	queue := []State{New().State()}
	checked := 0
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if seen[st.Key()] {
			continue
		}
		seen[st.Key()] = true
		for _, in := range inputs {
			fast, slow := FromState(st), FromState(st)
			slow.w.SetFastPath(false)
			fe, ferr := fast.Fire(in)
			se, serr := slow.Fire(in)
			if (ferr == nil) != (serr == nil) || !cmp.Equal(append([]Effect{}, fe...), append([]Effect{}, se...)) || !cmp.Equal(fast.State(), slow.State()) {
				t.Fatalf("from %+v on %+v: fast %v %+v %+v, stateless %v %+v %+v", st, in, ferr, fe, fast.State(), serr, se, slow.State())
			}
			if in.Trigger == TrEvent && ferr == nil {
				checked++
			}
			if ferr == nil && fast.State().Seq <= 3 {
				queue = append(queue, fast.State())
			}
		}
	}
	if checked == 0 {
		t.Fatal("no TrEvent step was compared")
	}
}

// BenchmarkEvent is the session machine's share of one written event.
func BenchmarkEvent(b *testing.B) {
	m := FromState(State{Phase: Busy, Current: "r", Used: []string{"r"}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Fire(Input{Trigger: TrEvent}); err != nil {
			b.Fatal(err)
		}
	}
}
