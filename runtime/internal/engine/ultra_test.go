package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUltraNeedsAnObserver: selecting Ultra without an observer is refused
// with the typed error, by RunControl.SetReasoning and by the idle
// Agent.SetReasoning, and changes nothing; a route that does not declare
// the mode refuses it even with an observer.
func TestUltraNeedsAnObserver(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ultra    bool // the route declares reasoning_ultra
		observer bool
		want     error
	}{
		{"no observer", true, false, ErrObserverRequired},
		{"undeclared", false, true, ErrUltraUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f *fixture
			f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
				if n == 0 {
					if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "high", Ultra: true}); !errors.Is(err, tc.want) {
						t.Errorf("SetReasoning(Ultra) = %v, want %v", err, tc.want)
					}
				}
			}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"))
			qualify(t, f.home, &req, "openai-responses", "http://127.0.0.1:9/v1", tc.ultra)
			if tc.observer {
				f.agent.SetObserver(func(Observation) {})
			}
			req.ReasoningEffort = new("low")
			_, res, _ := runSteered(t, f, pub, req)
			if res.Status != "completed" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			if got := efforts(f.prov.requests()); !cmp.Equal(got, []string{"low", "low"}) {
				t.Errorf("efforts %q", got)
			}
			if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, []string{"reasoning:low", "user", "run_end"}) {
				t.Errorf("session records %q", got)
			}
			if !tc.observer {
				if err := f.agent.SetReasoning(ReasoningConfig{Ultra: true}); !errors.Is(err, ErrObserverRequired) {
					t.Errorf("Agent.SetReasoning(Ultra) = %v", err)
				}
				if got := f.agent.Reasoning(); got != (ReasoningConfig{Effort: "low"}) {
					t.Errorf("Agent.Reasoning() %+v", got)
				}
			}
		})
	}
}

// TestUltraBaselineSupersedes: Ultra establishes a new request baseline
// (its effort, high by default) instead of an update: the request's effort
// changes, the session records the baseline as Ultra's and it supersedes
// the update before it, while the conversation (the update message and
// the assistant turns included) and the session stay. A later ordinary
// change leaves Ultra as an update on top of Ultra's baseline, and a
// resumed session restores it.
func TestUltraBaselineSupersedes(t *testing.T) {
	var f *fixture
	f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
		var err error
		switch n {
		case 0:
			err = rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "medium"})
		case 1:
			err = rc.SetReasoning(context.Background(), ReasoningConfig{Ultra: true})
		case 2:
			if got := f.agent.Reasoning(); got != (ReasoningConfig{Effort: "high", Ultra: true}) {
				t.Errorf("Agent.Reasoning() in Ultra %+v", got)
			}
			err = rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"})
		}
		if err != nil {
			t.Error(err)
		}
	}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), calls(ToolCall{ID: "b", Name: "ls", Arguments: `{}`}),
		calls(ToolCall{ID: "c", Name: "ls", Arguments: `{}`}), text("done"), text("resumed"))
	qualify(t, f.home, &req, "openai-responses", "http://127.0.0.1:9/v1", true)
	f.agent.SetObserver(func(Observation) {})
	req.ReasoningEffort = new("low")
	_, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	reqs := f.prov.requests()
	if got, want := efforts(reqs), []string{"low", "low", "high", "high"}; !cmp.Equal(got, want) {
		t.Errorf("efforts %q, want %q", got, want)
	}
	for i := 1; i < len(reqs); i++ {
		if len(reqs[i].Messages) <= len(reqs[i-1].Messages) {
			t.Errorf("call %d has %d messages, the one before %d: the conversation must go on", i, len(reqs[i].Messages), len(reqs[i-1].Messages))
		}
		if !cmp.Equal(reqs[i].Messages[:len(reqs[i-1].Messages)], reqs[i-1].Messages) {
			t.Errorf("call %d does not continue the conversation of the call before", i)
		}
	}
	want := []string{"reasoning:low", "user", "update:medium", "ultra:high", "update:low", "run_end"}
	if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, want) {
		t.Errorf("session records %q, want %q", got, want)
	}
	if got := f.agent.Reasoning(); got != (ReasoningConfig{Effort: "low"}) {
		t.Errorf("Agent.Reasoning() after leaving Ultra %+v", got)
	}
	// A new agent resuming the session restores Ultra's baseline and the
	// update on top of it.
	agent, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = agent
	req.RunID, req.Prompt, req.ReasoningEffort = "run-2", "and now?", nil
	if _, next := f.run(req); next.Status != "completed" || *next.SessionFile != *res.SessionFile {
		t.Fatalf("resumed %+v, want completed on the same session %s", next, *res.SessionFile)
	}
	if e := f.prov.requests()[4].ReasoningEffort; e != "high" {
		t.Errorf("resumed effort %q, want Ultra's baseline high", e)
	}
	if got := agent.Reasoning(); got != (ReasoningConfig{Effort: "low"}) {
		t.Errorf("Agent.Reasoning() after the resume %+v", got)
	}
}
