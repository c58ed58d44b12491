package messages

import (
	"encoding/json"
	"testing"

	"octet.dev/host/runtime/provider"
)

// roleShape is each message's role and its block types, e.g.
// "user[tool_result text]".
func roleShape(t *testing.T, out []outMessage) []string {
	t.Helper()
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []struct {
		Role    string
		Content []struct{ Type string }
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, m := range msgs {
		s := m.Role + "["
		for i, b := range m.Content {
			if i > 0 {
				s += " "
			}
			s += b.Type
		}
		shape = append(shape, s+"]")
	}
	return shape
}

// TestNewTurnClosesTheToolLoop: a run's prompt (NewTurn) after the tool
// results a previous run left unanswered begins a new user turn: the
// results are answered (a missing one too), an assistant message closes
// the loop, and the prompt is a user message of its own. A message queued
// inside the loop (steering, no NewTurn) still joins the results' user
// message: that loop goes on.
func TestNewTurnClosesTheToolLoop(t *testing.T) {
	loop := []provider.Message{
		{Role: provider.RoleUser, Text: "list the files", NewTurn: true},
		{Role: provider.RoleAssistant, ReasoningBlocks: []provider.ReasoningBlock{{Text: "hm", Signature: "sig", Wire: provider.WireMessages}},
			ToolCalls: []provider.ToolCall{{ID: "a", Name: "ls", Arguments: `{}`}, {ID: "b", Name: "ls", Arguments: `{}`}}},
		{Role: provider.RoleTool, ToolCallID: "a", ToolName: "ls", Text: "x.go"},
	}
	for _, tc := range []struct {
		name string
		next provider.Message
		want []string
	}{
		{"a run's prompt", provider.Message{Role: provider.RoleUser, Text: "and then?", NewTurn: true},
			[]string{"user[text]", "assistant[thinking tool_use tool_use]", "user[tool_result tool_result]", "assistant[text]", "user[text]"}},
		{"steering inside the loop", provider.Message{Role: provider.RoleUser, Text: "also look at y"},
			[]string{"user[text]", "assistant[thinking tool_use tool_use]", "user[tool_result tool_result text]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := append(append([]provider.Message(nil), loop...), tc.next)
			out, err := buildMessages(msgs)
			if err != nil {
				t.Fatal(err)
			}
			got := roleShape(t, out)
			if len(got) != len(tc.want) {
				t.Fatalf("shape %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("shape %q, want %q", got, tc.want)
				}
			}
		})
	}
	// A prompt that follows a finished answer needs nothing more.
	out, err := buildMessages([]provider.Message{
		{Role: provider.RoleUser, Text: "hi", NewTurn: true},
		{Role: provider.RoleAssistant, Text: "hello"},
		{Role: provider.RoleUser, Text: "again", NewTurn: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := roleShape(t, out); len(got) != 3 || got[1] != "assistant[text]" || got[2] != "user[text]" {
		t.Errorf("shape %q", got)
	}
}
