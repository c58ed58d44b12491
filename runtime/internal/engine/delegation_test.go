package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

func toolNames(req ProviderRequest) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestDelegationWorkersInheritOrKeepEffort: selecting Ultra installs the
// delegation manager; the model's delegate calls start worker runs whose
// events reach the observer with the parent's id, each in a session of its
// own, with the parent's effective effort at the call pinned for their
// whole run: a change the parent gets while a worker runs leaves that
// worker as it is and reaches the next worker. Leaving Ultra keeps the
// manager, workers get no delegate tool (depth 1), and a worker's own
// delegate call is denied.
func TestDelegationWorkersInheritOrKeepEffort(t *testing.T) {
	var f *fixture
	f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
		var err error
		switch n {
		case 0:
			err = rc.SetReasoning(context.Background(), ReasoningConfig{Ultra: true})
		case 2:
			// The first worker's first call: the parent leaves Ultra.
			err = rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"})
		}
		if err != nil {
			t.Error(err)
		}
	},
		calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}),                               // 0 parent
		calls(ToolCall{ID: "b", Name: "delegate", Arguments: `{"task":"count the files"}`}), // 1 parent
		calls(ToolCall{ID: "w", Name: "delegate", Arguments: `{"task":"deeper"}`}),          // 2 worker 1
		text("three files"), // 3 worker 1
		calls(ToolCall{ID: "c", Name: "delegate", Arguments: `{"task":"name the largest"}`}), // 4 parent
		text("a.txt"),                      // 5 worker 2
		text("three files, a.txt largest")) // 6 parent
	qualify(t, f.home, &req, "openai-responses", "http://127.0.0.1:9/v1", true)
	var mu sync.Mutex
	var seen []Observation
	f.agent.SetObserver(func(o Observation) {
		mu.Lock()
		seen = append(seen, o)
		mu.Unlock()
	})
	req.ReasoningEffort = new("medium")
	evs, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" || res.Output != "three files, a.txt largest" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if !f.agent.DelegationInstalled() {
		t.Error("the delegation manager is not installed after leaving Ultra")
	}
	reqs := f.prov.requests()
	if got, want := efforts(reqs), []string{"medium", "high", "high", "high", "high", "low", "high"}; !cmp.Equal(got, want) {
		t.Errorf("efforts per call %q, want %q", got, want)
	}
	for i, r := range reqs {
		offered := slices.Contains(toolNames(r), DelegateTool)
		if want := i == 1 || i == 4 || i == 6; offered != want {
			t.Errorf("call %d offers delegate: %v, want %v (tools %q)", i, offered, want, toolNames(r))
		}
	}
	// The delegate results the parent's model read.
	var results []string
	for _, m := range reqs[6].Messages {
		if m.Role == "tool" && m.ToolName == DelegateTool {
			results = append(results, m.Text)
		}
	}
	if want := []string{"three files", "a.txt"}; !cmp.Equal(results, want) {
		t.Errorf("delegate results %q, want %q", results, want)
	}
	// The worker's own delegate call was denied with the stable code.
	var denied bool
	for _, m := range reqs[3].Messages {
		if m.Role == "tool" && m.ToolName == DelegateTool && m.IsError {
			denied = strings.HasPrefix(m.Text, "error "+string(protocol.CodeDelegationNotEnabled)+":")
		}
	}
	if !denied {
		t.Errorf("the worker's delegate call was not denied with %s: %+v", protocol.CodeDelegationNotEnabled, reqs[3].Messages)
	}
	// The observer saw every event of the parent (as its consumer did) and
	// of both workers, each worker in a session of its own.
	mu.Lock()
	defer mu.Unlock()
	byRun := map[string][]Observation{}
	for _, o := range seen {
		byRun[o.RunID] = append(byRun[o.RunID], o)
	}
	if n := len(byRun["run-1"]); n != len(evs) {
		t.Errorf("the observer saw %d events of the parent, its consumer %d", n, len(evs))
	}
	sessions := map[string]bool{*res.SessionFile: true}
	for _, id := range []string{"run-1.worker-1", "run-1.worker-2"} {
		obs := byRun[id]
		if len(obs) == 0 {
			t.Fatalf("no events of %s", id)
		}
		last := obs[len(obs)-1]
		fr, ok := last.Event.Data.(*protocol.FinalResult)
		if !ok || fr.Status != "completed" || last.Parent != "run-1" || obs[0].Event.Type != protocol.TypeAccepted {
			t.Errorf("%s: first %s, last %+v (parent %q)", id, obs[0].Event.Type, last.Event, last.Parent)
			continue
		}
		if sessions[*fr.SessionFile] {
			t.Errorf("%s shares session %s", id, *fr.SessionFile)
		}
		sessions[*fr.SessionFile] = true
	}
}

