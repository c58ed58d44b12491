package compaction_test

// The spec-to-code tie of the compaction machine: enumerate Machine's
// reachable graph, over every input the spec's actions stand for, and
// require it to be the graph of tla/Compaction.tla as GraphView projects it
// (tla/Compaction.graph.json, written by tla/check.mjs --update); check the
// effects of every step, and what the checker cannot: no state but done is
// stuck, done is absorbing, and every state can still end the run.

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"octet.dev/host/fsm/compaction"
	"octet.dev/host/fsm/internal/graphcheck"
)

const graphFile = "../../tla/Compaction.graph.json"

// specState is a state of Compaction.tla as GraphView projects it, fields
// in the order of the canonical JSON check.mjs writes.
type specState struct {
	Overflowed bool   `json:"overflowed"`
	Phase      string `json:"phase"`
	Reason     string `json:"reason"`
	Status     string `json:"status"`
}

func key(st compaction.State) string {
	return graphcheck.Key(specState{st.Overflowed, string(st.Phase), string(st.Reason), string(st.Status)})
}

// The model's budget: a window of 1000 tokens, a threshold of 800, a keep
// of 100 and a fit of 900; the sizes the inputs take are under the
// threshold, over it and within the window, and past the window.
var budget = compaction.Budget{Window: 1000, Threshold: 800, Keep: 100, Fit: 900}

var sizes = []int64{500, 850, 1200}

// inputs is every input the explorer fires for a trigger.
func inputs(tr compaction.Trigger) []compaction.Input {
	var out []compaction.Input
	switch tr {
	case compaction.TrCheck:
		for _, n := range sizes {
			out = append(out, compaction.Input{Trigger: tr, Tokens: n, CanPlan: true}, compaction.Input{Trigger: tr, Tokens: n})
		}
	case compaction.TrCompactRefused:
		for _, n := range sizes {
			out = append(out, compaction.Input{Trigger: tr, Tokens: n})
		}
	default:
		out = append(out, compaction.Input{Trigger: tr})
	}
	return out
}

// action names the spec action of a step: the threshold check is
// CheckCompact or CheckGo by where it goes.
func action(tr compaction.Trigger, to compaction.Phase) string {
	switch tr {
	case compaction.TrCheck:
		if to == compaction.PCompacting {
			return "CheckCompact"
		}
		return "CheckGo"
	case compaction.TrAnswer:
		return "CallAnswer"
	case compaction.TrTools:
		return "CallTools"
	case compaction.TrFail:
		return "CallFail"
	case compaction.TrOverflow:
		return "CallOverflow"
	case compaction.TrCompactOK:
		return "CompactOK"
	case compaction.TrCompactRefused:
		return "CompactRefused"
	case compaction.TrDone:
		return "Done"
	}
	panic(tr)
}

// want is what the driver must do for a step from `from` to `to`.
func want(p compaction.Policy, from, to compaction.State, in compaction.Input) []compaction.Effect {
	compact := compaction.EffCompactLocal
	if p.Native {
		compact = compaction.EffCompactNative
	}
	switch in.Trigger {
	case compaction.TrCheck:
		if to.Phase == compaction.PCompacting {
			return []compaction.Effect{compact}
		}
		return []compaction.Effect{compaction.EffCall}
	case compaction.TrAnswer:
		return []compaction.Effect{compaction.EffComplete}
	case compaction.TrFail:
		return []compaction.Effect{compaction.EffFail}
	case compaction.TrOverflow:
		if to.Phase == compaction.PDone {
			return []compaction.Effect{compaction.EffOverflow}
		}
		return []compaction.Effect{compact}
	case compaction.TrCompactOK:
		if from.Reason == compaction.ReasonOverflow {
			return []compaction.Effect{compaction.EffRetry}
		}
		return []compaction.Effect{compaction.EffCall}
	case compaction.TrCompactRefused:
		if to.Phase == compaction.PDone {
			return []compaction.Effect{compaction.EffOverflow}
		}
		return []compaction.Effect{compaction.EffHold, compaction.EffCall}
	}
	return nil
}

// explore enumerates the machine's reachable graph under policy p, from
// the start, keyed by the spec's projection; the full states (the hold-off
// included) are what it walks.
func explore(t *testing.T, p compaction.Policy) graphcheck.Graph {
	t.Helper()
	g := graphcheck.New("the machine")
	start := compaction.Start()
	g.AddState(key(start))
	g.Initial = []string{key(start)}
	seen := map[compaction.State]bool{start: true}
	queue := []compaction.State{start}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		for _, tr := range compaction.Triggers {
			permitted := slices.Contains(compaction.FromState(p, st).Permitted(), tr)
			for _, in := range inputs(tr) {
				m := compaction.FromState(p, st)
				effs, err := m.Fire(in)
				effs = slices.Clone(effs)
				if !permitted {
					if err == nil || len(effs) > 0 || m.State() != st {
						t.Errorf("%+v: refused %+v: err %v, effects %v, state %+v", st, in, err, effs, m.State())
					}
					continue
				}
				if err != nil {
					t.Errorf("%+v: %+v permitted but failed: %v", st, in, err)
					continue
				}
				to := m.State()
				if w := want(p, st, to, in); !slices.Equal(effs, w) {
					t.Errorf("%+v -%+v-> %+v: effects %v, want %v", st, in, to, effs, w)
				}
				g.AddEdge(key(st), action(tr, to.Phase), key(to))
				if !seen[to] {
					seen[to] = true
					queue = append(queue, to)
				}
			}
		}
	}
	return g
}

func final(k string) bool {
	var s specState
	for _, st := range []compaction.Status{compaction.StatusCompleted, compaction.StatusError} {
		for _, o := range []bool{false, true} {
			s = specState{o, string(compaction.PDone), string(compaction.ReasonNone), string(st)}
			if graphcheck.Key(s) == k {
				return true
			}
		}
	}
	return false
}

var policies = []compaction.Policy{{Budget: budget}, {Budget: budget, Native: true}}

func TestGraphMatchesSpec(t *testing.T) {
	for _, p := range policies {
		t.Run(fmt.Sprintf("native=%v", p.Native), func(t *testing.T) {
			graphcheck.CheckSpecFile(t, os.ReadFile, graphFile, explore(t, p), "Compaction")
		})
	}
}

func TestNoDeadlockAndDoneAbsorbing(t *testing.T) {
	for _, p := range policies {
		g := explore(t, p)
		if err := graphcheck.CheckNoDeadlock(g.Without("Done"), final); err != nil {
			t.Error(err)
		}
		if err := graphcheck.CheckAbsorbing(g, final); err != nil {
			t.Error(err)
		}
		if err := graphcheck.CheckReaches(g.Without("Done"), final, nil); err != nil {
			t.Error(err)
		}
	}
}
