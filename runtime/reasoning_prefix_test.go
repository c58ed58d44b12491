package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestReasoningUpdateKeepsThePrefix: on a qualified route, a reasoning
// change between two efforts during a tool loop leaves every member of the
// next request other than the conversation byte-identical to the previous
// request's (tools, system, the reasoning settings), and the previous
// request's conversation is a byte-identical prefix of the next one's (as
// TestRequestPrefixIsStable defines it per wire); the update arrives as a
// new conversation element after the tool result. The change is made from
// the observer at tool_start, on the run's goroutine, so it is pending
// before the boundary that admits it.
func TestReasoningUpdateKeepsThePrefix(t *testing.T) {
	for _, mode := range fakeprovider.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{Reasoning: "look first", ToolCalls: []fakeprovider.ToolCall{{Name: "ls", Arguments: `{}`}}},
				{Reasoning: "done", Text: "Nothing there."},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			home, ws := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(home, ".octet", "models.json"), `{"providers":{"fake":{"base_url":"`+fake.BaseURL(mode)+
				`","provider_mode":"`+string(mode)+`","reasoning_updates":true,"models":[{"id":"m","context_window_tokens":128000,"max_output_tokens":16384,"supports_reasoning":true,"reasoning_updates":true}]}}}`)
			writeFile(t, filepath.Join(home, ".octet", "credentials", "fake.json"), `{"api_key":"sk-fake"}`)
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			published := make(chan *runtime.RunControl, 1)
			agent.SetObserver(func(o runtime.Observation) {
				if o.Event.Type != protocol.TypeToolStart {
					return
				}
				rc := <-published
				if err := rc.SetReasoning(context.Background(), runtime.ReasoningConfig{Effort: "high"}); err != nil {
					t.Error(err)
				}
			})
			rc, err := agent.Run(context.Background(), runtime.RunRequest{
				RunID: "run-1", Workspace: ws, Model: "m", Prompt: "What is here?", SystemPrompt: "Be brief.", Tools: []string{"ls"},
				SessionDir: filepath.Join(home, "sessions"), SessionID: "pinned", ReasoningEffort: new("low"),
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
			if got := agent.Reasoning().Effort; got != "high" {
				t.Errorf("Agent.Reasoning() %q, want the update's high", got)
			}
			reqs := fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			var prev, next map[string]json.RawMessage
			if err := json.Unmarshal(reqs[0].RawBody, &prev); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(reqs[1].RawBody, &next); err != nil {
				t.Fatal(err)
			}
			conv := "messages"
			if mode == fakeprovider.ModeResponses {
				conv = "input"
			}
			for k, v := range prev {
				if k == conv {
					continue
				}
				if !bytes.Equal(v, next[k]) {
					t.Errorf("member %q changed:\n%s\n%s", k, v, next[k])
				}
			}
			if len(next) != len(prev) {
				t.Errorf("the next request has %d members, the previous %d", len(next), len(prev))
			}
			if !bytes.Contains(reqs[0].RawBody, []byte("low")) {
				t.Errorf("the baseline low is not in the first request: %s", reqs[0].RawBody)
			}
			items, nextItems := parseWireBody(t, reqs[0].RawBody).items(), parseWireBody(t, reqs[1].RawBody).items()
			if len(nextItems) <= len(items) {
				t.Fatalf("the next request has %d items, the previous %d", len(nextItems), len(items))
			}
			for k := range items {
				a, b := items[k], nextItems[k]
				if mode == fakeprovider.ModeAnthropic {
					if k == len(items)-1 && !bytes.Equal(a, b) {
						t.Errorf("the previous request's last message (its cache write) changed:\n%s\n%s", a, b)
					}
					a, b = withoutCacheControl(a), withoutCacheControl(b)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("item %d differs:\n%s\n%s", k, a, b)
				}
			}
			last := nextItems[len(nextItems)-1]
			if !bytes.Contains(last, []byte("Reasoning effort is now high.")) {
				t.Errorf("the last element does not carry the update: %s", last)
			}
			want := map[fakeprovider.Mode]string{fakeprovider.ModeResponses: `"role":"developer"`, fakeprovider.ModeChat: `"role":"system"`, fakeprovider.ModeAnthropic: `"tool_result"`}[mode]
			if !bytes.Contains(last, []byte(want)) {
				t.Errorf("the update's element has no %s: %s", want, last)
			}
		})
	}
}
