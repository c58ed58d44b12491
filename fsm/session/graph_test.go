package session_test

// The spec-to-code tie of DESIGN §4: enumerate the real machine's reachable
// graph and require it to be the graph of tla/Session.tla, which
// tla/check.mjs exports to tla/Session.graph.json (and keeps equal to what
// tla-checker explores). The explorer also checks what the checker cannot:
// deadlock freedom outside closed/failed, that every non-final state can
// still finish (reach idle or closed), and that closed/failed are absorbing.

import (
	"os"
	"slices"
	"testing"

	"octet.dev/host/fsm/internal/graphcheck"
	"octet.dev/host/fsm/session"
)

// The model of tla/Session.cfg: Ids = {"a", "b"}, MaxEvents = 2.
var modelIDs = []string{"a", "b"}

const maxEvents = 2

const graphFile = "../../tla/Session.graph.json"

// specNone is Session.tla's None, the "no request" value; Go uses "".
const specNone = "none"

// specState is a state of Session.tla as GraphView projects it: the
// machine's variables only. The spec's history variables (lines read,
// terminals, frames and last seq per line, the aborted line, late writes)
// exist to state its invariants; the machine has no counterpart, so the
// export projects them away and both sides compare what they share.
// Fields are in the order of the canonical JSON check.mjs writes.
type specState struct {
	Current string   `json:"current"`
	Phase   string   `json:"phase"`
	Seq     int      `json:"seq"`
	Used    []string `json:"used"`
}

func (s specState) key() string { return graphcheck.Key(s) }

// toSpec maps a machine state to the spec's variables: phase strings are
// the same, Current "" is None, Seq is seq, Used is the set used (a sorted
// list on both sides).
func toSpec(st session.State) specState {
	cur := st.Current
	if cur == "" {
		cur = specNone
	}
	used := slices.Clone(st.Used)
	if used == nil {
		used = []string{}
	}
	slices.Sort(used)
	return specState{Phase: string(st.Phase), Current: cur, Seq: st.Seq, Used: used}
}

// actionOf names the spec action of each trigger. Edges are compared with
// these labels: an unlabelled graph would accept a machine whose triggers
// lead to the right states by the wrong steps (say, a self-loop answering
// a malformed line where the spec answers a duplicate request). The labels
// carry no arguments because tla-checker names an action by its operator
// only; arguments still show, as different successors.
var actionOf = map[session.Trigger]string{
	session.TrRequest:     "Request",
	session.TrShutdown:    "Shutdown",
	session.TrMalformed:   "Malformed",
	session.TrEvent:       "Event",
	session.TrTerminal:    "Terminal",
	session.TrEOF:         "EOF",
	session.TrWriteFailed: "WriteFailed",
}

// doneAction is the spec's stuttering step in closed and failed, where the
// process has exited; the machine accepts nothing there.
const doneAction = "Done"

// inputs lists every input of trigger t in the model.
func inputs(t session.Trigger) []session.Input {
	switch t {
	case session.TrRequest, session.TrShutdown:
		var in []session.Input
		for _, id := range modelIDs {
			in = append(in, session.Input{Trigger: t, RequestID: id})
		}
		return in
	case session.TrMalformed:
		var in []session.Input
		for _, id := range append(slices.Clone(modelIDs), "") {
			in = append(in, session.Input{Trigger: t, RequestID: id, Code: "invalid_json"})
		}
		return in
	default:
		return []session.Input{{Trigger: t}}
	}
}

func final(p session.Phase) bool { return p == session.Closed || p == session.Failed }

// machineGraph is the machine's reachable graph, states keyed by their
// spec mapping.
type machineGraph struct {
	graphcheck.Graph
	states map[string]session.State
}

// final says whether the state keyed k is closed or failed.
func (g machineGraph) final(k string) bool { return final(g.states[k].Phase) }

