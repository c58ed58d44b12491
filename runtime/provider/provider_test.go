package provider

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestReasoningOrigin: a recorded wire wins; a block without one (a session
// written before origins were recorded) belongs to the wire its shape
// implies.
func TestReasoningOrigin(t *testing.T) {
	tests := []struct {
		name  string
		block ReasoningBlock
		want  string
	}{
		{"recorded responses", ReasoningBlock{Signature: "s", ID: "rs_1", Wire: WireResponses}, WireResponses},
		{"recorded messages, with an id", ReasoningBlock{Signature: "s", ID: "x", Wire: WireMessages}, WireMessages},
		{"recorded chat", ReasoningBlock{Signature: "s", Wire: WireChat}, WireChat},
		{"old: signed with an item id", ReasoningBlock{Text: "t", Signature: "enc", ID: "rs_1"}, WireResponses},
		{"old: signed without an id", ReasoningBlock{Text: "t", Signature: "sig"}, WireMessages},
		{"old: redacted", ReasoningBlock{Redacted: "r"}, WireMessages},
	}
	for _, tc := range tests {
		if got := tc.block.Origin(); got != tc.want {
			t.Errorf("%s: Origin() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSetOriginPersists: SetOrigin fills only blocks without an origin, and
// the origin survives the session's JSON form; an old record without it
// still decodes and keeps its shape's wire.
func TestSetOriginPersists(t *testing.T) {
	bs := []ReasoningBlock{{Signature: "enc", ID: "rs_1"}, {Signature: "sig", Wire: WireMessages, Model: "claude"}}
	SetOrigin(bs, WireResponses, "gpt-5")
	if bs[0].Wire != WireResponses || bs[0].Model != "gpt-5" || bs[1].Wire != WireMessages || bs[1].Model != "claude" {
		t.Fatalf("SetOrigin: %+v", bs)
	}
	b, err := json.Marshal(Message{Role: RoleAssistant, ReasoningBlocks: bs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"wire":"openai-responses","model":"gpt-5"`) {
		t.Errorf("stored form %s", b)
	}
	var old Message
	if err := json.Unmarshal([]byte(`{"role":"assistant","reasoning_blocks":[{"text":"t","signature":"sig"}]}`), &old); err != nil {
		t.Fatal(err)
	}
	if got := old.ReasoningBlocks[0].Origin(); got != WireMessages {
		t.Errorf("old block Origin() = %q", got)
	}
}
