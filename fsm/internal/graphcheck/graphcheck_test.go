package graphcheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A small spec: a -go-> b -go-> c (terminal, Done), a -quit-> c.
const sample = `{
  "spec": "Toy",
  "view": "GraphView",
  "initial": [0],
  "states": [
    {"phase":"a","n":0},
    {"n":1,"phase":"b"},
    {"phase":"c","n":2}
  ],
  "edges": [
    [0,"Go",1],
    [0,"Quit",2],
    [1,"Go",2],
    [2,"Done",2]
  ]
}
`

type toyState struct {
	Phase string `json:"phase"`
	N     int    `json:"n"`
}

var (
	ka = Key(toyState{"a", 0})
	kb = Key(toyState{"b", 1})
	kc = Key(toyState{"c", 2})
)

// toy is the machine side of sample.
func toy() Graph {
	g := New("the machine")
	g.Initial = []string{ka}
	g.AddEdge(ka, "Go", kb)
	g.AddEdge(ka, "Quit", kc)
	g.AddEdge(kb, "Go", kc)
	g.AddEdge(kc, "Done", kc)
	return g
}

func terminal(k string) bool { return k == kc }

func TestKeyCanonical(t *testing.T) {
	if want := `{"n":0,"phase":"a"}`; ka != want {
		t.Errorf("Key = %s, want %s", ka, want)
	}
	type other struct {
		N     any    `json:"n"`
		Phase string `json:"phase"`
	}
	if k := Key(other{int64(0), "a"}); k != ka {
		t.Errorf("field order or number type shows in the key: %s vs %s", k, ka)
	}
	if Key(map[string]any{"n": 0, "phase": "a"}) != ka {
		t.Error("a map and a struct differ")
	}
	if Key(toyState{"a", 1}) == ka || Key(map[string]any{"n": "0", "phase": "a"}) == ka {
		t.Error("different values share a key")
	}
}

func TestParseSpecGraph(t *testing.T) {
	g, err := ParseSpecGraph([]byte(sample), "Toy")
	if err != nil {
		t.Fatal(err)
	}
	want := toy()
	want.Name = "tla/Toy.tla"
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("parsed graph (-want +got):\n%s", d)
	}
	if err := toy().Equal(g); err != nil {
		t.Error(err)
	}
}

