package run

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFastPathMatchesStateless checks, on every reachable state, that
// Fire's fast path for TrStream gives exactly the effects and state of the
// transition configured in stateless.
func TestFastPathMatchesStateless(t *testing.T) {
	var inputs []Input
	for _, tr := range Triggers {
		for _, s := range append([]string{""}, Statuses...) {
			inputs = append(inputs, Input{Trigger: tr, Status: s})
		}
	}
	seen := map[State]bool{}
	queue := []State{New().State()}
	checked := 0
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if seen[st] {
			continue
		}
		seen[st] = true
		for _, in := range inputs {
			fast, slow := FromState(st), FromState(st)
			slow.w.SetFastPath(false)
			fe, ferr := fast.Fire(in)
			se, serr := slow.Fire(in)
			if (ferr == nil) != (serr == nil) || !cmp.Equal(append([]Effect{}, fe...), append([]Effect{}, se...)) || fast.State() != slow.State() {
				t.Fatalf("from %+v on %+v: fast %v %+v %+v, stateless %v %+v %+v", st, in, ferr, fe, fast.State(), serr, se, slow.State())
			}
			if in.Trigger == TrStream && st.Phase == Streaming {
				checked++
			}
			if ferr == nil {
				queue = append(queue, fast.State())
			}
		}
	}
	if checked == 0 {
		t.Fatal("no TrStream step in Streaming was compared")
	}
}

// BenchmarkStream is the run machine's share of one streamed event.
func BenchmarkStream(b *testing.B) {
	m := FromState(State{Phase: Streaming})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Fire(Input{Trigger: TrStream}); err != nil {
			b.Fatal(err)
		}
	}
}
