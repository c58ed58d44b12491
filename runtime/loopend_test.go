package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestThinkingToggleAfterAToolLoopEnd: a run on a session whose last run
// ended inside a tool-use loop (max_steps right after the tool results, or
// a cancel while its tool ran)
// starts its prompt in a new user turn on Anthropic, so a thinking toggle
// at its start is accepted, in both orders (off then on, on then off). The
// fake provider enforces the API's rule of one thinking configuration per
// assistant turn: without the new turn the prompt would join the tool
// results' user message, the loop would go on, and the request would be
// refused with a 400 (bad_request).
func TestThinkingToggleAfterAToolLoopEnd(t *testing.T) {
	// The second run's mode comes from its request (on), or from the
	// change the first run held at its loop and recorded for the next run
	// (off: a request cannot ask for no effort over the session's).
	for _, tc := range []struct {
		name          string
		from, to      *string
		held          *string // set during the first run's tool call
		secondRequest *string
		cancel        bool // cancel the first run during its tool call
	}{
		{"off then on", nil, ptrTo("high"), nil, ptrTo("high"), false},
		{"on then off", ptrTo("high"), ptrTo(""), ptrTo(""), nil, false},
		{"off then on, after a cancel", nil, ptrTo("high"), nil, ptrTo("high"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first run's tool call is a command that waits for the
			// test (a file it creates, or the cancel), so what the test
			// does at tool_start happens while the run is inside its loop.
			first := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{"command":"until [ -e released ]; do sleep 0.01; done"}`}}}
			if tc.cancel {
				first.ToolCalls = []fakeprovider.ToolCall{{ID: "toolu_1", Name: "bash", Arguments: `{"command":"sleep 30"}`}}
			}
			if tc.from != nil && *tc.from != "" {
				first.Reasoning = "look around first"
			}
			second := fakeprovider.Turn{Text: "here it is"}
			if tc.to != nil && *tc.to != "" {
				second.Reasoning = "now answer"
			}
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{first, second}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			home := t.TempDir()
			yes := true
			// The operator enables bash, so the first run's command really
			// runs: a denied call would let the run end before the test acts.
			opts := runtime.Options{Home: home, Getenv: func(string) string { return "" },
				PolicyLayers: []runtime.PolicyLayer{{Source: runtime.SourceCLI, AllowShell: &yes, AllowProcess: &yes}}}
			agent, err := runtime.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			one := 1
			ws := t.TempDir()
			// A configured route qualified for reasoning changes during a
			// run: the held toggle is set with RunControl.SetReasoning.
			writeFile(t, filepath.Join(home, ".octet", "models.json"), `{"providers":{"fake":{"base_url":"`+fake.BaseURL(fakeprovider.ModeAnthropic)+
				`","provider_mode":"anthropic-messages","reasoning_updates":true,"models":[{"id":"claude-test","context_window_tokens":128000,"max_output_tokens":16384,"supports_reasoning":true,"reasoning_updates":true}]}}}`)
			writeFile(t, filepath.Join(home, ".octet", "credentials", "fake.json"), `{"api_key":"sk-fake"}`)
			req := runtime.RunRequest{
				RunID: "run-1", Workspace: ws, Model: "claude-test", Prompt: "list the files", Tools: []string{"bash"},
				SessionDir: filepath.Join(home, "sessions"), SessionID: "loop-end", MaxSteps: &one, ReasoningEffort: tc.from,
			}
			hook := func(rc *runtime.RunControl) {
				if tc.held != nil {
					if err := rc.SetReasoning(context.Background(), runtime.ReasoningConfig{Effort: *tc.held}); err != nil {
						t.Error(err)
					}
				}
				if err := os.WriteFile(filepath.Join(ws, "released"), nil, 0o600); err != nil {
					t.Error(err)
				}
			}
			if tc.cancel {
				// The tool runs until the cancel: the run ends with the
				// tool's (canceled) result recorded, inside the loop.
				req.MaxSteps = nil
				hook = func(rc *runtime.RunControl) { rc.Cancel() }
			}
			res := runToEnd(t, agent, req, hook)
			switch {
			case tc.cancel:
				if res.Status != "error" || res.Error == nil || res.Error.Code != "canceled" {
					t.Fatalf("first run %+v %+v, want canceled", res, res.Error)
				}
			case res.Status != "blocked" || res.Error == nil || res.Error.Code != "max_steps_reached" || res.ToolCalls != 1:
				t.Fatalf("first run %+v %+v, want blocked by max_steps after the tool call", res, res.Error)
			}
			next := req
			next.RunID, next.Prompt, next.MaxSteps, next.ReasoningEffort = "run-2", "and the answer?", nil, tc.secondRequest
			res = runToEnd(t, agent, next, nil)
			if res.Status != "completed" || res.Output != "here it is" {
				t.Fatalf("second run %+v %+v, want completed", res, res.Error)
			}
			reqs := fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			// The second request: the tool loop is answered and closed by
			// an assistant message, and the prompt is a user message of
			// its own.
			msgs, _ := reqs[1].Body["messages"].([]any)
			if len(msgs) < 4 {
				t.Fatalf("messages %v", msgs)
			}
			roles := ""
			for _, m := range msgs {
				roles += m.(map[string]any)["role"].(string)[:1]
			}
			if roles != "uauau" {
				t.Errorf("roles %q, want user, assistant (tool use), user (results), assistant (loop closed), user (prompt)", roles)
			}
			_, thinking := reqs[1].Body["thinking"]
			if thinking != (tc.to != nil && *tc.to != "") {
				t.Errorf("second request thinking %v, want the toggled mode", reqs[1].Body["thinking"])
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// runToEnd runs req to its end, calling atTool (when set) as its first
// tool call starts (inside the tool-use loop).
func runToEnd(t *testing.T, agent *runtime.Agent, req runtime.RunRequest, atTool func(*runtime.RunControl)) (res struct {
	Status, Output string
	ToolCalls      int
	Error          *struct{ Code, Message string }
}) {
	t.Helper()
	rc, err := agent.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range rc.Events() {
		if _, ok := ev.Data.(*protocol.ToolStart); ok && atTool != nil {
			atTool(rc)
			atTool = nil
		}
	}
	r := rc.Wait()
	res.Status, res.Output, res.ToolCalls = r.Status, r.Output, r.ToolCalls
	if r.Error != nil {
		res.Error = &struct{ Code, Message string }{string(r.Error.Code), r.Error.Message}
	}
	return res
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