func TestParseSpecGraphErrors(t *testing.T) {
	for _, c := range []struct{ name, from, to, spec, want string }{
		{"wrong spec", "", "", "Other", `spec "Toy" view "GraphView", want Other/GraphView`},
		{"wrong view", `"view": "GraphView"`, `"view": "Whole"`, "Toy", `view "Whole"`},
		{"unknown field", `"spec": "Toy",`, `"spec": "Toy", "extra": 1,`, "Toy", `unknown field "extra"`},
		{"not json", `"edges": [`, `"edges": [[`, "Toy", "invalid"},
		{"trailing data", "  ]\n}\n", "  ]\n} {}", "Toy", "data after the graph"},
		{"state twice", `{"n":1,"phase":"b"}`, `{"phase":"a","n":0}`, "Toy", "given twice"},
		{"initial out of range", `"initial": [0]`, `"initial": [3]`, "Toy", "initial state 3 of 3"},
		{"negative initial", `"initial": [0]`, `"initial": [-1]`, "Toy", "initial state -1"},
		{"edge index out of range", `[1,"Go",2]`, `[1,"Go",3]`, "Toy", "bad edge"},
		{"negative edge index", `[1,"Go",2]`, `[-1,"Go",2]`, "Toy", "bad edge"},
		{"fractional edge index", `[1,"Go",2]`, `[1,"Go",1.5]`, "Toy", "bad edge"},
		{"null action", `[1,"Go",2]`, `[1,null,2]`, "Toy", "bad edge"},
		{"short edge", `[1,"Go",2]`, `[1,"Go"]`, "Toy", "bad edge"},
		{"long edge", `[1,"Go",2]`, `[1,"Go",2,0]`, "Toy", "bad edge"},
		{"index as string", `[1,"Go",2]`, `["1","Go",2]`, "Toy", "bad edge"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := strings.Replace(sample, c.from, c.to, 1)
			if c.from != "" && data == sample {
				t.Fatalf("%q not in the sample", c.from)
			}
			_, err := ParseSpecGraph([]byte(data), c.spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestEqualReportsEveryDifference(t *testing.T) {
	spec, err := ParseSpecGraph([]byte(sample), "Toy")
	if err != nil {
		t.Fatal(err)
	}
	m := toy()
	delete(m.Edges, Edge{kb, "Go", kc})
	m.AddEdge(kb, "Quit", kc)                  // same states, wrong label
	m.AddEdge(kb, "Go", Key(toyState{"d", 3})) // a state the spec lacks
	m.Initial = append(m.Initial, kb)
	err = m.Equal(spec)
	if err == nil {
		t.Fatal("different graphs are equal")
	}
	want := []string{
		`the machine (4 states, 5 steps) and tla/Toy.tla (3 states, 4 steps) differ: 5:`,
		`initial states: the machine [{"n":0,"phase":"a"} {"n":1,"phase":"b"}], tla/Toy.tla [{"n":0,"phase":"a"}]`,
		`state only in the machine: {"n":3,"phase":"d"}`,
		`step only in the machine: {"n":1,"phase":"b"} -Go-> {"n":3,"phase":"d"}`,
		`step only in the machine: {"n":1,"phase":"b"} -Quit-> {"n":2,"phase":"c"}`,
		`step only in tla/Toy.tla: {"n":1,"phase":"b"} -Go-> {"n":2,"phase":"c"}`,
	}
	if d := cmp.Diff(want, strings.Split(err.Error(), "\n")); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}
	if spec.Equal(spec) != nil || toy().Equal(spec) != nil {
		t.Error("equal graphs differ")
	}
	// Repeated initial states count.
	twice := toy()
	twice.Initial = []string{ka, ka}
	if twice.Equal(toy()) == nil {
		t.Error("a repeated initial state went unnoticed")
	}
}

func TestEqualIsBounded(t *testing.T) {
	a, b := New("a"), New("b")
	for i := range 100 {
		a.AddState(fmt.Sprint(i))
	}
	err := a.Equal(b)
	if err == nil {
		t.Fatal("no difference")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 1+MaxReport+1 || lines[len(lines)-1] != "… and 60 more" || !strings.HasSuffix(lines[0], ": 100:") {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

func TestWithoutAndSuccessors(t *testing.T) {
	g := toy()
	w := g.Without("Done")
	if len(w.Edges) != 3 || w.Edges[Edge{kc, "Done", kc}] || len(w.States) != 3 || w.Name != g.Name {
		t.Errorf("Without: %+v", w)
	}
	if len(g.Edges) != 4 {
		t.Error("Without changed the graph")
	}
	g.AddEdge(ka, "Again", kb)
	want := map[string][]string{ka: {kb, kc}, kb: {kc}, kc: {kc}}
	if d := cmp.Diff(want, g.Successors()); d != "" {
		t.Errorf("Successors (-want +got):\n%s", d)
	}
	if g.AddEdge(ka, "Again", kb) || g.AddState(ka) || !g.AddState("new") {
		t.Error("AddEdge/AddState misreport what is new")
	}
}

// mustFail runs a check that must fail with a message containing each of
// want.
func mustFail(t *testing.T, name string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s passed", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v, want %q in it", name, err, w)
		}
	}
}

func TestCheckNoDeadlock(t *testing.T) {
	g := toy().Without("Done")
	if err := CheckNoDeadlock(g, terminal); err != nil {
		t.Error(err)
	}
	g.AddState("stuck")
	g.AddState("stuck too")
	mustFail(t, "a stuck state", CheckNoDeadlock(g, terminal), "deadlock in stuck\ndeadlock in stuck too")
	mustFail(t, "no terminal", CheckNoDeadlock(toy().Without("Done"), func(string) bool { return false }), "deadlock in "+kc)
}

func TestCheckAbsorbing(t *testing.T) {
	if err := CheckAbsorbing(toy(), terminal); err != nil {
		t.Error(err)
	}
	g := toy()
	g.AddEdge(kc, "Go", ka)
	mustFail(t, "a step out of a terminal state", CheckAbsorbing(g, terminal), "leaves a terminal state: "+kc+" -Go-> "+ka)
}

func TestCheckReaches(t *testing.T) {
	g := toy().Without("Done")
	if err := CheckReaches(g, terminal, nil); err != nil {
		t.Error(err)
	}
	g.AddEdge(kb, "Loop", "loop")
	g.AddEdge("loop", "Loop", "loop")
	mustFail(t, "a trap", CheckReaches(g, terminal, nil), "cannot finish: loop")
	// Only the states that must finish count.
	if err := CheckReaches(g, terminal, func(k string) bool { return k != "loop" }); err != nil {
		t.Error(err)
	}
	// An unreachable goal.
	mustFail(t, "no goal", CheckReaches(toy(), func(string) bool { return false }, nil), "cannot finish: "+ka)
}

func TestCheckNoLivelock(t *testing.T) {
	if err := CheckNoLivelock(toy().Without("Done"), nil); err != nil {
		t.Error(err)
	}
	mustFail(t, "the stutter", CheckNoLivelock(toy(), nil), "-> "+kc+" -Done-> "+kc)

	g := toy().Without("Done")
	loop := Edge{kb, "Stream", kb}
	g.AddEdge(loop.From, loop.Action, loop.To)
	mustFail(t, "a self-loop", CheckNoLivelock(g, nil), "cycle: "+ka+" -> "+kb+" -Stream-> "+kb)
	allowed := func(e Edge) bool { return e == loop }
	if err := CheckNoLivelock(g, allowed); err != nil {
		t.Errorf("allowed loop: %v", err)
	}
	// The allowance is for that step only, not for its states.
	g.AddEdge(kb, "Back", ka)
	mustFail(t, "a longer cycle", CheckNoLivelock(g, allowed), "cycle: "+ka+" -> "+kb+" -Back-> "+ka)
	// States no initial state reaches are searched too.
	h := toy().Without("Done")
	h.AddEdge("x", "Go", "y")
	h.AddEdge("y", "Go", "x")
	mustFail(t, "an unreachable cycle", CheckNoLivelock(h, nil), "cycle: x -> y -Go-> x")
}

func TestMatchSpec(t *testing.T) {
	summary, err := MatchSpec(toy(), []byte(sample), "Toy")
	if err != nil || summary != "the machine: 3 states, 4 steps; tla/Toy.tla: 3 states, 4 steps" {
		t.Errorf("%q, %v", summary, err)
	}
	if _, err := MatchSpec(toy(), []byte(sample), "Other"); err == nil {
		t.Error("the wrong spec matched")
	}
	m := toy().Without("Done")
	if _, err := MatchSpec(m, []byte(sample), "Toy"); err == nil || !strings.Contains(err.Error(), "step only in tla/Toy.tla: "+kc+" -Done-> "+kc) {
		t.Errorf("a missing stutter: %v", err)
	}
}
