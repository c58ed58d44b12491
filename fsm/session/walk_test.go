package session_test

// Random walks over the real machine: the events its effects write must
// satisfy the transcript invariants of package spec (the Go twins of
// tla/Session.tla's invariants) after every step, and a session that exits
// 0 must have answered every request. The graph test shows the machine has
// the spec's steps; this shows its effects write what the spec's history
// variables say they write.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/fsm/session"
	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

var walkIDs = []string{"a", "b", "c"}

// weight makes walks run long before they end (EOF, shutdown, a failed
// write).
func weight(tr session.Trigger) int {
	switch tr {
	case session.TrEOF, session.TrWriteFailed, session.TrShutdown:
		return 1
	}
	return 6
}

// candidates lists every input m accepts, one Permitted call per argument.
func candidates(m *session.Machine) []session.Input {
	var out []session.Input
	for _, id := range append(slices.Clone(walkIDs), "") {
		for _, tr := range m.Permitted(session.Input{RequestID: id, Code: "invalid_json"}) {
			switch tr {
			case session.TrRequest, session.TrShutdown:
				if id == "" {
					continue // a well-formed request always has an id
				}
			case session.TrMalformed:
			default:
				if id != "" {
					continue // takes no argument: once is enough
				}
			}
			out = append(out, session.Input{Trigger: tr, RequestID: id, Code: "invalid_json"})
		}
	}
	return out
}

// frameOf turns a write effect into the event a client reads; ok is false
// for effects that write nothing.
func frameOf(in session.Input, e session.Effect) (f spec.Frame, ok bool) {
	switch e.Kind {
	case session.EffWrite:
		return spec.Frame{RequestID: spec.ID(e.RequestID), Seq: e.Seq, Type: "text_delta"}, true
	case session.EffWriteTerminal:
		typ := protocol.TypeFinalResult
		if in.Trigger == session.TrShutdown {
			typ = protocol.TypeShutdown
		}
		return spec.Frame{RequestID: spec.ID(e.RequestID), Seq: e.Seq, Type: typ, Terminal: true}, true
	case session.EffReject:
		f := spec.Frame{Seq: e.Seq, Type: "protocol_error", Terminal: true}
		if e.RequestID != "" {
			f.RequestID = spec.ID(e.RequestID)
		}
		return f, true
	}
	return spec.Frame{}, false
}

func TestWalksSatisfySpec(t *testing.T) {
	fired := map[string]int{} // coverage: triggers fired, and a few steps worth seeing
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 0x5e55))
		m := session.New()
		var frames []spec.Frame
		var trace []string
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d: %s\nsteps: %s", seed, fmt.Sprintf(format, args...), strings.Join(trace, ", "))
		}
		for step := 0; step < 60; step++ {
			cand := candidates(m)
			if len(cand) == 0 {
				if p := m.State().Phase; p != session.Closed && p != session.Failed {
					fail("stuck in %s", m.State().Key())
				}
				break
			}
			sum := 0
			for _, in := range cand {
				sum += weight(in.Trigger)
			}
			pick := r.IntN(sum)
			var in session.Input
			for _, c := range cand {
				if pick < weight(c.Trigger) {
					in = c
					break
				}
				pick -= weight(c.Trigger)
			}
			trace = append(trace, fmt.Sprintf("%s(%s)", in.Trigger, in.RequestID))
			effs, err := m.Fire(in)
			if err != nil {
				fail("Fire(%+v): %v", in, err)
			}
			effs = slices.Clone(effs)
			fired[string(in.Trigger)]++
			if p := m.State().Phase; p == session.Draining {
				fired["in draining"]++
			}
			for i, e := range effs {
				if e.Kind == session.EffReject && e.Code == protocol.CodeDuplicateRequestID {
					fired["duplicate rejected"]++
				}
				if f, ok := frameOf(in, e); ok {
					frames = append(frames, f)
				}
				if e.Kind == session.EffExit && i != len(effs)-1 {
					fail("exit is not the last effect: %+v", effs)
				}
			}
			if err := spec.All(frames); err != nil {
				fail("%v", err)
			}
			if n := len(effs); n > 0 && effs[n-1].Kind == session.EffExit {
				switch p := m.State().Phase; {
				case p == session.Closed && effs[n-1].ExitCode == 0:
					if err := spec.Complete(frames); err != nil {
						fail("exit 0 with a request unanswered: %v", err)
					}
				case p == session.Failed && effs[n-1].ExitCode == 1:
					if n < 2 || effs[n-2].Kind != session.EffAbort {
						fail("exit 1 without abort first: %+v", effs)
					}
				default:
					fail("exit %d in phase %s", effs[n-1].ExitCode, p)
				}
			}
		}
	}
	want := []string{"in draining", "duplicate rejected"}
	for _, tr := range session.Triggers {
		want = append(want, string(tr))
	}
	for _, w := range want {
		if fired[w] == 0 {
			t.Errorf("walks never saw %q: %v", w, fired)
		}
	}
	t.Logf("coverage: %v", fired)
}
