package graphcheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MaxReport is how many lines a diff or a failed check shows at most; the
// rest is counted.
const MaxReport = 40

// Edge is one labelled step between two state keys.
type Edge struct{ From, Action, To string }

func (e Edge) String() string { return e.From + " -" + e.Action + "-> " + e.To }

// Graph is a labelled transition graph over state keys. Name says which
// side it is in diffs ("the machine", "tla/Session.tla").
type Graph struct {
	Name    string
	Initial []string
	States  map[string]bool
	Edges   map[Edge]bool
}

// New returns an empty graph called name.
func New(name string) Graph {
	return Graph{Name: name, States: map[string]bool{}, Edges: map[Edge]bool{}}
}

// AddState adds the state k and says whether it is new.
func (g *Graph) AddState(k string) bool {
	if g.States[k] {
		return false
	}
	g.States[k] = true
	return true
}

// AddEdge adds the step from -action-> to (and both states) and says
// whether the step is new.
func (g *Graph) AddEdge(from, action, to string) bool {
	g.AddState(from)
	g.AddState(to)
	e := Edge{from, action, to}
	if g.Edges[e] {
		return false
	}
	g.Edges[e] = true
	return true
}

// Without returns a copy of g without the steps labelled with any of
// actions (a spec's stuttering step, say); the states stay.
func (g Graph) Without(actions ...string) Graph {
	c := Graph{Name: g.Name, Initial: slices.Clone(g.Initial), States: make(map[string]bool, len(g.States)), Edges: map[Edge]bool{}}
	for k := range g.States {
		c.States[k] = true
	}
	for e := range g.Edges {
		if !slices.Contains(actions, e.Action) {
			c.Edges[e] = true
		}
	}
	return c
}

// Successors maps every state with a step to its distinct successors,
// sorted.
func (g Graph) Successors() map[string][]string {
	succ := map[string][]string{}
	for e := range g.Edges {
		if !slices.Contains(succ[e.From], e.To) {
			succ[e.From] = append(succ[e.From], e.To)
		}
	}
	for _, tos := range succ {
		slices.Sort(tos)
	}
	return succ
}

// sortedStates lists the states of g in order.
func (g Graph) sortedStates() []string {
	ks := make([]string, 0, len(g.States))
	for k := range g.States {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Equal returns nil when g and want have the same initial states (as a
// sorted list, repetitions counting), states and labelled steps, and
// otherwise an error listing the differences, sorted, at most MaxReport of
// them.
func (g Graph) Equal(want Graph) error {
	var diffs []string
	gi, wi := slices.Sorted(slices.Values(g.Initial)), slices.Sorted(slices.Values(want.Initial))
	if !slices.Equal(gi, wi) {
		diffs = append(diffs, fmt.Sprintf("initial states: %s %v, %s %v", g.Name, gi, want.Name, wi))
	}
	only := func(a, b Graph) {
		for k := range a.States {
			if !b.States[k] {
				diffs = append(diffs, fmt.Sprintf("state only in %s: %s", a.Name, k))
			}
		}
		for e := range a.Edges {
			if !b.Edges[e] {
				diffs = append(diffs, fmt.Sprintf("step only in %s: %s", a.Name, e))
			}
		}
	}
	only(g, want)
	only(want, g)
	if len(diffs) == 0 {
		return nil
	}
	slices.Sort(diffs)
	return report(fmt.Sprintf("%s (%d states, %d steps) and %s (%d states, %d steps) differ",
		g.Name, len(g.States), len(g.Edges), want.Name, len(want.States), len(want.Edges)), diffs)
}

// report is an error headed by head (and the number of lines) listing at
// most MaxReport of lines.
func report(head string, lines []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d:", head, len(lines))
	for i, l := range lines {
		if i == MaxReport {
			fmt.Fprintf(&b, "\n… and %d more", len(lines)-MaxReport)
			break
		}
		b.WriteString("\n" + l)
	}
	return fmt.Errorf("%s", b.String())
}

// Key is the canonical JSON of v, the key of a state: v's JSON with object
// keys sorted and no white space, numbers as written. It is the key
// ParseSpecGraph gives the spec's states, so a machine state mapped to the
// spec's variables has the key of the spec state it is. Key panics if v
// does not marshal.
func Key(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("graphcheck.Key(%#v): %v", v, err))
	}
	k, err := canonical(b)
	if err != nil {
		panic(fmt.Sprintf("graphcheck.Key(%#v): %v", v, err))
	}
	return k
}

// canonical re-encodes one JSON value with object keys sorted (what
// encoding/json does to maps), numbers kept as written.
func canonical(raw []byte) (string, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if dec.More() {
		return "", fmt.Errorf("more than one JSON value in %s", raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
