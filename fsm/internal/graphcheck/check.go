package graphcheck

import (
	"slices"
	"strings"
)

// The checks below are what the wasm checker cannot say (it checks safety
// only): they look at a machine's explored graph. Pass the graph without
// the spec's stuttering step (Without), except to CheckAbsorbing, where a
// self-loop is allowed. Each returns nil or an error listing the
// offending states, sorted, at most MaxReport of them.

// CheckNoDeadlock: every state without a step is terminal.
func CheckNoDeadlock(g Graph, isTerminal func(string) bool) error {
	succ := g.Successors()
	var bad []string
	for _, k := range g.sortedStates() {
		if len(succ[k]) == 0 && !isTerminal(k) {
			bad = append(bad, "deadlock in "+k)
		}
	}
	return reportIf("states without a step that are not terminal", bad)
}

// CheckAbsorbing: no step leaves a terminal state for another state (a
// stuttering self-loop may stay).
func CheckAbsorbing(g Graph, isTerminal func(string) bool) error {
	var bad []string
	for e := range g.Edges {
		if e.From != e.To && isTerminal(e.From) {
			bad = append(bad, "leaves a terminal state: "+e.String())
		}
	}
	slices.Sort(bad)
	return reportIf("terminal states not absorbing", bad)
}

// CheckReaches: every state that must (all states when must is nil) can
// reach a goal state, by zero or more steps.
func CheckReaches(g Graph, isGoal, must func(string) bool) error {
	pred := map[string][]string{}
	for e := range g.Edges {
		pred[e.To] = append(pred[e.To], e.From)
	}
	good := map[string]bool{}
	var queue []string
	for _, k := range g.sortedStates() {
		if isGoal(k) {
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
	var bad []string
	for _, k := range g.sortedStates() {
		if (must == nil || must(k)) && !good[k] {
			bad = append(bad, "cannot finish: "+k)
		}
	}
	return reportIf("states that cannot reach a goal state", bad)
}

// CheckNoLivelock: the graph has no cycle but through steps allowed says
// may loop (nil: none); a cycle, self-loops included, is reported as the
// path from an initial state that closes it. Every state is searched, not
// only those reachable from the initial states.
func CheckNoLivelock(g Graph, allowed func(Edge) bool) error {
	out := map[string][]Edge{}
	for e := range g.Edges {
		if allowed == nil || !allowed(e) {
			out[e.From] = append(out[e.From], e)
		}
	}
	for _, es := range out {
		slices.SortFunc(es, func(a, b Edge) int {
			return strings.Compare(a.Action+"\x00"+a.To, b.Action+"\x00"+b.To)
		})
	}
	const (
		white = iota
		grey
		black
	)
	colour := map[string]int{}
	var bad []string
	var visit func(k string, path []string)
	visit = func(k string, path []string) {
		colour[k] = grey
		path = append(path, k)
		for _, e := range out[k] {
			switch colour[e.To] {
			case grey:
				bad = append(bad, "cycle: "+strings.Join(path, " -> ")+" -"+e.Action+"-> "+e.To)
			case white:
				visit(e.To, path)
			}
		}
		colour[k] = black
	}
	roots := slices.Sorted(slices.Values(g.Initial))
	roots = append(roots, g.sortedStates()...)
	for _, k := range roots {
		if colour[k] == white {
			visit(k, nil)
		}
	}
	return reportIf("cycles", bad)
}

func reportIf(head string, bad []string) error {
	if len(bad) == 0 {
		return nil
	}
	return report(head, bad)
}
