package run_test

// Random walks over the real machine: the events its effects write must
// satisfy the run invariants of package spec (the Go twins of
// tla/RunLifecycle.tla's invariants) after every step, and a run that
// reached final must be complete. The graph test shows the machine has the
// spec's steps; this shows its effects write what the spec's history
// variables say they write. TestTranscriptLanguage then shows, for every
// transcript up to a length, that spec.RunLifecycle admits exactly what the
// machine can write, so a host test that checks a run with it checks the
// machine's language, no more and no less.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

// weight makes walks stream for a while before they settle; Reject, which
// ends a run at once, is rare.
func weight(in run.Input) int {
	switch in.Trigger {
	case run.TrReject:
		return 1
	case run.TrSettle:
		return 2 // per status: 6 in all
	case run.TrStream:
		return 12
	}
	return 6
}

// candidates lists every input m accepts, one Permitted call per status
// argument (valid and not).
func candidates(m *run.Machine) []run.Input {
	var out []run.Input
	for _, s := range append(slices.Clone(run.Statuses), badStatuses...) {
		for _, tr := range m.Permitted(run.Input{Status: s}) {
			if tr != run.TrSettle && s != "" {
				continue // takes no argument: once is enough
			}
			out = append(out, run.Input{Trigger: tr, Status: s})
		}
	}
	return out
}

// eventOf turns an effect into the event the host writes; stream is the
// streaming type to use for EffStream.
func eventOf(e run.Effect, stream protocol.EventType) spec.RunEvent {
	switch e.Kind {
	case run.EffAccepted:
		return spec.RunEvent{Type: protocol.TypeAccepted}
	case run.EffStarted:
		return spec.RunEvent{Type: protocol.TypeStarted}
	case run.EffStream:
		return spec.RunEvent{Type: stream}
	case run.EffSettled:
		return spec.RunEvent{Type: protocol.TypeSettled, Status: e.Status}
	case run.EffFinal:
		return spec.RunEvent{Type: protocol.TypeFinalResult, Status: e.Status}
	}
	panic(fmt.Sprintf("unknown effect %+v", e))
}

func TestWalksSatisfySpec(t *testing.T) {
	streaming := protocol.StreamingTypes()
	fired := map[string]int{} // coverage: triggers fired, and a few steps worth seeing
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 0x2a7))
		m := run.New()
		var trans []fsmStep
		m.SetTracer(func(tr fsm.Transition) { trans = append(trans, fsmStep{tr.From, tr.To, tr.Trigger}) })
		var events []spec.RunEvent
		var trace []string
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d: %s\nsteps: %s", seed, fmt.Sprintf(format, args...), strings.Join(trace, ", "))
		}
		for step := 0; step < 40; step++ {
			cand := candidates(m)
			if len(cand) == 0 {
				if p := m.State().Phase; p != run.Final {
					fail("stuck in %+v", m.State())
				}
				break
			}
			sum := 0
			for _, in := range cand {
				if in.Trigger == run.TrSettle && !validStatus(in.Status) {
					fail("settle with status %q offered in %+v", in.Status, m.State())
				}
				sum += weight(in)
			}
			pick := r.IntN(sum)
			var in run.Input
			for _, c := range cand {
				if pick < weight(c) {
					in = c
					break
				}
				pick -= weight(c)
			}
			from := m.State()
			trace = append(trace, fmt.Sprintf("%s(%s)", in.Trigger, in.Status))
			effs, err := m.Fire(in)
			if err != nil {
				fail("Fire(%+v): %v", in, err)
			}
			to := m.State()
			if n := len(trans); n == 0 || trans[n-1] != (fsmStep{string(from.Phase), string(to.Phase), string(in.Trigger)}) {
				fail("tracer saw %v for %s -%s-> %s", trans, from.Phase, in.Trigger, to.Phase)
			}
			if len(effs) != 1 {
				fail("%s wrote %d events %+v, want one", in.Trigger, len(effs), effs)
			}
			fired[string(in.Trigger)]++
			if in.Trigger == run.TrSettle {
				fired[fmt.Sprintf("settle %s from %s", in.Status, from.Phase)]++
			}
			for _, e := range effs {
				events = append(events, eventOf(e, streaming[r.IntN(len(streaming))]))
			}
			if err := spec.RunLifecycle(events); err != nil {
				fail("%v\nevents: %+v", err, events)
			}
			// The machine's status is what settled announced (or error for a
			// rejection), from settled on.
			if to.Phase == run.Settled || to.Phase == run.Final {
				want := run.StatusError
				for _, e := range events {
					if e.Type == protocol.TypeSettled {
						want = e.Status
					}
				}
				if to.Status != want {
					fail("status %q in %s, events %+v", to.Status, to.Phase, events)
				}
			}
			if to.Phase == run.Final {
				if err := spec.RunComplete(events); err != nil {
					fail("final but %v", err)
				}
				// RejectedHasNoAccepted, as the machine sees it: a rejected run
				// wrote its final_result error and nothing else.
				if in.Trigger == run.TrReject && !slices.Equal(events, []spec.RunEvent{{Type: protocol.TypeFinalResult, Status: protocol.StatusError}}) {
					fail("rejected run wrote %+v", events)
				}
			} else if spec.RunComplete(events) == nil {
				fail("final_result written in %s", to.Phase)
			}
		}
		if m.State().Phase != run.Final {
			fail("walk ended in %+v", m.State())
		}
	}
	want := []string{}
	for _, tr := range run.Triggers {
		want = append(want, string(tr))
	}
	for _, s := range run.Statuses {
		for _, p := range []run.Phase{run.Accepted, run.Started, run.Streaming} {
			want = append(want, fmt.Sprintf("settle %s from %s", s, p))
		}
	}
	for _, w := range want {
		if fired[w] == 0 {
			t.Errorf("walks never saw %q: %v", w, fired)
		}
	}
	t.Logf("coverage: %v", fired)
}

