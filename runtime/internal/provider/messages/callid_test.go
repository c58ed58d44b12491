package messages

import (
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider"
)

// A history with a repeated or malformed tool-call id (written before the
// host assigned ids) is sent with unique, well-formed ids, each result
// answering its own call (issue 10, item 16).
func TestRequestMakesCallIDsUnique(t *testing.T) {
	req := provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "dup", Name: "ls", Arguments: "{}"}, {ID: "dup", Name: "ls", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "dup", ToolName: "ls", Text: "first"},
		{Role: provider.RoleTool, ToolCallID: "dup", ToolName: "ls", Text: "second"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "bad id/x", Name: "ls", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "bad id/x", ToolName: "ls", Text: "third"},
	}}
	body, err := buildRequest(req, thinkingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if strings.Count(s, "\"dup\"") != 2 || strings.Contains(s, "bad id") ||
		strings.Count(s, "\"call_h1_1\"") != 2 || strings.Count(s, "\"call_h4_0\"") != 2 {
		t.Errorf("body %s", s)
	}
	if req.Messages[1].ToolCalls[1].ID != "dup" {
		t.Error("the caller's history was modified")
	}
}
