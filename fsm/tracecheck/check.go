package tracecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"octet.dev/host/fsm/internal/graphcheck"
)

// Message is the message of a transition line.
const Message = "state machine transition"

// Specs lists the specs a Checker needs, by name: New wants the graph
// file of each (tla/<Spec>.graph.json).
func Specs() []string {
	var out []string
	for _, m := range models {
		out = append(out, m.spec)
	}
	slices.Sort(out)
	return out
}

// abstract is a spec's graph through a machine's abstraction.
type abstract struct {
	model
	initial map[string]bool
	edges   map[graphcheck.Edge]bool
}

// Checker replays one log, a line at a time. It holds each machine
// instance's last logged state, nothing else of the log.
type Checker struct {
	machines  map[string]*abstract
	instances map[Instance]*replay
	runs      map[string]bool
	taken     map[takenKey]bool // the abstract spec steps taken
	stats     Stats
	line      int
}

// Instance names one machine instance of a log: the session machine has
// no run ID and a run has one recovery machine per operation (Number, 1
// up; 0 for the other machines).
type Instance struct {
	RunID   string
	Machine string
	Number  int64
}

func (i Instance) String() string {
	s := "run " + i.RunID
	if i.RunID == "" {
		s = "the session"
	}
	s += ", machine " + i.Machine
	if i.Number > 0 {
		s += fmt.Sprintf(" #%d", i.Number)
	}
	return s
}

// replay is where one instance stands.
type replay struct {
	steps int
	state string // the last logged to_state
}

// Stats counts what a Checker checked.
type Stats struct {
	Lines     int            // lines read
	Steps     int            // transitions checked
	Instances int            // machine instances seen
	Runs      int            // run IDs seen
	ByMachine map[string]int // transitions checked per machine
	// Covered counts per spec the abstract spec steps the log took, of
	// Steps in all (Edges).
	Covered map[string]int
	Edges   map[string]int
}

// String is the summary the command prints.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d transitions checked (%d lines, %d runs, %d machine instances):", s.Steps, s.Lines, s.Runs, s.Instances)
	names := make([]string, 0, len(s.ByMachine))
	for m := range s.ByMachine {
		names = append(names, m)
	}
	slices.Sort(names)
	for _, m := range names {
		spec := models[m].spec
		fmt.Fprintf(&b, " %s %d (%d of %s's %d abstract steps)", m, s.ByMachine[m], s.Covered[spec], spec, s.Edges[spec])
	}
	return b.String()
}

// Violation is the first logged step the spec does not allow.
type Violation struct {
	Line     int // 1-based line of the log
	Instance Instance
	Index    int // the step's index within its instance, 0 up
	Trigger  string
	From, To string // the logged states (JSON)
	Reason   string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("line %d: %s, step %d (%s): %s\n  from %s\n  to   %s", v.Line, v.Instance, v.Index, v.Trigger, v.Reason, v.From, v.To)
}

// New returns a Checker over the specs' graph files, by spec name (Specs).
func New(graphs map[string][]byte) (*Checker, error) {
	c := &Checker{machines: map[string]*abstract{}, instances: map[Instance]*replay{}, runs: map[string]bool{}, taken: map[takenKey]bool{},
		stats: Stats{ByMachine: map[string]int{}, Covered: map[string]int{}, Edges: map[string]int{}}}
	for name, m := range models {
		data, ok := graphs[m.spec]
		if !ok {
			return nil, fmt.Errorf("no graph of %s", m.spec)
		}
		g, err := graphcheck.ParseSpecGraph(data, m.spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", m.spec, err)
		}
		a := &abstract{model: m, initial: map[string]bool{}, edges: map[graphcheck.Edge]bool{}}
		abs := func(k string) string {
			var s specState
			if err := json.Unmarshal([]byte(k), &s); err != nil {
				panic(err) // ParseSpecGraph keyed it by canonical JSON
			}
			return m.absSpec(s)
		}
		for _, k := range g.Initial {
			a.initial[abs(k)] = true
		}
		for e := range g.Edges {
			a.edges[graphcheck.Edge{From: abs(e.From), Action: e.Action, To: abs(e.To)}] = true
		}
		c.machines[name] = a
		c.stats.Edges[m.spec] = len(a.edges)
	}
	return c, nil
}

// numbered are the machines a run has several instances of, each logged
// with its number: one recovery machine per operation, one native
// steering machine per intent.
var numbered = map[string]bool{"recovery": true, "native_steering": true}

