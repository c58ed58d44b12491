package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// The request prefix is byte-identical from step to step and across a
// resumed session, on every wire, so each request can read
// the previous one's prefix from the provider's prompt cache. Two runs on
// one session, each a tool loop with reasoning, the second by a new Agent
// (a resume from the session file) naming its tools in another order;
// then every request is compared with the one before it. What "prefix"
// means per wire:
//
//   - openai-compatible: the tools array bytes are equal, and each element
//     of the earlier request's messages array (the system message first)
//     is byte-identical to the same element of the later one;
//   - openai-responses: tools and instructions are equal, each element of
//     the earlier input array is byte-identical in the later one, and both
//     carry the same prompt_cache_key;
//   - anthropic-messages: tools (with their breakpoint) and system are
//     equal; each earlier message is byte-identical in the later one once
//     the cache_control breakpoints, which move forward, are taken out; and
//     the earlier request's last message, where it wrote the cache, is
//     byte-identical breakpoint included, so the later one reads it back.
func TestRequestPrefixIsStable(t *testing.T) {
	for _, mode := range fakeprovider.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{Reasoning: "look first", ToolCalls: []fakeprovider.ToolCall{
					{Name: "ls", Arguments: `{}`}, {Name: "read", Arguments: `{"path": "a.txt"}`},
				}},
				{Reasoning: "now read again", Text: "Reading again.", ToolCalls: []fakeprovider.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}}},
				{Reasoning: "done", Text: "The file says héllo."},
				{Reasoning: "search", ToolCalls: []fakeprovider.ToolCall{{Name: "grep", Arguments: `{"pattern":"h","path":"."}`}}},
				{Reasoning: "found", Text: "Found it."},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			home, ws := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("héllo <b>&</b> \"q\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			yes := true
			run := func(runID, prompt string, tools []string) {
				t.Helper()
				agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
				if err != nil {
					t.Fatal(err)
				}
				rc, err := agent.Run(context.Background(), runtime.RunRequest{
					RunID: runID, Workspace: ws, Model: "m", Prompt: prompt, SystemPrompt: "Be brief.",
					SessionDir: filepath.Join(home, "sessions"), SessionID: "cache-prefix", Tools: tools,
					// The fake streams reasoning, so the run asks for it:
					// Anthropic keeps one thinking mode per assistant turn.
					ReasoningEffort: new("low"),
					Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(mode), Mode: string(mode),
						APIKey: "sk-cache-secret", SupportsReasoning: &yes},
				})
				if err != nil {
					t.Fatal(err)
				}
				for range rc.Events() {
				}
				if res := rc.Wait(); res.Status != "completed" {
					t.Fatalf("%s: %+v %+v", runID, res, res.Error)
				}
			}
			run("run-1", "What does a.txt say?", []string{"read", "ls", "grep"})
			run("run-2", "Find the h.", []string{"grep", "ls", "read"})

			reqs := fake.Requests()
			if len(reqs) != 5 {
				t.Fatalf("%d requests, want 5", len(reqs))
			}
			bodies := make([]wireBody, len(reqs))
			for i, r := range reqs {
				if r.Fault != "" || r.Turn != i {
					t.Fatalf("request %d: turn %d, fault %q", i, r.Turn, r.Fault)
				}
				bodies[i] = parseWireBody(t, r.RawBody)
				if bytes.Contains(r.RawBody, []byte("sk-cache-secret")) {
					t.Fatal("the API key is in a request body")
				}
			}
			for i := 1; i < len(bodies); i++ {
				prev, next := bodies[i-1], bodies[i]
				if !bytes.Equal(prev.Tools, next.Tools) || len(next.Tools) == 0 {
					t.Errorf("request %d: tools differ:\n%s\n%s", i, prev.Tools, next.Tools)
				}
				if !bytes.Equal(prev.System, next.System) || !bytes.Equal(prev.Instructions, next.Instructions) {
					t.Errorf("request %d: system differs", i)
				}
				if !bytes.Equal(prev.PromptCacheKey, next.PromptCacheKey) {
					t.Errorf("request %d: prompt_cache_key %s, then %s", i, prev.PromptCacheKey, next.PromptCacheKey)
				}
				items, nextItems := prev.items(), next.items()
				if len(nextItems) <= len(items) {
					t.Fatalf("request %d has %d items, the one before %d", i, len(nextItems), len(items))
				}
				for k := range items {
					a, b := items[k], nextItems[k]
					if mode == fakeprovider.ModeAnthropic {
						if k == len(items)-1 && (!bytes.Equal(a, b) || !bytes.Contains(a, []byte(`"cache_control"`))) {
							t.Errorf("request %d: the previous request's last message (its cache write) changed or has no breakpoint:\n%s\n%s", i, a, b)
						}
						a, b = withoutCacheControl(a), withoutCacheControl(b)
					}
					if !bytes.Equal(a, b) {
						t.Errorf("request %d: item %d differs:\n%s\n%s", i, k, a, b)
					}
				}
			}
			key := string(bodies[0].PromptCacheKey)
			switch mode {
			case fakeprovider.ModeResponses:
				if !strings.HasPrefix(key, `"octet-`) || len(key) > 66 {
					t.Errorf("prompt_cache_key %s", key)
				}
			default:
				// Messages has no such field; an inline chat route may
				// point at a server that refuses unknown members.
				if key != "" {
					t.Errorf("prompt_cache_key %s on %s", key, mode)
				}
			}
			if mode == fakeprovider.ModeAnthropic {
				// Tools, system and the two newest user turns (the first
				// request has one).
				for i, r := range reqs {
					if n := bytes.Count(r.RawBody, []byte(`"cache_control"`)); n != 4 && !(i == 0 && n == 3) {
						t.Errorf("request %d carries %d breakpoints: %s", i, n, r.RawBody)
					}
				}
			}
		})
	}
}

// wireBody holds the members of a request body that make its prefix, as
// the raw bytes the client sent.
type wireBody struct {
	Tools          json.RawMessage   `json:"tools"`
	System         json.RawMessage   `json:"system"`
	Instructions   json.RawMessage   `json:"instructions"`
	PromptCacheKey json.RawMessage   `json:"prompt_cache_key"`
	Messages       []json.RawMessage `json:"messages"`
	Input          []json.RawMessage `json:"input"`
}

// items are the conversation's elements: messages (chat, Anthropic) or
// input items (Responses).
func (b wireBody) items() []json.RawMessage {
	if b.Input != nil {
		return b.Input
	}
	return b.Messages
}

func parseWireBody(t *testing.T, raw []byte) wireBody {
	t.Helper()
	var b wireBody
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return b
}

// withoutCacheControl removes the breakpoints the Messages builder writes.
func withoutCacheControl(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`,"cache_control":{"type":"ephemeral"}`), nil)
}
