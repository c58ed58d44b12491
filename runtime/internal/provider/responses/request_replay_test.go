package responses

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/provider"
)

// TestUnansweredCallsGetStandIns: a resumed session can hold an assistant
// message whose calls were never all run (a call cut by max_output_tokens,
// a cancel between calls). The API rejects a function_call without its
// function_call_output ("No tool output found"), so the request answers
// every call, in order, right after the outputs that exist.
func TestUnansweredCallsGetStandIns(t *testing.T) {
	asst := provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
		{ID: "call_a", Name: "read", Arguments: `{"path":"a"}`}, {ID: "call_b", Name: "read", Arguments: `{"path":"b"}`},
	}}
	result := provider.Message{Role: provider.RoleTool, ToolCallID: "call_a", ToolName: "read", Text: "A"}
	user := func(s string) provider.Message { return provider.Message{Role: provider.RoleUser, Text: s} }
	userItem := func(s string) string { return `{"role":"user","content":[{"type":"input_text","text":"` + s + `"}]}` }
	call := func(id, path string) string {
		return `{"type":"function_call","call_id":"` + id + `","name":"read","arguments":"{\"path\":\"` + path + `\"}"}`
	}
	output := func(id, text string) string {
		return `{"type":"function_call_output","call_id":"` + id + `","output":"` + text + `"}`
	}
	missing := func(id string) string { return output(id, provider.MissingToolResult) }

	tests := []struct {
		name string
		in   []provider.Message
		want []string
	}{
		{
			name: "second of two calls unanswered, then a user message",
			in:   []provider.Message{user("go"), asst, result, user("next")},
			want: []string{userItem("go"), call("call_a", "a"), call("call_b", "b"), output("call_a", "A"), missing("call_b"), userItem("next")},
		},
		{
			name: "no call answered, conversation ends",
			in:   []provider.Message{user("go"), asst},
			want: []string{userItem("go"), call("call_a", "a"), call("call_b", "b"), missing("call_a"), missing("call_b")},
		},
		{
			name: "unanswered calls before the next assistant message",
			in:   []provider.Message{user("go"), asst, {Role: provider.RoleAssistant, Text: "later"}},
			want: []string{userItem("go"), call("call_a", "a"), call("call_b", "b"), missing("call_a"), missing("call_b"),
				`{"type":"message","role":"assistant","content":"later"}`},
		},
		{
			name: "every call answered: nothing added",
			in: []provider.Message{user("go"), asst, result,
				{Role: provider.RoleTool, ToolCallID: "call_b", ToolName: "read", Text: "B"}, user("next")},
			want: []string{userItem("go"), call("call_a", "a"), call("call_b", "b"), output("call_a", "A"), output("call_b", "B"), userItem("next")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := buildRequest(provider.Request{Model: "m", Messages: tc.in}, requestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, inputOf(t, body)); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReasoningOfOtherWiresNotSent: only this wire's encrypted reasoning
// goes back as reasoning items. An Anthropic signature is no
// encrypted_content the API can decrypt, whatever the block looks like;
// a block of a session written before origins were recorded counts as the
// wire its shape implies. The answer text goes back either way.
func TestReasoningOfOtherWiresNotSent(t *testing.T) {
	req := provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, Text: "Checked.", ReasoningBlocks: []provider.ReasoningBlock{
			{Text: "a", Signature: "sig-anthropic", ID: "blk_1", Wire: provider.WireMessages},
			{Text: "b", Signature: "sig-anthropic-old"},
			{Redacted: "redacted-anthropic"},
			{Text: "c", Signature: "enc-old", ID: "rs_0"},
			{Text: "d", Signature: "enc-1", ID: "rs_1", Wire: provider.WireResponses, Model: "gpt-5"},
		}},
		{Role: provider.RoleUser, Text: "next"},
	}}
	body, err := buildRequest(req, requestOptions{encrypted: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"role":"user","content":[{"type":"input_text","text":"go"}]}`,
		`{"type":"reasoning","id":"rs_0","summary":[],"encrypted_content":"enc-old"}`,
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc-1"}`,
		`{"type":"message","role":"assistant","content":"Checked."}`,
		`{"role":"user","content":[{"type":"input_text","text":"next"}]}`,
	}
	if diff := cmp.Diff(want, inputOf(t, body)); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}

// inputOf returns the request's input items, each as its JSON text.
func inputOf(t *testing.T, body []byte) []string {
	t.Helper()
	var got struct {
		Input []jsontext.Value `json:"input"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(got.Input))
	for i, it := range got.Input {
		out[i] = string(it)
	}
	return out
}
