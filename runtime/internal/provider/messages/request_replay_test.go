package messages

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/provider"
)

// TestReasoningOfOtherWiresNotSent: a session run on openai-responses and
// resumed here must not send the OpenAI encrypted_content as a thinking
// signature (the API answers 400 on every later run). Only this wire's
// blocks go back, in their place; a block of a session written before
// origins were recorded counts as the wire its shape implies (a signed
// block with a reasoning item id is a Responses one). The text stays.
func TestReasoningOfOtherWiresNotSent(t *testing.T) {
	req := provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{
			Role: provider.RoleAssistant, Text: "Checked.", Reasoning: "abcd",
			ReasoningBlocks: []provider.ReasoningBlock{
				{Text: "a", Signature: "enc-openai", ID: "rs_1", Wire: provider.WireResponses, Model: "gpt-5"},
				{Text: "b", Signature: "enc-openai-old", ID: "rs_2"},
				{Text: "c", Signature: "S1", Wire: provider.WireMessages},
				{Redacted: "R1"},
				{Text: "d", Signature: "S2"},
				{Signature: "enc-after-call", ID: "rs_3", Wire: provider.WireResponses, AfterToolCalls: 1},
			},
			ToolCalls: []provider.ToolCall{{ID: "a", Name: "t", Arguments: "{}"}},
		},
		{Role: provider.RoleTool, ToolCallID: "a", ToolName: "t", Text: "ok"},
		// A turn whose only blocks are foreign sends its text alone.
		{Role: provider.RoleAssistant, Text: "Done.", ReasoningBlocks: []provider.ReasoningBlock{
			{Signature: "enc-only", ID: "rs_4", Wire: provider.WireResponses},
		}},
		{Role: provider.RoleUser, Text: "next"},
	}}
	gotS := requestMessages(t, req)
	want := []string{
		`{"role":"user","content":[{"type":"text","text":"go"}]}`,
		`{"role":"assistant","content":[` +
			`{"type":"thinking","thinking":"c","signature":"S1"},` +
			`{"type":"redacted_thinking","data":"R1"},` +
			`{"type":"thinking","thinking":"d","signature":"S2"},` +
			`{"type":"text","text":"Checked."},` +
			`{"type":"tool_use","id":"a","name":"t","input":{}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok","is_error":false}]}`,
		`{"role":"assistant","content":[{"type":"text","text":"Done."}]}`,
		`{"role":"user","content":[{"type":"text","text":"next"}]}`,
	}
	if diff := cmp.Diff(want, gotS); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
