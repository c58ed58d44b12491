package run_test

// The spec-to-code tie of DESIGN §4: enumerate the real machine's reachable
// graph and require it to be the graph of tla/RunLifecycle.tla, which
// tla/check.mjs exports to tla/RunLifecycle.graph.json (and keeps equal to
// what tla-checker explores). The explorer also checks what the checker
// cannot: deadlock freedom outside final, that final is absorbing, that
// every non-final state can still reach final, and that the only cycle is
// streaming's own (no livelock).

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"octet.dev/host/fsm/internal/graphcheck"
	"octet.dev/host/fsm/run"
)

// The model of tla/RunLifecycle.cfg: MaxStream = 2.
const maxStream = 2

const graphFile = "../../tla/RunLifecycle.graph.json"

// specNone is RunLifecycle.tla's None, the "no status yet" value; Go uses "".
const specNone = "none"

// specState is a state of RunLifecycle.tla as GraphView projects it: the
// machine's variables only. The spec's history variables (the events
// written, whether Reject fired) exist to state its invariants; the machine
// has no counterpart, so the export projects them away and both sides
// compare what they share. Fields are in the order of the canonical JSON
// check.mjs writes.
type specState struct {
	Phase  string `json:"phase"`
	Status string `json:"status"`
}

func (s specState) key() string { return graphcheck.Key(s) }

// toSpec maps a machine state to the spec's variables: phase strings are
// the same, Status "" is None, any other status is itself.
func toSpec(st run.State) specState {
	status := st.Status
	if status == "" {
		status = specNone
	}
	return specState{Phase: string(st.Phase), Status: status}
}

// actionOf names the spec action of each trigger. Edges are compared with
// these labels, so a machine whose triggers reach the right states by the
// wrong steps fails. Settle's status argument does not show in the label
// (tla-checker names an action by its operator only); it shows as different
// successors.
var actionOf = map[run.Trigger]string{
	run.TrAccept:   "Accept",
	run.TrReject:   "Reject",
	run.TrStart:    "Start",
	run.TrStream:   "Stream",
	run.TrSettle:   "Settle",
	run.TrFinalize: "Finalize",
}

// doneAction is the spec's stuttering step in final, where the run is over;
// the machine accepts nothing there.
const doneAction = "Done"

// badStatuses are status arguments the machine must refuse.
var badStatuses = []string{"", "Completed", "done", specNone}

// inputs lists every input of trigger t in the model: TrSettle with each
// status (valid and not), the others with none.
func inputs(t run.Trigger) []run.Input {
	if t != run.TrSettle {
		return []run.Input{{Trigger: t}}
	}
	var in []run.Input
	for _, s := range append(slices.Clone(run.Statuses), badStatuses...) {
		in = append(in, run.Input{Trigger: t, Status: s})
	}
	return in
}

func validStatus(s string) bool { return slices.Contains(run.Statuses, s) }

// machineGraph is the machine's reachable graph, states keyed by their
// spec mapping.
type machineGraph struct {
	graphcheck.Graph
	states map[string]run.State
}

// final says whether the state keyed k is final.
func (g machineGraph) final(k string) bool { return g.states[k].Phase == run.Final }

// node is a state of the exploration: the machine's state and the number
// of streaming events written, the bound the spec puts on Stream (the
// machine does not count them).
type node struct {
	st      run.State
	streams int
}

// explore enumerates the machine breadth-first from run.New(), firing every
// input of every trigger from every state (TrStream only while fewer than
// maxStream streaming events were written, the spec's bound). It checks on
// the way that Permitted and Fire agree, that a refused input changes
// nothing, that an invalid status is always refused, and that every step
// writes exactly the one event of its trigger.
func explore(t *testing.T) machineGraph {
	t.Helper()
	start := run.New().State()
	g := machineGraph{Graph: graphcheck.New("the machine"), states: map[string]run.State{}}
	g.Initial = []string{toSpec(start).key()}
	add := func(st run.State) string {
		k := toSpec(st).key()
		if prev, ok := g.states[k]; ok && prev != st {
			t.Fatalf("mapping not injective: %+v and %+v both map to %s", prev, st, k)
		}
		g.states[k] = st
		g.AddState(k)
		return k
	}
	add(start)
	seen := map[node]bool{{start, 0}: true}
	queue := []node{{start, 0}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		st := n.st
		from := toSpec(st).key()
		moved := false
		for _, tr := range run.Triggers {
			if tr == run.TrStream && n.streams >= maxStream {
				continue
			}
			for _, in := range inputs(tr) {
				permitted := slices.Contains(run.FromState(st).Permitted(in), tr)
				m := run.FromState(st)
				effs, err := m.Fire(in)
				if !permitted {
					if err == nil {
						t.Errorf("%+v: Fire(%+v) succeeded though Permitted excludes it", st, in)
					}
					if got := m.State(); got != st {
						t.Errorf("%+v: refused Fire(%+v) changed the state to %+v", st, in, got)
					}
					continue
				}
				if err != nil {
					t.Errorf("%+v: Fire(%+v) failed though permitted: %v", st, in, err)
					continue
				}
				if tr == run.TrSettle && !validStatus(in.Status) {
					t.Errorf("%+v: settle with invalid status %q permitted", st, in.Status)
				}
				next := m.State()
				if want := wantEffect(st, in, next); !slices.Equal(effs, []run.Effect{want}) {
					t.Errorf("%+v -%+v-> %+v: effects %+v, want [%+v]", st, in, next, effs, want)
				}
				to := add(next)
				nn := node{next, n.streams}
				if tr == run.TrStream {
					nn.streams++
				}
				if !seen[nn] {
					seen[nn] = true
					queue = append(queue, nn)
				}
				g.AddEdge(from, actionOf[tr], to)
				moved = true
			}
		}
		if !moved && st.Phase == run.Final {
			// The run is over: the spec stutters here (Done).
			g.AddEdge(from, doneAction, from)
		}
	}
	return g
}

