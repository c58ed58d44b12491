package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// qualify points req at a configured route of the given wire mode whose
// model and provider (the endpoint) declare reasoning_updates (and the
// model reasoning_ultra with ultra): the routes RunControl.SetReasoning is
// admitted on. The fixture's provider factory still answers its calls.
func qualify(t *testing.T, home string, req *RunRequest, mode, baseURL string, ultra bool) {
	t.Helper()
	declare(t, home, req, mode, baseURL, true, true, ultra)
}

// declare is qualify with the model's and the endpoint's reasoning_updates
// declarations chosen (model, endpoint): absent when false.
func declare(t *testing.T, home string, req *RunRequest, mode, baseURL string, model, endpoint, ultra bool) {
	t.Helper()
	m := map[string]any{"id": "lab-model", "context_window_tokens": 32768, "max_output_tokens": 4096,
		"supports_reasoning": true}
	if model {
		m["reasoning_updates"] = true
	}
	if ultra {
		m["reasoning_ultra"] = true
	}
	provider := map[string]any{"base_url": baseURL, "provider_mode": mode, "models": []any{m}}
	if endpoint {
		provider["reasoning_updates"] = true
	}
	cfg := map[string]any{"providers": map[string]any{"lab": provider}}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".octet", "credentials"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".octet", "credentials", "lab.json"), []byte(`{"api_key":"lab-key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	req.Route, req.Model = nil, "lab-model"
}

// TestSetReasoningRefusedUnqualified: a route that supports reasoning but
// does not declare reasoning updates (an inline route here, never
// qualified) refuses a change during the run with the typed error, and
// nothing changes: not the requests' effort, not the session, not
// Agent.Reasoning.
func TestSetReasoningRefusedUnqualified(t *testing.T) {
	f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
		if n == 0 {
			if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"}); !errors.Is(err, ErrReasoningNotQualified) {
				t.Errorf("SetReasoning on an unqualified route: %v", err)
			}
		}
	}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"))
	yes := true
	req.Route, req.Model = &InlineRoute{Provider: "local", BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-test-secret-value",
		Mode: "openai-responses", SupportsReasoning: &yes}, "local-model"
	req.ReasoningEffort = new("high")
	_, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if got, want := efforts(f.prov.requests()), []string{"high", "high"}; !cmp.Equal(got, want) {
		t.Errorf("efforts per call %q, want %q", got, want)
	}
	if got := f.agent.Reasoning().Effort; got != "high" {
		t.Errorf("Agent.Reasoning() %q", got)
	}
	if got, want := sessionLog(t, *res.SessionFile), []string{"reasoning:high", "user", "run_end"}; !cmp.Equal(got, want) {
		t.Errorf("session records %q, want %q", got, want)
	}
}

// TestReasoningUpdatesRestoredOnResume: a session's reasoning updates are
// restored by a new Agent resuming it (a reconstruction): its first request
// keeps the pinned baseline and carries the update in its conversation,
// and Agent.Reasoning reports the update's effort; the idle
// Agent.SetReasoning overrides what Agent.Reasoning reports, and a run
// request that names an effort supersedes the updates with a new baseline.
func TestReasoningUpdatesRestoredOnResume(t *testing.T) {
	f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
		if n == 0 {
			if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"}); err != nil {
				t.Error(err)
			}
		}
	}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"), text("again"), text("third"))
	req.ReasoningEffort = new("high")
	if _, res, _ := runSteered(t, f, pub, req); res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	// A new agent on the same home: nothing of the first one's state.
	agent, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if got := agent.Reasoning(); got != (ReasoningConfig{}) {
		t.Fatalf("a new agent's Reasoning() %+v", got)
	}
	f.agent = agent
	req.RunID, req.Prompt, req.ReasoningEffort = "run-2", "and now?", nil
	if _, res := f.run(req); res.Status != "completed" {
		t.Fatalf("resumed run %+v %+v", res, res.Error)
	}
	reqs := f.prov.requests()
	resumed := reqs[2]
	if resumed.ReasoningEffort != "high" {
		t.Errorf("resumed effort %q, want the pinned baseline high", resumed.ReasoningEffort)
	}
	var updates []string
	for _, m := range resumed.Messages {
		if m.Role == "developer" {
			updates = append(updates, m.ReasoningEffort)
		}
	}
	if !cmp.Equal(updates, []string{"low"}) {
		t.Errorf("updates in the resumed conversation %q, want [low]", updates)
	}
	if got := agent.Reasoning(); got != (ReasoningConfig{Effort: "low"}) {
		t.Errorf("Agent.Reasoning() after the resume %+v, want the restored update low", got)
	}
	if err := agent.SetReasoning(ReasoningConfig{Effort: "medium"}); err != nil {
		t.Fatal(err)
	}
	if got := agent.Reasoning(); got != (ReasoningConfig{Effort: "medium"}) {
		t.Errorf("Agent.Reasoning() after SetReasoning %+v", got)
	}
	// An effort named by the request is a new baseline: the updates before
	// it are superseded (the session says so), the conversation stays.
	req.RunID, req.Prompt, req.ReasoningEffort = "run-3", "once more", new("high")
	_, res := f.run(req)
	if res.Status != "completed" {
		t.Fatalf("third run %+v %+v", res, res.Error)
	}
	if got := agent.Reasoning(); got != (ReasoningConfig{Effort: "high"}) {
		t.Errorf("Agent.Reasoning() after a new baseline %+v", got)
	}
	want := []string{"reasoning:high", "user", "update:low", "run_end", "user", "run_end", "reasoning:high", "user", "run_end"}
	if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, want) {
		t.Errorf("session records %q, want %q", got, want)
	}
	if n := len(f.prov.requests()[3].Messages); n != len(resumed.Messages)+2 {
		t.Errorf("the third run's conversation has %d messages, want %d (nothing lost)", n, len(resumed.Messages)+2)
	}
}
