package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestReasoningEndpointNotDeclared: through the façade and the loopback
// fake, a models.json provider that omits reasoning_updates leaves its
// model's declaration unqualified: SetReasoning during the run returns
// ErrReasoningNotQualified naming the endpoint, and the second request
// carries the effort the run began with and no reasoning update.
func TestReasoningEndpointNotDeclared(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{Name: "ls", Arguments: `{}`}}},
		{Text: "Nothing there."},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".octet", "models.json"), `{"providers":{"fake":{"base_url":"`+fake.BaseURL(fakeprovider.ModeResponses)+
		`","provider_mode":"openai-responses","models":[{"id":"m","context_window_tokens":128000,"max_output_tokens":16384,"supports_reasoning":true,"reasoning_updates":true}]}}}`)
	writeFile(t, filepath.Join(home, ".octet", "credentials", "fake.json"), `{"api_key":"sk-fake"}`)
	agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	published := make(chan *runtime.RunControl, 1)
	var setErr error
	agent.SetObserver(func(o runtime.Observation) {
		if o.Event.Type == protocol.TypeToolStart {
			setErr = (<-published).SetReasoning(context.Background(), runtime.ReasoningConfig{Effort: "high"})
		}
	})
	rc, err := agent.Run(context.Background(), runtime.RunRequest{
		RunID: "run-1", Workspace: ws, Model: "m", Prompt: "What is here?", Tools: []string{"ls"},
		SessionDir: filepath.Join(home, "sessions"), SessionID: "endpoint", ReasoningEffort: new("low"),
	})
	if err != nil {
		t.Fatal(err)
	}
	published <- rc
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Status != "completed" {
		t.Fatalf("%+v %+v", res, res.Error)
	}
	if want := `the endpoint "fake" does not declare reasoning_updates`; !errors.Is(setErr, runtime.ErrReasoningNotQualified) || !strings.HasSuffix(setErr.Error(), ": "+want) {
		t.Fatalf("SetReasoning: %v, want ErrReasoningNotQualified ending with %q", setErr, want)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if body := string(reqs[1].RawBody); !strings.Contains(body, `"effort":"low"`) || strings.Contains(body, "Reasoning effort is now") {
		t.Errorf("the second request changed its reasoning: %s", body)
	}
	if got := agent.Reasoning().Effort; got != "low" {
		t.Errorf("Agent.Reasoning() %q, want low", got)
	}
}