// fsmStep is a transition the tracer saw.
type fsmStep struct{ from, to, trigger string }

// transcriptLen bounds TestTranscriptLanguage: long enough for the longest
// run of the TLA+ model (accepted, started, two streaming events, settled,
// final_result) and one event more.
const transcriptLen = 7

// TestTranscriptLanguage: spec.RunLifecycle holds on a transcript exactly
// when the machine can write it (with "model_delta" for its streaming
// event), for every transcript of up to transcriptLen events over an
// alphabet of every lifecycle event and status, a streaming type, and
// events the predicates must refuse. Both sets are prefix-closed (the
// machine's by construction, the predicates' by spec's own tests), so it
// is enough to extend the machine's transcripts by one event each: an
// extension must be admitted exactly when the machine writes it.
func TestTranscriptLanguage(t *testing.T) {
	alpha := []spec.RunEvent{
		{Type: protocol.TypeAccepted}, {Type: protocol.TypeStarted}, {Type: "model_delta"},
		{Type: protocol.TypeSettled}, {Type: protocol.TypeFinalResult}, {Type: "hello"},
	}
	for _, s := range append(slices.Clone(run.Statuses), "done") {
		alpha = append(alpha, spec.RunEvent{Type: protocol.TypeSettled, Status: s}, spec.RunEvent{Type: protocol.TypeFinalResult, Status: s})
	}
	type prefix struct {
		st     run.State
		events []spec.RunEvent
	}
	if err := spec.RunLifecycle(nil); err != nil {
		t.Fatalf("empty transcript: %v", err)
	}
	queue := []prefix{{run.New().State(), nil}}
	words := 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		words++
		if len(p.events) == transcriptLen {
			continue
		}
		// What the machine can write next, and where it goes.
		next := map[spec.RunEvent]run.State{}
		for _, tr := range run.Triggers {
			for _, in := range inputs(tr) {
				m := run.FromState(p.st)
				effs, err := m.Fire(in)
				if err != nil {
					continue
				}
				if len(effs) != 1 {
					t.Fatalf("%+v: %+v wrote %+v", p.st, in, effs)
				}
				e := eventOf(effs[0], "model_delta")
				if prev, ok := next[e]; ok && prev != m.State() {
					t.Fatalf("%+v: writing %+v leads to %+v and %+v", p.st, e, prev, m.State())
				}
				next[e] = m.State()
			}
		}
		for _, e := range alpha {
			ext := append(p.events[:len(p.events):len(p.events)], e)
			st, writes := next[e]
			err := spec.RunLifecycle(ext)
			switch {
			case writes && err != nil:
				t.Errorf("the machine writes %+v, spec refuses it: %v", ext, err)
			case !writes && err == nil:
				t.Errorf("spec admits %+v, the machine cannot write it", ext)
			case writes:
				queue = append(queue, prefix{st, ext})
			}
		}
		for e := range next {
			if !slices.Contains(alpha, e) {
				t.Errorf("%+v writes %+v, which is not in the alphabet", p.st, e)
			}
		}
	}
	t.Logf("%d transcripts of up to %d events, each extended by %d events", words, transcriptLen, len(alpha))
}
