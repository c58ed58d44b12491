package graphcheck

import (
	"encoding/json"
	"fmt"
	"strings"
)

// View is the definition every spec exports its graph through: the
// machine's variables only, its history variables projected away.
const View = "GraphView"

// specFile is the format tla/check.mjs writes (serializeGraph): states as
// canonical JSON, initial states and edges by index into them.
type specFile struct {
	Spec    string            `json:"spec"`
	View    string            `json:"view"`
	Initial []int             `json:"initial"`
	States  []json.RawMessage `json:"states"`
	Edges   [][]any           `json:"edges"`
}

// ParseSpecGraph reads a tla/<spec>.graph.json that tla/check.mjs
// exported, which must be spec's graph through View, into a Graph named
// "tla/<spec>.tla" whose states are keyed by Key. Unknown fields, a state
// given twice, an index out of range and an edge that is not [from index,
// action name, to index] are errors.
func ParseSpecGraph(data []byte, spec string) (Graph, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f specFile
	if err := dec.Decode(&f); err != nil {
		return Graph{}, err
	}
	if dec.More() {
		return Graph{}, fmt.Errorf("data after the graph")
	}
	if f.Spec != spec || f.View != View {
		return Graph{}, fmt.Errorf("spec %q view %q, want %s/%s", f.Spec, f.View, spec, View)
	}
	g := New("tla/" + spec + ".tla")
	keys := make([]string, len(f.States))
	for i, raw := range f.States {
		k, err := canonical(raw)
		if err != nil {
			return Graph{}, fmt.Errorf("state %d: %v", i, err)
		}
		if !g.AddState(k) {
			return Graph{}, fmt.Errorf("state %d: %s given twice", i, k)
		}
		keys[i] = k
	}
	for _, i := range f.Initial {
		if i < 0 || i >= len(keys) {
			return Graph{}, fmt.Errorf("initial state %d of %d", i, len(keys))
		}
		g.Initial = append(g.Initial, keys[i])
	}
	index := func(v any) (int, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		i, err := n.Int64()
		if err != nil || i < 0 || i >= int64(len(keys)) {
			return 0, false
		}
		return int(i), true
	}
	for _, e := range f.Edges {
		if len(e) != 3 {
			return Graph{}, fmt.Errorf("bad edge %v", e)
		}
		from, ok1 := index(e[0])
		act, ok2 := e[1].(string)
		to, ok3 := index(e[2])
		if !ok1 || !ok2 || !ok3 {
			return Graph{}, fmt.Errorf("bad edge %v", e)
		}
		g.AddEdge(keys[from], act, keys[to])
	}
	return g, nil
}

// MatchSpec parses data as spec's exported graph (ParseSpecGraph) and
// requires machine to Equal it. The summary counts the states and steps
// of both sides, for the test's log.
func MatchSpec(machine Graph, data []byte, spec string) (summary string, err error) {
	want, err := ParseSpecGraph(data, spec)
	if err != nil {
		return "", err
	}
	summary = fmt.Sprintf("%s: %d states, %d steps; %s: %d states, %d steps",
		machine.Name, len(machine.States), len(machine.Edges), want.Name, len(want.States), len(want.Edges))
	return summary, machine.Equal(want)
}
