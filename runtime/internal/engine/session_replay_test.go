package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/provider"
)

// replayAgent starts a fake provider that answers turns in order and an
// agent with its own home; both end with the test.
func replayAgent(t *testing.T, turns ...fakeprovider.Turn) (*fakeprovider.Server, string, *Agent) {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	home := t.TempDir()
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return fake, home, a
}

// replayRun runs prompt on session id over an inline route of mode at the
// fake, waits for the result and returns it.
func replayRun(t *testing.T, a *Agent, fake *fakeprovider.Server, home, id, runID string, mode fakeprovider.Mode, prompt string) protocol.FinalResult {
	t.Helper()
	yes := true
	rc, err := a.Run(context.Background(), RunRequest{RunID: runID, Workspace: t.TempDir(), Model: "model-" + string(mode), Prompt: prompt,
		SessionDir: filepath.Join(home, "sessions"), SessionID: id,
		Route: &InlineRoute{Provider: "local", BaseURL: fake.BaseURL(mode), Mode: string(mode), SupportsReasoning: &yes}})
	if err != nil {
		t.Fatalf("Run %s: %v", runID, err)
	}
	for range rc.Events() {
	}
	return rc.Wait()
}

// TestReasoningReplayStaysOnItsWire: a session run on openai-responses and
// resumed on anthropic-messages must not send the OpenAI encrypted_content
// as an Anthropic thinking signature (a 400 on every later run), nor the
// Anthropic signature back to Responses; each wire still gets its own
// blocks back, and the stored blocks record their wire.
func TestReasoningReplayStaysOnItsWire(t *testing.T) {
	fake, home, a := replayAgent(t,
		fakeprovider.Turn{Reasoning: "Look first.", Signature: "enc-openai-1", Text: "Checked."},
		fakeprovider.Turn{Reasoning: "Still fine.", Signature: "sig-anthropic-1", Text: "Agreed."},
		fakeprovider.Turn{Text: "Back."})
	for i, mode := range []fakeprovider.Mode{fakeprovider.ModeResponses, fakeprovider.ModeAnthropic, fakeprovider.ModeResponses} {
		if res := replayRun(t, a, fake, home, "mixed", "run-"+itoa(int64(i+1)), mode, "go on"); res.Status != "completed" {
			t.Fatalf("run %d on %s: %+v %+v", i+1, mode, res, res.Error)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := func(i int) string {
		b, _ := json.Marshal(reqs[i].Body)
		return string(b)
	}
	if b := body(1); strings.Contains(b, "enc-openai-1") || !strings.Contains(b, "Checked.") {
		t.Errorf("the Anthropic request replays the Responses reasoning or lost the text: %s", b)
	}
	if b := body(2); strings.Contains(b, "sig-anthropic-1") || !strings.Contains(b, `"encrypted_content":"enc-openai-1"`) || !strings.Contains(b, "Agreed.") {
		t.Errorf("the second Responses request: %s", b)
	}
	data, err := os.ReadFile(filepath.Join(home, "sessions", "mixed.jsonl"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(home, "sessions", "*"))
		t.Fatalf("session file: %v (have %v)", err, matches)
	}
	for _, want := range []string{`"wire":"openai-responses","model":"model-openai-responses"`, `"wire":"anthropic-messages","model":"model-anthropic-messages"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the session does not record %s:\n%s", want, data)
		}
	}
}

// TestCutToolCallAnsweredOnResume: a call cut by max_output_tokens is
// stored with the assistant message but never run; the next run on the
// session answers it with a stand-in result, which Chat Completions and
// Responses require right after the call.
func TestCutToolCallAnsweredOnResume(t *testing.T) {
	for _, mode := range []fakeprovider.Mode{fakeprovider.ModeChat, fakeprovider.ModeResponses} {
		t.Run(string(mode), func(t *testing.T) {
			fake, home, a := replayAgent(t,
				fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"a.txt"}`}}, Truncated: true},
				fakeprovider.Turn{Text: "ok"})
			if res := replayRun(t, a, fake, home, "cut", "run-1", mode, "read a.txt"); res.Error == nil || res.Error.Code != protocol.CodeOutputIncomplete || res.ToolCalls != 0 {
				t.Fatalf("first run: %+v %+v", res, res.Error)
			}
			if res := replayRun(t, a, fake, home, "cut", "run-2", mode, "again"); res.Status != "completed" {
				t.Fatalf("second run: %+v %+v", res, res.Error)
			}
			second := fake.Requests()[1].Body
			var items []any
			if mode == fakeprovider.ModeChat {
				items, _ = second["messages"].([]any)
			} else {
				items, _ = second["input"].([]any)
			}
			// The item after the call is its stand-in result.
			for i, it := range items {
				m, _ := it.(map[string]any)
				isCall := m["type"] == "function_call" || m["tool_calls"] != nil
				if !isCall {
					continue
				}
				var next map[string]any
				if i+1 < len(items) {
					next, _ = items[i+1].(map[string]any)
				}
				if mode == fakeprovider.ModeChat {
					if next["role"] != "tool" || next["tool_call_id"] != "call_1" || next["content"] != provider.MissingToolResult {
						t.Errorf("after the call: %v", next)
					}
				} else if next["type"] != "function_call_output" || next["call_id"] != "call_1" || next["output"] != provider.MissingToolResult {
					t.Errorf("after the call: %v", next)
				}
				return
			}
			t.Fatalf("no tool call in the second request: %v", items)
		})
	}
}
