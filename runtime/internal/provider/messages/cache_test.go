package messages

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/provider"
)

// breakpoint is the cache_control member as the builder writes it.
const breakpoint = `,"cache_control":{"type":"ephemeral"}`

// withoutBreakpoints removes the cache breakpoints from a serialized body
// or message, for tests about everything else.
func withoutBreakpoints(s string) string { return strings.ReplaceAll(s, breakpoint, "") }

// requestMessages builds req's body (no thinking) and returns its
// messages, each serialized without cache breakpoints (the tests here
// check them).
func requestMessages(t *testing.T, req provider.Request) []string {
	t.Helper()
	body, err := buildRequest(req, thinkingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []jsontext.Value `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(got.Messages))
	for i, m := range got.Messages {
		out[i] = withoutBreakpoints(string(m))
	}
	return out
}

// marked lists, for each message of body, the indexes of its blocks that
// carry a breakpoint, and reports the breakpoints of tools and system.
func marked(t *testing.T, body []byte) (tools, system []int, msgs [][]int) {
	t.Helper()
	var b struct {
		System   []map[string]jsontext.Value `json:"system"`
		Tools    []map[string]jsontext.Value `json:"tools"`
		Messages []struct {
			Content []map[string]jsontext.Value `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	check := func(cc jsontext.Value) {
		if string(cc) != `{"type":"ephemeral"}` {
			t.Errorf("cache_control %s", cc)
		}
	}
	for i, x := range b.Tools {
		if cc, ok := x["cache_control"]; ok {
			check(cc)
			tools = append(tools, i)
		}
	}
	for i, x := range b.System {
		if cc, ok := x["cache_control"]; ok {
			check(cc)
			system = append(system, i)
		}
	}
	msgs = make([][]int, len(b.Messages))
	for i, m := range b.Messages {
		for j, blk := range m.Content {
			if cc, ok := blk["cache_control"]; ok {
				check(cc)
				if typ := string(blk["type"]); typ == `"thinking"` || typ == `"redacted_thinking"` {
					t.Errorf("message %d block %d is %s and carries a breakpoint", i, j, typ)
				}
				msgs[i] = append(msgs[i], j)
			}
		}
	}
	return tools, system, msgs
}

// The breakpoints sit on the last tool, the system prompt, and the last
// block of the two newest user turns; never more than the API's four.
func TestCacheBreakpoints(t *testing.T) {
	signed := []provider.ReasoningBlock{{Text: "think", Signature: "S", Wire: provider.WireMessages}}
	tools := []provider.ToolSpec{{Name: "a"}, {Name: "b"}}
	loop := []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ReasoningBlocks: signed, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "a", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "c1", Text: "r1"},
		{Role: provider.RoleAssistant, Text: "more", ToolCalls: []provider.ToolCall{{ID: "c2", Name: "b", Arguments: "{}"}, {ID: "c3", Name: "b", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "c2", Text: "r2"},
		{Role: provider.RoleTool, ToolCallID: "c3", Text: "r3"},
	}
	tests := []struct {
		name          string
		req           provider.Request
		tools, system []int
		msgs          [][]int
	}{
		{
			name:  "tool loop",
			req:   provider.Request{System: "sys", Tools: tools, Messages: loop},
			tools: []int{1}, system: []int{0},
			msgs: [][]int{nil, nil, {0}, nil, {1}},
		},
		{
			name: "a single prompt, no system, no tools",
			req:  provider.Request{Messages: loop[:1]},
			msgs: [][]int{{0}},
		},
		{
			// A user message after the results shares their turn and ends it.
			name: "steering text after the results",
			req:  provider.Request{System: "sys", Messages: append(loop[:3:3], provider.Message{Role: provider.RoleUser, Text: "also this"})},
			msgs: [][]int{{0}, nil, {1}}, system: []int{0},
		},
		{
			name: "an image ends the turn",
			req: provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "see", Media: []provider.Media{
				{Type: provider.MediaImage, MIMEType: "image/png", Data: []byte("png")},
			}}}},
			msgs: [][]int{{1}},
		},
		{
			// Only the two newest user turns are marked, whatever the length.
			name: "a long conversation",
			req: provider.Request{System: "sys", Tools: tools, Messages: append(append(append([]provider.Message{}, loop...),
				provider.Message{Role: provider.RoleAssistant, Text: "done"},
				provider.Message{Role: provider.RoleUser, Text: "again"}), loop[1:]...)},
			tools: []int{1}, system: []int{0},
			msgs: [][]int{nil, nil, nil, nil, nil, nil, nil, nil, {0}, nil, {1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Model = "m"
			body, err := buildRequest(tc.req, thinkingConfig{})
			if err != nil {
				t.Fatal(err)
			}
			tools, system, msgs := marked(t, body)
			if !equalInts(tools, tc.tools) || !equalInts(system, tc.system) {
				t.Errorf("tools %v system %v, want %v %v", tools, system, tc.tools, tc.system)
			}
			if len(msgs) != len(tc.msgs) {
				t.Fatalf("%d messages, want %d: %s", len(msgs), len(tc.msgs), body)
			}
			n := len(tools) + len(system)
			for i := range msgs {
				n += len(msgs[i])
				if !equalInts(msgs[i], tc.msgs[i]) {
					t.Errorf("message %d: breakpoints at %v, want %v", i, msgs[i], tc.msgs[i])
				}
			}
			if n > maxBreakpoints {
				t.Errorf("%d breakpoints", n)
			}
		})
	}
}

// ToolArrayBytes counts the tools array exactly as sent, breakpoint
// included.
func TestToolArrayBytesCountsTheBreakpoint(t *testing.T) {
	specs := []provider.ToolSpec{{Name: "a"}, {Name: "b", Description: "B"}}
	p, err := New(Config{BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.ToolArrayBytes(specs)
	if err != nil {
		t.Fatal(err)
	}
	body, err := buildRequest(provider.Request{Model: "m", Tools: specs, Messages: []provider.Message{{Role: provider.RoleUser, Text: "x"}}}, thinkingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Tools jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if n != len(b.Tools) || !strings.Contains(string(b.Tools), breakpoint) {
		t.Errorf("ToolArrayBytes %d, the request's tools array %d bytes: %s", n, len(b.Tools), b.Tools)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