// explore enumerates the machine breadth-first from session.New(), firing
// every input of every trigger from every state (TrEvent only while
// Seq < maxEvents, the spec's bound).
func explore(t *testing.T) machineGraph {
	t.Helper()
	start := session.New().State()
	g := machineGraph{Graph: graphcheck.New("the machine"), states: map[string]session.State{}}
	g.Initial = []string{toSpec(start).key()}
	goKey := map[string]string{} // spec key -> State.Key, to prove the mapping injective
	add := func(st session.State) (string, bool) {
		k := toSpec(st).key()
		if prev, ok := goKey[k]; ok {
			if prev != st.Key() {
				t.Fatalf("mapping not injective: %q and %q both map to %s", prev, st.Key(), k)
			}
			return k, false
		}
		goKey[k] = st.Key()
		g.states[k] = st
		g.AddState(k)
		return k, true
	}
	add(start)
	queue := []session.State{start}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		from := toSpec(st).key()
		moved := false
		for _, tr := range session.Triggers {
			if tr == session.TrEvent && st.Seq >= maxEvents {
				continue
			}
			for _, in := range inputs(tr) {
				permitted := slices.Contains(session.FromState(st).Permitted(in), tr)
				m := session.FromState(st)
				_, err := m.Fire(in)
				if !permitted {
					if err == nil {
						t.Errorf("%s: Fire(%+v) succeeded though Permitted excludes it", st.Key(), in)
					}
					if got := m.State(); got.Key() != st.Key() {
						t.Errorf("%s: refused Fire(%+v) changed the state to %s", st.Key(), in, got.Key())
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: Fire(%+v) failed though permitted: %v", st.Key(), in, err)
					continue
				}
				next := m.State()
				to, isNew := add(next)
				if isNew {
					queue = append(queue, next)
				}
				g.AddEdge(from, actionOf[tr], to)
				moved = true
			}
		}
		if !moved && final(st.Phase) {
			// Terminated: the spec stutters here (Done).
			g.AddEdge(from, doneAction, from)
		}
	}
	return g
}

func TestGraphMatchesSpec(t *testing.T) {
	graphcheck.CheckSpecFile(t, os.ReadFile, graphFile, explore(t).Graph, "Session")
}

// TestNoDeadlock: only closed and failed have no successor.
func TestNoDeadlock(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckNoDeadlock(g.Without(doneAction), g.final); err != nil {
		t.Error(err)
	}
}

// TestFinalAbsorbing: closed and failed accept no input at all (not even
// beyond the model's bound on events).
func TestFinalAbsorbing(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckAbsorbing(g.Graph, g.final); err != nil {
		t.Error(err)
	}
	for _, st := range g.states {
		if !final(st.Phase) {
			continue
		}
		for _, tr := range session.Triggers {
			for _, in := range inputs(tr) {
				m := session.FromState(st)
				if p := m.Permitted(in); len(p) > 0 {
					t.Errorf("%s permits %v for %+v", st.Key(), p, in)
				}
				if _, err := m.Fire(in); err == nil {
					t.Errorf("%s accepted %+v", st.Key(), in)
				}
			}
		}
	}
}

// TestNoLivelock: from every non-final state the session can still finish,
// i.e. reach idle (the request done) or closed (exit 0). The wasm checker
// checks safety only; this is the finite stand-in for the liveness the spec
// leaves unchecked.
func TestNoLivelock(t *testing.T) {
	g := explore(t)
	finishes := func(k string) bool {
		p := g.states[k].Phase
		return p == session.Idle || p == session.Closed
	}
	mustFinish := func(k string) bool { return !g.final(k) }
	if err := graphcheck.CheckReaches(g.Without(doneAction), finishes, mustFinish); err != nil {
		t.Errorf("idle or closed: %v", err)
	}
}

// TestSticky: a used request_id stays used, along every step.
func TestSticky(t *testing.T) {
	g := explore(t)
	for e := range g.Edges {
		from, to := g.states[e.From], g.states[e.To]
		for _, id := range from.Used {
			if !slices.Contains(to.Used, id) {
				t.Errorf("%s -%s-> %s forgets used id %q", from.Key(), e.Action, to.Key(), id)
			}
		}
	}
}
