package steering_test

// The spec-to-code tie of DESIGN §4: enumerate the real machine's reachable
// graph and require it to be the graph of tla/Steering.tla, which
// tla/check.mjs exports to tla/Steering.graph.json (and keeps equal to what
// tla-checker explores). The explorer also checks what the checker cannot,
// as the spec's header promises: no state but closed is stuck, closed is
// absorbing, every state can still close and can still complete by
// answered turns alone, and without new submissions the only cycles are
// boundaries that have nothing to do.

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"octet.dev/host/fsm/internal/graphcheck"
	"octet.dev/host/fsm/steering"
)

// The model of tla/Steering.cfg: MaxSubmit = 2, so that two messages can
// be pending at once, of one kind or of both.
const maxSubmit = 2

const graphFile = "../../tla/Steering.graph.json"

// specState is a state of Steering.tla as GraphView projects it: the
// machine's variables only. The spec's history variables (the effects
// returned, what was submitted, whether steering was overtaken) exist to
// state its invariants; the machine has no counterpart, so the export
// projects them away and both sides compare what they share. Fields are in
// the order of the canonical JSON check.mjs writes.
type specState struct {
	FollowUps int    `json:"followUps"`
	Phase     string `json:"phase"`
	Steering  int    `json:"steering"`
}

func (s specState) key() string { return graphcheck.Key(s) }

// toSpec maps a machine state to the spec's variables: the phase strings
// are the same and the pending counts are the counts.
func toSpec(st steering.State) specState {
	return specState{FollowUps: st.FollowUps, Phase: string(st.Phase), Steering: st.Steering}
}

// actionOf names the spec action of each trigger. Edges are compared with
// these labels, so a machine whose triggers reach the right states by the
// wrong steps fails. AfterTurn's answered argument does not show in the
// label (tla-checker names an action by its operator only); it shows as
// different successors.
var actionOf = map[steering.Trigger]string{
	steering.TrSteer:     "Steer",
	steering.TrFollowUp:  "FollowUp",
	steering.TrAfterTool: "AfterTool",
	steering.TrAfterTurn: "AfterTurn",
	steering.TrClose:     "Close",
}

// doneAction is the spec's stuttering step in closed, where the run's
// messages are settled; the machine accepts nothing there.
const doneAction = "Done"

// submits says whether trigger t submits a message, the steps the spec
// bounds by MaxSubmit.
func submits(t steering.Trigger) bool { return t == steering.TrSteer || t == steering.TrFollowUp }

// inputs lists every input of trigger t: each Answered value. Only
// TrAfterTurn reads it; the other triggers are fired with both values too,
// so that a machine that let the flag leak into them would show an edge
// the spec does not have.
func inputs(t steering.Trigger) []steering.Input {
	return []steering.Input{{Trigger: t}, {Trigger: t, Answered: true}}
}

// machineGraph is the machine's reachable graph, states keyed by their
// spec mapping.
type machineGraph struct {
	graphcheck.Graph
	states map[string]steering.State
	// answered holds the steps of TrAfterTurn with Answered set, over
	// every state: the graph label alone cannot tell them from unanswered
	// turns, and completion by answered turns alone is checked on them.
	answered graphcheck.Graph
	// quiet says of every step whether all the inputs that take it
	// returned no effect, the only self-loops the no-livelock check
	// allows.
	quiet map[graphcheck.Edge]bool
}

// closed says whether the state keyed k is closed.
func (g machineGraph) closed(k string) bool { return g.states[k].Phase == steering.Closed }

// node is a state of the exploration: the machine's state and the number
// of messages submitted so far, both kinds, the bound the spec puts on
// Steer and FollowUp (the machine does not count them).
type node struct {
	st        steering.State
	submitted int
}

