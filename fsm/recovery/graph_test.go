package recovery_test

// The spec-to-code tie of DESIGN §4: enumerate the real machine's reachable
// graph and require it to be the graph of tla/Recovery.tla, which
// tla/check.mjs exports to tla/Recovery.graph.json (and keeps equal to what
// tla-checker explores). The explorer also checks what the checker cannot:
// no state but the outcomes is stuck, the outcomes are absorbing, every
// state can still reach an outcome, the sticky and budget properties along
// every step, and, as the finite stand-in for "no livelock", that a bounded
// max network wait bounds the number of waits whatever the clock does
// while no ceiling is an intended endless wait.

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"octet.dev/host/fsm/internal/graphcheck"
	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
)

// The model of tla/Recovery.cfg.
const (
	modelMaxAttempts = 2
	modelMaxClock    = 4
	// modelRetryAfter is RetryAfterTicks, the Retry-After of fault
	// retry_after.
	modelRetryAfter = 2
)

// modelWaitLimits are WaitLimits = {"none", 0, 4}: nil is "none".
var modelWaitLimits = []*int64{nil, ptr(0), ptr(4)}

func ptr(v int64) *int64 { return &v }

// modelConfig is the machine's configuration for one WaitLimits value:
// constant network and retry backoffs of [1, 2] ms, the spec's
// NetMin..NetMax and RetryMin..RetryMax.
func modelConfig(maxWait *int64) recovery.Config {
	c := recovery.DefaultConfig()
	c.MaxAttempts = modelMaxAttempts
	c.MaxNetworkWaitMS = maxWait
	c.Policy.Network = recovery.Backoff{BaseMS: 2, Factor: 1, CapMS: 2}
	c.Policy.Retry = recovery.Backoff{BaseMS: 2, Factor: 1, CapMS: 2}
	return c
}

const graphFile = "../../tla/Recovery.graph.json"

// specNone is Recovery.tla's None.
const specNone = "none"

