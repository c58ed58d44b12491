package chat

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/provider"
)

// TestUnansweredCallsGetStandIns: a resumed session can hold an assistant
// message whose calls were never all run (a call cut by max_output_tokens,
// a cancel between calls). The API rejects tool_calls that are not
// followed by a tool message for each, so the request answers every call,
// in order, right after the results that exist.
func TestUnansweredCallsGetStandIns(t *testing.T) {
	asst := provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
		{ID: "call_a", Name: "read", Arguments: `{"path":"a"}`}, {ID: "call_b", Name: "read", Arguments: `{"path":"b"}`},
	}}
	result := provider.Message{Role: provider.RoleTool, ToolCallID: "call_a", ToolName: "read", Text: "A"}
	user := func(s string) provider.Message { return provider.Message{Role: provider.RoleUser, Text: s} }
	calls := `{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},` +
		`{"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}`
	tool := func(id, text string) string {
		return `{"role":"tool","content":` + quote(text) + `,"tool_call_id":"` + id + `"}`
	}
	missing := func(id string) string { return tool(id, provider.MissingToolResult) }

	tests := []struct {
		name string
		in   []provider.Message
		want []string
	}{
		{
			name: "second of two calls unanswered, then a user message",
			in:   []provider.Message{user("go"), asst, result, user("next")},
			want: []string{`{"role":"user","content":"go"}`, calls, tool("call_a", "A"), missing("call_b"), `{"role":"user","content":"next"}`},
		},
		{
			name: "no call answered, conversation ends",
			in:   []provider.Message{user("go"), asst},
			want: []string{`{"role":"user","content":"go"}`, calls, missing("call_a"), missing("call_b")},
		},
		{
			name: "unanswered calls before the next assistant message",
			in:   []provider.Message{user("go"), asst, {Role: provider.RoleAssistant, Text: "later"}},
			want: []string{`{"role":"user","content":"go"}`, calls, missing("call_a"), missing("call_b"), `{"role":"assistant","content":"later"}`},
		},
		{
			name: "every call answered: nothing added",
			in: []provider.Message{user("go"), asst, result,
				{Role: provider.RoleTool, ToolCallID: "call_b", ToolName: "read", Text: "B"}, user("next")},
			want: []string{`{"role":"user","content":"go"}`, calls, tool("call_a", "A"), tool("call_b", "B"), `{"role":"user","content":"next"}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := buildRequest(provider.Request{Model: "m", Messages: tc.in})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, messagesOf(t, body)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReasoningOfOtherWiresNotSent: Chat Completions has no field for
// reasoning, so blocks of every wire stay out of the request and the
// answer text goes back alone. (A guard: this builder never sent blocks.)
func TestReasoningOfOtherWiresNotSent(t *testing.T) {
	body, err := buildRequest(provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, Text: "Checked.", Reasoning: "thought", ReasoningBlocks: []provider.ReasoningBlock{
			{Text: "thought", Signature: "enc-openai", ID: "rs_1", Wire: provider.WireResponses},
			{Text: "thought", Signature: "sig-anthropic", Wire: provider.WireMessages},
			{Redacted: "redacted-anthropic"},
		}},
		{Role: provider.RoleUser, Text: "next"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"role":"user","content":"go"}`, `{"role":"assistant","content":"Checked."}`, `{"role":"user","content":"next"}`}
	if diff := cmp.Diff(want, messagesOf(t, body)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// messagesOf returns the request's messages, each as its JSON text.
func messagesOf(t *testing.T, body []byte) []string {
	t.Helper()
	var got struct {
		Messages []jsontext.Value `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(got.Messages))
	for i, m := range got.Messages {
		out[i] = string(m)
	}
	return out
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