// explore enumerates the machine breadth-first from steering.New(), firing
// every input of every trigger from every state (TrSteer and TrFollowUp
// only while fewer than maxSubmit messages were submitted, the spec's
// bound). It checks on the way that Permitted leaves the state alone and
// agrees with Fire, that a refused input changes nothing and returns no
// effect, and that every step returns exactly the effects the spec's
// action writes (wantEffects).
func explore(t *testing.T) machineGraph {
	t.Helper()
	start := steering.New().State()
	g := machineGraph{
		Graph:    graphcheck.New("the machine"),
		states:   map[string]steering.State{},
		answered: graphcheck.New("answered turns"),
		quiet:    map[graphcheck.Edge]bool{},
	}
	add := func(st steering.State) string {
		k := toSpec(st).key()
		if prev, ok := g.states[k]; ok && prev != st {
			t.Fatalf("mapping not injective: %+v and %+v both map to %s", prev, st, k)
		}
		g.states[k] = st
		g.AddState(k)
		g.answered.AddState(k)
		return k
	}
	g.Initial = []string{add(start)}
	g.answered.Initial = g.Initial
	seen := map[node]bool{{start, 0}: true}
	queue := []node{{start, 0}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		st := n.st
		from := toSpec(st).key()
		moved := false
		for _, tr := range steering.Triggers {
			if submits(tr) && n.submitted >= maxSubmit {
				continue
			}
			for _, in := range inputs(tr) {
				m := steering.FromState(st)
				permitted := slices.Contains(m.Permitted(in), tr)
				if m.State() != st {
					t.Fatalf("%+v: Permitted(%+v) changed the state to %+v", st, in, m.State())
				}
				effs, err := m.Fire(in)
				// Fire reuses the slice it returns; keep a copy.
				effs = slices.Clone(effs)
				if !permitted {
					if err == nil {
						t.Errorf("%+v: Fire(%+v) succeeded though Permitted excludes it", st, in)
					}
					if len(effs) > 0 {
						t.Errorf("%+v: refused Fire(%+v) returned effects %+v", st, in, effs)
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
				next := m.State()
				if want := wantEffects(st, in); !slices.Equal(effs, want) {
					t.Errorf("%+v -%+v-> %+v: effects %+v, want %+v", st, in, next, effs, want)
				}
				to := add(next)
				nn := node{next, n.submitted}
				if submits(tr) {
					nn.submitted++
				}
				if !seen[nn] {
					seen[nn] = true
					queue = append(queue, nn)
				}
				e := graphcheck.Edge{From: from, Action: actionOf[tr], To: to}
				g.AddEdge(e.From, e.Action, e.To)
				if q, ok := g.quiet[e]; !ok || q {
					g.quiet[e] = len(effs) == 0
				}
				if tr == steering.TrAfterTurn && in.Answered {
					g.answered.AddEdge(e.From, e.Action, e.To)
				}
				moved = true
			}
		}
		if !moved && st.Phase == steering.Closed {
			// Every message is settled: the spec stutters here (Done).
			g.AddEdge(from, doneAction, from)
		}
	}
	return g
}

// wantEffects is what the spec's action for in writes from the state from
// (its Write argument, one Effect per Ev record): submissions return
// nothing; a tool boundary skips the remaining calls and delivers pending
// steering, or does nothing; a turn completes when answered with nothing
// pending, and otherwise delivers steering, or, if answered, the
// follow-ups, and goes on when answered; Close drops what is pending in one
// effect when there is any.
func wantEffects(from steering.State, in steering.Input) []steering.Effect {
	switch in.Trigger {
	case steering.TrSteer, steering.TrFollowUp:
		return nil
	case steering.TrAfterTool:
		if from.Steering > 0 {
			return []steering.Effect{{Kind: steering.EffSkipTools}, {Kind: steering.EffDeliverSteering, N: from.Steering}}
		}
		return nil
	case steering.TrAfterTurn:
		if in.Answered && from.Steering == 0 && from.FollowUps == 0 {
			return []steering.Effect{{Kind: steering.EffComplete}}
		}
		var out []steering.Effect
		switch {
		case from.Steering > 0:
			out = append(out, steering.Effect{Kind: steering.EffDeliverSteering, N: from.Steering})
		case in.Answered:
			out = append(out, steering.Effect{Kind: steering.EffDeliverFollowUps, N: from.FollowUps})
		}
		if in.Answered {
			out = append(out, steering.Effect{Kind: steering.EffContinue})
		}
		return out
	case steering.TrClose:
		if n := from.Steering + from.FollowUps; n > 0 {
			return []steering.Effect{{Kind: steering.EffDrop, N: n}}
		}
		return nil
	}
	panic(fmt.Sprintf("no effects for %+v from %+v", in, from))
}

func TestGraphMatchesSpec(t *testing.T) {
	graphcheck.CheckSpecFile(t, os.ReadFile, graphFile, explore(t).Graph, "Steering")
}

// TestNoDeadlock: only closed has no successor; an open run always takes
// every boundary and Close.
func TestNoDeadlock(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckNoDeadlock(g.Without(doneAction), g.closed); err != nil {
		t.Error(err)
	}
}

// TestClosedAbsorbing: closed accepts no input at all, whatever the
// Answered argument and beyond the model's bound on submissions, so nothing
// is submitted or delivered once the application was told every message's
// fate.
func TestClosedAbsorbing(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckAbsorbing(g.Graph, g.closed); err != nil {
		t.Error(err)
	}
	closed := 0
	for _, st := range g.states {
		if st.Phase != steering.Closed {
			continue
		}
		closed++
		for _, tr := range steering.Triggers {
			for _, in := range inputs(tr) {
				m := steering.FromState(st)
				if p := m.Permitted(in); len(p) > 0 {
					t.Errorf("%+v permits %v for %+v", st, p, in)
				}
				if effs, err := m.Fire(in); err == nil || len(effs) > 0 {
					t.Errorf("%+v accepted %+v: %+v", st, in, effs)
				}
				if m.State() != st {
					t.Errorf("%+v changed to %+v on %+v", st, m.State(), in)
				}
			}
		}
	}
	// Closing settles everything, so there is one closed state.
	if closed != 1 {
		t.Errorf("%d closed states, want 1", closed)
	}
}

// TestCanClose: from every state the run can still reach closed. The wasm
// checker checks safety only; this is the finite stand-in for the liveness
// the spec leaves unchecked (every message is eventually settled).
func TestCanClose(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckReaches(g.Without(doneAction), g.closed, nil); err != nil {
		t.Errorf("closed: %v", err)
	}
}

// TestCanCompleteByAnsweredTurns: from every state the run completes by
// answered turns alone, without Close, so pending messages are delivered,
// not merely dropped, once the model stops calling tools. From an open
// state there is exactly one answered turn, and at most three of them
// complete the run: one delivering the steering, one the follow-ups, and
// the one that completes.
func TestCanCompleteByAnsweredTurns(t *testing.T) {
	g := explore(t)
	if err := graphcheck.CheckReaches(g.answered, g.closed, nil); err != nil {
		t.Errorf("closed by answered turns: %v", err)
	}
	next := map[string][]string{}
	for e := range g.answered.Edges {
		next[e.From] = append(next[e.From], e.To)
	}
	for k, st := range g.states {
		if st.Phase == steering.Closed {
			continue
		}
		turns := 0
		for cur := k; !g.closed(cur); turns++ {
			if len(next[cur]) != 1 {
				t.Fatalf("%+v: answered turns lead to %v, want exactly one state", g.states[cur], next[cur])
			}
			if turns == 3 {
				t.Errorf("%+v: not complete after 3 answered turns", st)
				break
			}
			cur = next[cur][0]
		}
	}
}

// TestNoLivelock: without new submissions (Steer, FollowUp) the only cycles
// are boundaries that have nothing to do, self-loops that return no effect;
// every other step delivers or closes, so a run that stops submitting
// settles everything in a bounded number of steps that do something.
func TestNoLivelock(t *testing.T) {
	g := explore(t)
	idle := func(e graphcheck.Edge) bool { return e.From == e.To && g.quiet[e] }
	loops := 0
	for e := range g.Edges {
		if idle(e) {
			loops++
		}
	}
	// Idle boundaries exist (a tool boundary with no steering pending, an
	// unanswered turn with nothing pending), so the allowance is not
	// vacuous.
	if loops == 0 {
		t.Error("no idle boundary in the graph")
	}
	if err := graphcheck.CheckNoLivelock(g.Without(doneAction, actionOf[steering.TrSteer], actionOf[steering.TrFollowUp]), idle); err != nil {
		t.Error(err)
	}
}