// faults maps the spec's abstract faults to the facts the edge would
// collect for them (see the table in Recovery.tla).
var faults = map[string]recovery.Facts{
	"outage":   {Kind: recovery.FailConnect, Message: "dial tcp: connection refused"},
	"throttle": {Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true, Message: "rate limited"},
	"retry_after": {Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true,
		RetryAfterMS: modelRetryAfter, Message: "rate limited"},
	"cut":      {Kind: recovery.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before [DONE]"},
	"auth":     {Kind: recovery.FailHTTPStatus, Status: 401, Code: "invalid_api_key", RequestWritten: true, Message: "bad key"},
	"overflow": {Kind: recovery.FailErrorEvent, Code: "context_length_exceeded", RequestWritten: true, ContentStarted: true, Message: "too long"},
	"long_retry_after": {Kind: recovery.FailHTTPStatus, Status: 429, RequestWritten: true,
		RetryAfterMS: recovery.DefaultRetryAfterCeilingMS + 1, Message: "rate limited"},
}

// faultNames lists faults in a fixed order.
var faultNames = []string{"outage", "throttle", "retry_after", "cut", "auth", "overflow", "long_retry_after"}

// jitters reach both ends of NetMin..NetMax and RetryMin..RetryMax: 0 →
// 1 ms, 0.75 → 2 ms.
var jitters = []float64{0, 0.75}

// jittered lists the faults whose step depends on the jitter: those whose
// delay is a backoff's.
var jittered = map[string]bool{"outage": true, "throttle": true, "cut": true}

// specState is a state of Recovery.tla as GraphView projects it. Fields
// are in the order of the canonical JSON check.mjs writes; Outage and
// MaxWait are a number or "none".
type specState struct {
	Code      protocol.Code `json:"code"`
	Floor     int64         `json:"floor"`
	MaxWait   any           `json:"max_wait"`
	Outage    any           `json:"outage"`
	Phase     string        `json:"phase"`
	Retries   int           `json:"retries"`
	Uncertain bool          `json:"uncertain"`
	Waits     int           `json:"waits"`
}

func (s specState) key() string { return graphcheck.Key(s) }

// toSpec maps a machine state and its configuration's max network wait to
// the spec's variables: phase strings are the same, Code "" is None,
// OutageStartMS is outage when Outage holds and None otherwise, a nil
// MaxNetworkWaitMS is None.
func toSpec(st recovery.State, maxWait *int64) specState {
	s := specState{
		Code: st.Code, Floor: st.OutageFloorMS, MaxWait: specNone, Outage: specNone,
		Phase: string(st.Phase), Retries: st.Retries, Uncertain: st.Uncertain, Waits: st.NetworkWaits,
	}
	if s.Code == "" {
		s.Code = specNone
	}
	if st.Outage {
		s.Outage = st.OutageStartMS
	}
	if maxWait != nil {
		s.MaxWait = *maxWait
	}
	return s
}

// actionOf names the spec action of each trigger.
var actionOf = map[recovery.Trigger]string{
	recovery.TrStart:            "Start",
	recovery.TrAttemptFailed:    "AttemptFailed",
	recovery.TrAttemptSucceeded: "AttemptSucceeded",
	recovery.TrTimerFired:       "TimerFired",
	recovery.TrCancel:           "Cancel",
	recovery.TrAbort:            "Abort",
}

// doneAction is the spec's stuttering step in the outcomes.
const doneAction = "Done"

// abortCode is the code the model's Abort carries.
const abortCode = "aborted"

// inputs lists every input of trigger t from a node whose clock is clock:
// AttemptFailed with each fault of faultSet, each reading now in
// clock..maxClock and (for the faults whose delay is a backoff's) each
// jitter; TimerFired with each reading in clock..max(clock, maxClock) (a
// timer can always fire); Cancel with an attempt whose request was not
// written, was written, and had content; Abort with the model's code and
// with none (which the machine must refuse).
func inputs(t recovery.Trigger, clock, maxClock int64, faultSet []string) []recovery.Input {
	switch t {
	case recovery.TrAttemptFailed:
		var in []recovery.Input
		for _, f := range faultSet {
			js := jitters
			if !jittered[f] {
				js = jitters[:1]
			}
			for now := clock; now <= maxClock; now++ {
				for _, j := range js {
					in = append(in, recovery.Input{Trigger: t, Facts: faults[f], NowMS: now, Jitter: j})
				}
			}
		}
		return in
	case recovery.TrTimerFired:
		var in []recovery.Input
		for now := clock; now <= max(clock, maxClock); now++ {
			in = append(in, recovery.Input{Trigger: t, NowMS: now})
		}
		return in
	case recovery.TrCancel:
		return []recovery.Input{
			{Trigger: t},
			{Trigger: t, Facts: recovery.Facts{RequestWritten: true}},
			{Trigger: t, Facts: recovery.Facts{RequestWritten: true, ContentStarted: true}},
		}
	case recovery.TrAbort:
		return []recovery.Input{{Trigger: t, Code: abortCode, Message: "append failed"}, {Trigger: t}}
	}
	return []recovery.Input{{Trigger: t}}
}

func mustFromState(t *testing.T, cfg recovery.Config, st recovery.State) *recovery.Machine {
	t.Helper()
	m, err := recovery.FromState(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// machineGraph is the machine's reachable graph over every model
// configuration, states keyed by their spec mapping.
type machineGraph struct {
	graphcheck.Graph
	states   map[string]recovery.State
	maxWait  map[string]*int64
	maxWaits map[string]int // per configuration ("nil", "0", "2"): the most network waits reached
}

// terminal says whether the state keyed k is an outcome.
func (g machineGraph) terminal(k string) bool { return g.states[k].Phase.Terminal() }

// node is a state of the exploration: the machine's state and the
// environment's clock, the earliest reading the next failure may carry
// (the spec's clock: monotonic, and no earlier than the end of the last
// network wait).
type node struct {
	st    recovery.State
	clock int64
}

func limitName(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// explore enumerates the machine breadth-first from New, for each max
// network wait of the model, firing every input of every trigger from
// every state with readings up to maxClock. It checks on the way that
// Permitted and Fire agree, that a refused input changes nothing, and the
// effects of every step (checkStep).
func explore(t *testing.T, limits []*int64, maxClock int64, faultSet []string) machineGraph {
	t.Helper()
	g := machineGraph{
		Graph:    graphcheck.New("the machine"),
		states:   map[string]recovery.State{},
		maxWait:  map[string]*int64{},
		maxWaits: map[string]int{},
	}
	for _, limit := range limits {
		cfg := modelConfig(limit)
		add := func(st recovery.State) string {
			k := toSpec(st, limit).key()
			if prev, ok := g.states[k]; ok && prev != st {
				t.Fatalf("mapping not injective: %+v and %+v both map to %s", prev, st, k)
			}
			g.states[k] = st
			g.maxWait[k] = limit
			g.AddState(k)
			return k
		}
		m0, err := recovery.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		start := m0.State()
		g.Initial = append(g.Initial, add(start))
		seen := map[node]bool{{start, 0}: true}
		queue := []node{{start, 0}}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			st := n.st
			from := toSpec(st, limit).key()
			g.maxWaits[limitName(limit)] = max(g.maxWaits[limitName(limit)], st.NetworkWaits)
			moved := false
			for _, tr := range recovery.Triggers {
				for _, in := range inputs(tr, n.clock, maxClock, faultSet) {
					m := mustFromState(t, cfg, st)
					permitted := slices.Contains(m.Permitted(in), tr)
					if m.State() != st {
						t.Fatalf("%+v: Permitted(%+v) changed the state to %+v", st, in, m.State())
					}
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
					next := m.State()
					checkStep(t, cfg, st, in, effs, next)
					to := add(next)
					nn := node{next, n.clock}
					switch tr {
					case recovery.TrAttemptFailed:
						// The next reading comes no earlier than the end of
						// the timer the step started.
						nn.clock = in.NowMS
						if i := slices.IndexFunc(effs, func(e recovery.Effect) bool { return e.Kind == recovery.EffStartTimer }); i >= 0 {
							nn.clock += effs[i].DelayMS
						}
					case recovery.TrTimerFired:
						nn.clock = in.NowMS
					}
					if !seen[nn] {
						seen[nn] = true
						queue = append(queue, nn)
					}
					g.AddEdge(from, actionOf[tr], to)
					moved = true
				}
			}
			if !moved && st.Phase.Terminal() {
				g.AddEdge(from, doneAction, from)
			}
		}
	}
	return g
}

// checkStep checks the effects of one step against the package's
// documented order and against the state it leads to.
func checkStep(t *testing.T, cfg recovery.Config, from recovery.State, in recovery.Input, effs []recovery.Effect, to recovery.State) {
	t.Helper()
	kinds := make([]recovery.EffectKind, len(effs))
	for i, e := range effs {
		kinds[i] = e.Kind
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%+v -%s(%+v)-> %+v, effects %v: %s", from, in.Trigger, in.Facts, to, kinds, fmt.Sprintf(format, args...))
	}
	if from.Uncertain && !to.Uncertain {
		fail("uncertainty cleared")
	}
	if to.Retries < from.Retries || to.NetworkWaits < from.NetworkWaits {
		fail("a counter went down")
	}
	if to.Retries > cfg.MaxAttempts {
		fail("retries %d above the budget %d", to.Retries, cfg.MaxAttempts)
	}
	// What the failed attempt's facts say (Cancel takes them as canceled).
	f := in.Facts
	if in.Trigger == recovery.TrCancel {
		f.Kind = recovery.FailCanceled
	}
	abandons := from.Phase == recovery.Attempting &&
		(in.Trigger == recovery.TrAttemptFailed || in.Trigger == recovery.TrCancel || in.Trigger == recovery.TrAbort)
	billed := abandons && in.Trigger != recovery.TrAbort && recovery.UsageUncertain(f)
	var want []recovery.EffectKind
	if billed {
		want = append(want, recovery.EffPersistUsageUncertainty)
	}
	if abandons {
		want = append(want, recovery.EffDiscardAttempt)
	}
	switch to.Phase {
	case recovery.BackingOff:
		want = append(want, recovery.EffEmitRetry, recovery.EffStartTimer)
	case recovery.WaitingForNetwork:
		want = append(want, recovery.EffEmitWaitingForNetwork, recovery.EffStartTimer)
	case recovery.Attempting:
		want = append(want, recovery.EffStartAttempt)
	case recovery.Succeeded:
		want = append(want, recovery.EffSucceed)
	case recovery.Failed:
		want = append(want, recovery.EffFail)
	}
	if !slices.Equal(kinds, want) {
		fail("want %v", want)
	}
	if billed && !to.Uncertain {
		fail("usage uncertainty persisted but the flag is not set")
	}
	if !billed && !from.Uncertain && to.Uncertain {
		fail("uncertain without persisting the record")
	}
	for _, e := range effs {
		switch e.Kind {
		case recovery.EffEmitRetry:
			if to.Retries != from.Retries+1 || e.Attempt != to.Retries || e.MaxAttempts != cfg.MaxAttempts || to.NetworkWaits != from.NetworkWaits {
				fail("retry event %+v: retries %d -> %d", e, from.Retries, to.Retries)
			}
		case recovery.EffEmitWaitingForNetwork:
			if to.Retries != from.Retries || e.Attempt != to.NetworkWaits || to.NetworkWaits != from.NetworkWaits+1 {
				fail("network wait %+v: retries %d -> %d, waits %d -> %d", e, from.Retries, to.Retries, from.NetworkWaits, to.NetworkWaits)
			}
			if lim := cfg.MaxNetworkWaitMS; lim != nil && to.OutageFloorMS >= *lim {
				fail("network wait %+v ends at %d ms of outage, not before the limit %d", e, to.OutageFloorMS, *lim)
			}
		case recovery.EffStartTimer:
			if e.DelayMS < 1 {
				fail("timer of %d ms", e.DelayMS)
			}
			if lim := cfg.MaxNetworkWaitMS; lim != nil && to.Outage && (to.OutageFloorMS >= *lim || in.NowMS-to.OutageStartMS+e.DelayMS >= *lim) {
				fail("timer %+v at %d ends %d ms into the outage, not before the limit %d", e, in.NowMS, to.OutageFloorMS, *lim)
			}
		case recovery.EffStartAttempt:
			if e.Attempt != 1+to.Retries+to.NetworkWaits {
				fail("start attempt %d, want 1 + retries + waits", e.Attempt)
			}
			armed := to.Outage && cfg.MaxNetworkWaitMS != nil
			if armed != (e.OpenWithinMS > 0) || e.OpenWithinMS < 0 {
				fail("start attempt %+v: the opening is bounded exactly when the ceiling is armed", e)
			}
			if armed && (in.NowMS-to.OutageStartMS+e.OpenWithinMS > *cfg.MaxNetworkWaitMS || to.OutageFloorMS+e.OpenWithinMS > *cfg.MaxNetworkWaitMS) {
				fail("start attempt %+v at %d: its opening ends past the ceiling", e, in.NowMS)
			}
		case recovery.EffFail:
			if e.Code == "" || e.Code != to.Code {
				fail("fail %+v in state code %q", e, to.Code)
			}
		}
	}
	if (to.Phase == recovery.Failed) != (to.Code != "") {
		fail("code %q in %s", to.Code, to.Phase)
	}
}

var (
	modelOnce  sync.Once
	modelCache machineGraph
)

// modelGraph is the graph of the model of tla/Recovery.cfg, explored once
// per test binary (the tests only read it).
func modelGraph(t *testing.T) machineGraph {
	t.Helper()
	modelOnce.Do(func() { modelCache = explore(t, modelWaitLimits, modelMaxClock, faultNames) })
	if len(modelCache.States) == 0 {
		t.Fatal("the model graph could not be explored")
	}
	return modelCache
}

func TestGraphMatchesSpec(t *testing.T) {
	graphcheck.CheckSpecFile(t, os.ReadFile, graphFile, modelGraph(t).Graph, "Recovery")
}

// TestNoDeadlock: only the outcomes have no successor.
func TestNoDeadlock(t *testing.T) {
	g := modelGraph(t)
	if err := graphcheck.CheckNoDeadlock(g.Without(doneAction), g.terminal); err != nil {
		t.Error(err)
	}
}

// TestTerminalAbsorbing: succeeded and failed accept no input at all.
func TestTerminalAbsorbing(t *testing.T) {
	g := modelGraph(t)
	if err := graphcheck.CheckAbsorbing(g.Graph, g.terminal); err != nil {
		t.Error(err)
	}
	terminals := 0
	for k, st := range g.states {
		if !st.Phase.Terminal() {
			continue
		}
		terminals++
		cfg := modelConfig(g.maxWait[k])
		for _, tr := range recovery.Triggers {
			// One reading is enough: nothing is accepted here whatever the
			// arguments.
			for _, in := range inputs(tr, modelMaxClock, modelMaxClock, faultNames) {
				m := mustFromState(t, cfg, st)
				if p := m.Permitted(in); len(p) > 0 {
					t.Errorf("%+v permits %v for %+v", st, p, in)
				}
				if effs, err := m.Fire(in); err == nil || len(effs) > 0 {
					t.Errorf("%+v accepted %+v: %v", st, in, effs)
				}
				if m.State() != st {
					t.Errorf("%+v changed to %+v on %+v", st, m.State(), in)
				}
			}
		}
	}
	if terminals == 0 {
		t.Error("no outcome reached")
	}
}

// TestCanFinish: from every state the turn can still reach an outcome. The
// wasm checker checks safety only; this is the finite stand-in for the
// liveness the spec leaves unchecked. Every outcome code the model can
// reach is reached.
func TestCanFinish(t *testing.T) {
	g := modelGraph(t)
	if err := graphcheck.CheckReaches(g.Without(doneAction), g.terminal, nil); err != nil {
		t.Errorf("an outcome: %v", err)
	}
	codes := map[string]bool{}
	for _, st := range g.states {
		if st.Phase.Terminal() {
			codes[string(st.Phase)+" "+string(st.Code)] = true
		}
	}
	for _, c := range []string{
		"succeeded ", "failed auth_failed", "failed context_overflow", "failed retries_exhausted",
		"failed retry_after_too_long", "failed network_wait_exceeded", "failed canceled", "failed aborted",
	} {
		if !codes[c] {
			t.Errorf("outcome %q never reached: %v", c, codes)
		}
	}
}

// TestAcyclic: the machine's graph has no cycle at all (every step but
// Done raises a counter or ends the turn), so livelock can only be an
// infinite path. With a bounded max network wait there is none: the
// number of waits is bounded whatever the readings (TestNetworkWaitBounded).
func TestAcyclic(t *testing.T) {
	g := modelGraph(t)
	if err := graphcheck.CheckNoLivelock(g.Without(doneAction), nil); err != nil {
		t.Error(err)
	}
}

// TestNetworkWaitBounded is the Go-only livelock check. With a bounded max
// network wait W the waits of a turn stop after a bounded number of them
// (here W-1, the minimum delay being 1 ms and every wait ending strictly
// before the ceiling), however the clock readings go:
// the exploration lets them run well past the allowance, and a stalled
// clock cannot stretch it either, because the machine counts the waits it
// scheduled (OutageFloorMS). With no ceiling (nil) they never stop: an
// outage that never ends is the intended endless wait, which only
// cancellation (the process group, the context) ends.
func TestNetworkWaitBounded(t *testing.T) {
	const horizon = 9
	limits := []*int64{ptr(0), ptr(2), ptr(5)}
	// Outages only (and the triggers without facts): the other faults
	// end the turn or leave the waits alone.
	g := explore(t, limits, horizon, []string{"outage"})
	for _, lim := range limits {
		if got, bound := g.maxWaits[limitName(lim)], max(int(*lim)-1, 0); got != bound {
			t.Errorf("limit %d ms, readings up to %d: at most %d waits, want exactly %d", *lim, horizon, got, bound)
		}
	}
	// A stalled clock (every reading 0).
	for _, lim := range []int64{2, 5} {
		m, err := recovery.New(modelConfig(ptr(lim)))
		if err != nil {
			t.Fatal(err)
		}
		mustFire(t, m, recovery.Input{Trigger: recovery.TrStart})
		waits := 0
		for {
			effs := mustFire(t, m, recovery.Input{Trigger: recovery.TrAttemptFailed, Facts: faults["outage"], NowMS: 0, Jitter: 0.99})
			if m.State().Phase == recovery.Failed {
				if m.State().Code != recovery.CodeNetworkWaitExceeded {
					t.Errorf("limit %d: failed with %q", lim, m.State().Code)
				}
				break
			}
			waits++
			if waits > 100 {
				t.Fatalf("limit %d ms, clock stalled at 0: still waiting after %d waits (%v)", lim, waits, effs)
			}
			mustFire(t, m, recovery.Input{Trigger: recovery.TrTimerFired})
		}
		if waits > int(lim)-1 {
			t.Errorf("limit %d ms, clock stalled: %d waits", lim, waits)
		}
	}
	// No ceiling: ten thousand waits and still waiting, the budget
	// untouched; the delays stay at the cap.
	m, err := recovery.New(recovery.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mustFire(t, m, recovery.Input{Trigger: recovery.TrStart})
	now := int64(0)
	for i := range 10_000 {
		effs := mustFire(t, m, recovery.Input{Trigger: recovery.TrAttemptFailed, Facts: faults["outage"], NowMS: now, Jitter: 0.5})
		if st := m.State(); st.Phase != recovery.WaitingForNetwork || st.NetworkWaits != i+1 || st.Retries != 0 {
			t.Fatalf("wait %d: %+v", i+1, st)
		}
		now += effs[len(effs)-1].DelayMS
		mustFire(t, m, recovery.Input{Trigger: recovery.TrTimerFired})
	}
	if d := now / 10_000; d < recovery.DefaultNetworkCapMS/2 || d > recovery.DefaultNetworkCapMS {
		t.Errorf("mean wait %d ms", d)
	}
}

func mustFire(t *testing.T, m *recovery.Machine, in recovery.Input) []recovery.Effect {
	t.Helper()
	effs, err := m.Fire(in)
	if err != nil {
		t.Fatalf("%+v: %v", m.State(), err)
	}
	return slices.Clone(effs)
}