// wantEffect is the one event each step writes (CONTRACT §9): the event of
// the phase entered, or the streaming event; final_result carries the
// status settled fixed, or error for a rejection.
func wantEffect(from run.State, in run.Input, to run.State) run.Effect {
	switch in.Trigger {
	case run.TrAccept:
		return run.Effect{Kind: run.EffAccepted}
	case run.TrReject:
		return run.Effect{Kind: run.EffFinal, Status: run.StatusError}
	case run.TrStart:
		return run.Effect{Kind: run.EffStarted}
	case run.TrStream:
		return run.Effect{Kind: run.EffStream}
	case run.TrSettle:
		return run.Effect{Kind: run.EffSettled, Status: in.Status}
	case run.TrFinalize:
		return run.Effect{Kind: run.EffFinal, Status: from.Status}
	}
	panic(fmt.Sprintf("no effect for %+v (%+v -> %+v)", in, from, to))
}

func TestGraphMatchesSpec(t *testing.T) {
	graphcheck.CheckSpecFile(t, os.ReadFile, graphFile, explore(t).Graph, "RunLifecycle")
}

// TestNoDeadlock: only final has no successor.
func TestNoDeadlock(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckNoDeadlock(g.Without(doneAction), g.final); err != nil {
		t.Error(err)
	}
}

// TestFinalAbsorbing: final accepts no input at all, whatever the status
// argument.
func TestFinalAbsorbing(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckAbsorbing(g.Graph, g.final); err != nil {
		t.Error(err)
	}
	finals := 0
	for _, st := range g.states {
		if st.Phase != run.Final {
			continue
		}
		finals++
		for _, tr := range run.Triggers {
			for _, in := range inputs(tr) {
				m := run.FromState(st)
				if p := m.Permitted(in); len(p) > 0 {
					t.Errorf("%+v permits %v for %+v", st, p, in)
				}
				if _, err := m.Fire(in); err == nil {
					t.Errorf("%+v accepted %+v", st, in)
				}
				if m.State() != st {
					t.Errorf("%+v changed to %+v on %+v", st, m.State(), in)
				}
			}
		}
	}
	if finals != len(run.Statuses) {
		t.Errorf("%d final states, want one per status (%d)", finals, len(run.Statuses))
	}
}

// TestCanFinish: from every non-final state the run can still reach final.
// The wasm checker checks safety only; this is the finite stand-in for the
// liveness the spec leaves unchecked.
func TestCanFinish(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckReaches(g.Without(doneAction), g.final, nil); err != nil {
		t.Errorf("final: %v", err)
	}
}

// TestNoLivelock: the only cycle is streaming's Stream self-loop (a run may
// stream for as long as it works); without it the graph is acyclic, so a
// run that stops streaming reaches final in a bounded number of steps.
func TestNoLivelock(t *testing.T) {
	g := explore(t)
	streaming := toSpec(run.State{Phase: run.Streaming}).key()
	stream := graphcheck.Edge{From: streaming, Action: actionOf[run.TrStream], To: streaming}
	if !g.Edges[stream] {
		t.Errorf("no Stream self-loop in streaming (raise maxStream to 2 or more?)")
	}
	if err := graphcheck.CheckNoLivelock(g.Without(doneAction), func(e graphcheck.Edge) bool { return e == stream }); err != nil {
		t.Error(err)
	}
}

// TestStatusSticky: the status is unset until settled fixes it (or a
// rejection sets error) and never changes afterwards.
func TestStatusSticky(t *testing.T) {
	g := explore(t)
	for e := range g.Edges {
		from, to := g.states[e.From], g.states[e.To]
		switch {
		case from.Status != "" && to.Status != from.Status:
			t.Errorf("%+v -%s-> %+v changes the status", from, e.Action, to)
		case to.Status != "" && to.Phase != run.Settled && to.Phase != run.Final:
			t.Errorf("%+v -%s-> %+v: status before settled", from, e.Action, to)
		case (to.Phase == run.Settled || to.Phase == run.Final) && !validStatus(to.Status):
			t.Errorf("%+v -%s-> %+v: %s without a valid status", from, e.Action, to, to.Phase)
		}
	}
}
