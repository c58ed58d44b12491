package session_test

// The spec-to-code tie of DESIGN §4: enumerate the real machine's reachable
// graph and require it to be the graph of tla/Session.tla, which
// tla/check.mjs exports to tla/Session.graph.json (and keeps equal to what
// tla-checker explores). The explorer also checks what the checker cannot:
// deadlock freedom outside closed/failed, that every non-final state can
// still finish (reach idle or closed), and that closed/failed are absorbing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

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

func (s specState) key() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

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

type edge struct{ from, action, to string }

// machineGraph is the machine's reachable graph, states keyed by their
// spec mapping.
type machineGraph struct {
	states  map[string]session.State
	initial string
	edges   map[edge]bool
	succ    map[string][]string // without Done
}

// explore enumerates the machine breadth-first from session.New(), firing
// every input of every trigger from every state (TrEvent only while
// Seq < maxEvents, the spec's bound).
func explore(t *testing.T) machineGraph {
	t.Helper()
	start := session.New().State()
	g := machineGraph{
		states:  map[string]session.State{},
		initial: toSpec(start).key(),
		edges:   map[edge]bool{},
		succ:    map[string][]string{},
	}
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
		return k, true
	}
	add(start)
	queue := []session.State{start}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		from := toSpec(st).key()
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
				e := edge{from, actionOf[tr], to}
				if !g.edges[e] {
					g.edges[e] = true
					g.succ[from] = append(g.succ[from], to)
				}
			}
		}
		if len(g.succ[from]) == 0 && final(st.Phase) {
			// Terminated: the spec stutters here (Done).
			g.edges[edge{from, doneAction, from}] = true
		}
	}
	return g
}

// specGraph is tla/Session.graph.json.
type specGraph struct {
	Spec    string      `json:"spec"`
	View    string      `json:"view"`
	Initial []int       `json:"initial"`
	States  []specState `json:"states"`
	Edges   [][3]any    `json:"edges"`
}

func loadSpecGraph(t *testing.T) (states map[string]bool, initial []string, edges map[edge]bool) {
	t.Helper()
	raw, err := os.ReadFile(graphFile)
	if err != nil {
		t.Fatalf("%v (tla/check.mjs --update writes it)", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var g specGraph
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("%s: %v", graphFile, err)
	}
	if g.Spec != "Session" || g.View != "GraphView" {
		t.Fatalf("%s: spec %q view %q, want Session/GraphView", graphFile, g.Spec, g.View)
	}
	keys := make([]string, len(g.States))
	states = map[string]bool{}
	for i, s := range g.States {
		keys[i] = s.key()
		states[keys[i]] = true
	}
	for _, i := range g.Initial {
		initial = append(initial, keys[i])
	}
	edges = map[edge]bool{}
	for _, e := range g.Edges {
		from, ok1 := e[0].(float64)
		act, ok2 := e[1].(string)
		to, ok3 := e[2].(float64)
		if !ok1 || !ok2 || !ok3 || int(from) >= len(keys) || int(to) >= len(keys) {
			t.Fatalf("%s: bad edge %v", graphFile, e)
		}
		edges[edge{keys[int(from)], act, keys[int(to)]}] = true
	}
	return states, initial, edges
}

func TestGraphMatchesSpec(t *testing.T) {
	g := explore(t)
	specStates, specInitial, specEdges := loadSpecGraph(t)

	if len(specInitial) != 1 || specInitial[0] != g.initial {
		t.Errorf("initial state: spec %v, machine %s", specInitial, g.initial)
	}
	var diffs []string
	for k := range g.states {
		if !specStates[k] {
			diffs = append(diffs, "state only in the machine: "+k)
		}
	}
	for k := range specStates {
		if _, ok := g.states[k]; !ok {
			diffs = append(diffs, "state only in the spec:    "+k)
		}
	}
	for e := range g.edges {
		if !specEdges[e] {
			diffs = append(diffs, fmt.Sprintf("step only in the machine: %s -%s-> %s", e.from, e.action, e.to))
		}
	}
	for e := range specEdges {
		if !g.edges[e] {
			diffs = append(diffs, fmt.Sprintf("step only in the spec:    %s -%s-> %s", e.from, e.action, e.to))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("machine and tla/Session.tla differ (%d):\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
	t.Logf("machine: %d states, %d steps; spec: %d states, %d steps", len(g.states), len(g.edges), len(specStates), len(specEdges))
}

// TestNoDeadlock: only closed and failed have no successor.
func TestNoDeadlock(t *testing.T) {
	g := explore(t)
	for k, st := range g.states {
		if len(g.succ[k]) == 0 && !final(st.Phase) {
			t.Errorf("deadlock in %s", st.Key())
		}
	}
}

// TestFinalAbsorbing: closed and failed accept no input at all (not even
// beyond the model's bound on events).
func TestFinalAbsorbing(t *testing.T) {
	g := explore(t)
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
	pred := map[string][]string{}
	for from, tos := range g.succ {
		for _, to := range tos {
			pred[to] = append(pred[to], from)
		}
	}
	good := map[string]bool{}
	var queue []string
	for k, st := range g.states {
		if st.Phase == session.Idle || st.Phase == session.Closed {
			good[k] = true
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, p := range pred[k] {
			if !good[p] {
				good[p] = true
				queue = append(queue, p)
			}
		}
	}
	for k, st := range g.states {
		if !final(st.Phase) && !good[k] {
			t.Errorf("%s cannot reach idle or closed", st.Key())
		}
	}
}

// TestSticky: a used request_id stays used, along every step.
func TestSticky(t *testing.T) {
	g := explore(t)
	for e := range g.edges {
		from, to := g.states[e.from], g.states[e.to]
		for _, id := range from.Used {
			if !slices.Contains(to.Used, id) {
				t.Errorf("%s -%s-> %s forgets used id %q", from.Key(), e.action, to.Key(), id)
			}
		}
	}
}