// entry is a transition line; other lines decode to no Msg or Message.
type entry struct {
	Message   string `json:"message"` // zerolog's (octet-host)
	Msg       string `json:"msg"`     // log/slog's
	RunID     string `json:"run_id"`
	Machine   string `json:"machine"`
	Instance  int64  `json:"instance"`
	Trigger   string `json:"trigger"`
	From      string `json:"from"`
	To        string `json:"to"`
	FromState string `json:"from_state"`
	ToState   string `json:"to_state"`
}

// Line checks one line of the log. Lines that are not JSON objects or
// not transitions are counted and skipped. It returns a *Violation for
// the first step the specs do not allow; the Checker must not be fed
// after one.
func (c *Checker) Line(b []byte) error {
	c.line++
	c.stats.Lines++
	if !json.Valid(b) {
		return nil
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil || (e.Message != Message && e.Msg != Message) {
		return nil
	}
	inst := Instance{RunID: e.RunID, Machine: e.Machine, Number: e.Instance}
	r := c.instances[inst]
	if r == nil {
		r = &replay{}
		c.instances[inst] = r
		c.stats.Instances++
		if e.RunID != "" && !c.runs[e.RunID] {
			c.runs[e.RunID] = true
			c.stats.Runs++
		}
	}
	v := &Violation{Line: c.line, Instance: inst, Index: r.steps, Trigger: e.Trigger, From: e.FromState, To: e.ToState}
	fail := func(format string, args ...any) error {
		v.Reason = fmt.Sprintf(format, args...)
		return v
	}
	a := c.machines[e.Machine]
	switch {
	case a == nil:
		return fail("unknown machine %q", e.Machine)
	case e.FromState == "" || e.ToState == "":
		return fail("no from_state or to_state (a log from before states were traced?)")
	case numbered[e.Machine] != (e.Instance > 0):
		return fail("instance %d", e.Instance)
	}
	action, ok := a.action(e.Trigger, e.To)
	if !ok {
		return fail("unknown trigger %q", e.Trigger)
	}
	from, fromPhase, err := a.absTraced([]byte(e.FromState))
	if err != nil {
		return fail("%v", err)
	}
	to, toPhase, err := a.absTraced([]byte(e.ToState))
	if err != nil {
		return fail("%v", err)
	}
	if fromPhase != e.From || toPhase != e.To {
		return fail("the states' phases %s -> %s are not the logged %s -> %s", fromPhase, toPhase, e.From, e.To)
	}
	if r.steps == 0 {
		if !a.initial[from] {
			return fail("%s [%s] is not an initial state of %s", e.From, from, a.spec)
		}
	} else if e.FromState != r.state {
		return fail("it starts from another state than step %d ended in (%s)", r.steps-1, r.state)
	}
	edge := graphcheck.Edge{From: from, Action: action, To: to}
	if !a.edges[edge] {
		return fail("%s does not allow %s: [%s] -%s-> [%s]", a.spec, action, from, action, to)
	}
	if !c.took(edge, a.spec) {
		c.stats.Covered[a.spec]++
	}
	r.steps++
	r.state = e.ToState
	c.stats.Steps++
	c.stats.ByMachine[e.Machine]++
	return nil
}

// took records an abstract step taken and says whether it was before.
func (c *Checker) took(e graphcheck.Edge, spec string) bool {
	k := takenKey{spec, e}
	if c.taken[k] {
		return true
	}
	c.taken[k] = true
	return false
}

type takenKey struct {
	spec string
	e    graphcheck.Edge
}

// Stats returns what was checked so far.
func (c *Checker) Stats() Stats { return c.stats }

// Load returns a Checker over the graph files read returns, by file name
// (<Spec>.graph.json): a command passes a reader of the tla directory.
func Load(read func(file string) ([]byte, error)) (*Checker, error) {
	graphs := map[string][]byte{}
	for _, s := range Specs() {
		data, err := read(s + ".graph.json")
		if err != nil {
			return nil, err
		}
		graphs[s] = data
	}
	return New(graphs)
}

// Log checks every line of log (Line) and returns the first violation.
func (c *Checker) Log(log []byte) error {
	for len(log) > 0 {
		line, rest, _ := bytes.Cut(log, []byte("\n"))
		log = rest
		if err := c.Line(line); err != nil {
			return err
		}
	}
	return nil
}

// HasAction says whether trigger of machine names an action its spec's
// graph takes somewhere.
func (c *Checker) HasAction(machine, trigger string) bool {
	a := c.machines[machine]
	if a == nil {
		return false
	}
	action, ok := a.action(trigger, "")
	if !ok {
		return false
	}
	for e := range a.edges {
		if e.Action == action {
			return true
		}
	}
	return false
}