// TestDelegationWorkerLimit: a run starts at most MaxWorkersPerRun
// workers; the call after fails with worker_limit without starting one,
// and the run goes on.
func TestDelegationWorkerLimit(t *testing.T) {
	var cs []ToolCall
	for i := range MaxWorkersPerRun + 1 {
		cs = append(cs, ToolCall{ID: "d" + strconv.Itoa(i), Name: DelegateTool, Arguments: `{"task":"part ` + strconv.Itoa(i) + `"}`})
	}
	turns := [][]StreamEvent{calls(cs...)}
	for range MaxWorkersPerRun {
		turns = append(turns, text("part done"))
	}
	turns = append(turns, text("all parts"))
	f, pub, req := toggleFixture(t, "openai-responses", func(*RunControl, int) {}, turns...)
	qualify(t, f.home, &req, "openai-responses", "http://127.0.0.1:9/v1", true)
	f.agent.SetObserver(func(Observation) {})
	if err := f.agent.SetReasoning(ReasoningConfig{Ultra: true}); err != nil {
		t.Fatal(err)
	}
	_, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" || res.Output != "all parts" || res.ToolCalls != MaxWorkersPerRun+1 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	reqs := f.prov.requests()
	if len(reqs) != MaxWorkersPerRun+2 {
		t.Fatalf("%d model calls, want %d", len(reqs), MaxWorkersPerRun+2)
	}
	last := reqs[len(reqs)-1].Messages
	var ok, limited int
	for _, m := range last {
		switch {
		case m.Role == "tool" && !m.IsError && m.Text == "part done":
			ok++
		case m.Role == "tool" && m.IsError && strings.HasPrefix(m.Text, "error "+string(CodeWorkerLimit)+":"):
			limited++
		}
	}
	if ok != MaxWorkersPerRun || limited != 1 {
		t.Errorf("%d worker results and %d limit refusals, want %d and 1", ok, limited, MaxWorkersPerRun)
	}
	// Ultra from the idle setter: the run's baseline is Ultra's.
	if reqs[0].ReasoningEffort != "high" {
		t.Errorf("the run's effort %q, want Ultra's high", reqs[0].ReasoningEffort)
	}
}

// TestDelegationInheritsTheNetworkWaitCeiling: a worker takes the parent's
// network-wait ceiling (no waiting here), not the agent's setting changed
// since the parent started (no ceiling): its refused connection ends it at
// once with network_wait_exceeded, which the delegate call reports.
func TestDelegationInheritsTheNetworkWaitCeiling(t *testing.T) {
	var f *fixture
	f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
		if n == 0 {
			f.agent.SetMaxNetworkWait(nil)
		}
	}, calls(ToolCall{ID: "d", Name: DelegateTool, Arguments: `{"task":"fetch"}`}), text("worker answer"), text("parent answer"))
	qualify(t, f.home, &req, "openai-responses", "http://127.0.0.1:9/v1", true)
	f.prov.errs = []error{nil, pe("connect", 0, false, false)}
	zero := time.Duration(0)
	f.agent.SetMaxNetworkWait(&zero)
	f.agent.SetObserver(func(Observation) {})
	if err := f.agent.SetReasoning(ReasoningConfig{Ultra: true}); err != nil {
		t.Fatal(err)
	}
	_, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	reqs := f.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3 (the worker's one, not retried)", len(reqs))
	}
	var got string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" && m.ToolName == DelegateTool {
			got = m.Text
		}
	}
	if !strings.HasPrefix(got, "error "+string(CodeWorkerFailed)+":") || !strings.Contains(got, "network_wait_exceeded") {
		t.Errorf("delegate result %q, want worker_failed with network_wait_exceeded", got)
	}
}

// workerGate answers parents with one delegate call and workers after
// holding them until released, counting the workers in flight.
type workerGate struct {
	mu       sync.Mutex
	inFlight int
	peak     int
	started  chan struct{}
	release  chan struct{}
}

func (g *workerGate) Stream(ctx context.Context, req ProviderRequest) (ProviderStream, error) {
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == "tool":
		return &sliceStream{ctx: ctx, evs: text("parent done")}, nil
	case last.Text == "go":
		return &sliceStream{ctx: ctx, evs: calls(ToolCall{ID: "d", Name: DelegateTool, Arguments: `{"task":"wait"}`})}, nil
	}
	g.mu.Lock()
	g.inFlight++
	g.peak = max(g.peak, g.inFlight)
	g.mu.Unlock()
	g.started <- struct{}{}
	<-g.release
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return &sliceStream{ctx: ctx, evs: text("worker done")}, nil
}

// TestDelegationConcurrencyBound: at most MaxConcurrentWorkers workers of
// an agent run at once; a delegate call over the bound waits for a slot
// and then runs.
func TestDelegationConcurrencyBound(t *testing.T) {
	f := newFixture(t)
	g := &workerGate{started: make(chan struct{}), release: make(chan struct{})}
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return g, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.SetObserver(func(Observation) {})
	if err := a.SetReasoning(ReasoningConfig{Ultra: true}); err != nil {
		t.Fatal(err)
	}
	const parents = MaxConcurrentWorkers + 2
	var rcs []*RunControl
	for i := range parents {
		req := f.req("go")
		req.RunID = "run-" + strconv.Itoa(i)
		rc, err := a.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range rc.Events() {
			}
		}()
		rcs = append(rcs, rc)
	}
	// The bound's workers start; the others wait for a slot.
	for range MaxConcurrentWorkers {
		<-g.started
	}
	select {
	case <-g.started:
		t.Fatal("a worker started over the bound")
	case <-time.After(100 * time.Millisecond):
	}
	// Releasing one worker lets one waiting worker start, and so on.
	for i := range parents {
		g.release <- struct{}{}
		if i < parents-MaxConcurrentWorkers {
			<-g.started
		}
	}
	for _, rc := range rcs {
		if res := rc.Wait(); res.Status != "completed" || res.Output != "parent done" {
			t.Errorf("%+v %+v", res, res.Error)
		}
	}
	if g.peak != MaxConcurrentWorkers {
		t.Errorf("peak workers in flight %d, want %d", g.peak, MaxConcurrentWorkers)
	}
}
