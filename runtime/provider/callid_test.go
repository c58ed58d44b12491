package provider

import (
	"reflect"
	"strings"
	"testing"
)

func TestCallIDRule(t *testing.T) {
	for _, id := range []string{"call_1", "toolu_01AbC-x", strings.Repeat("a", 64)} {
		if !HostCallIDs.Valid(id) {
			t.Errorf("%q refused", id)
		}
	}
	for _, id := range []string{"", "a b", "a/b", "a.b", "é", "call\n", strings.Repeat("a", 65)} {
		if HostCallIDs.Valid(id) {
			t.Errorf("%q accepted", id)
		}
	}
	if ChatCallIDs.Valid(strings.Repeat("a", 41)) || !ChatCallIDs.Valid(strings.Repeat("a", 40)) {
		t.Error("chat ids are 1..40 bytes")
	}
}

func TestAssignCallIDs(t *testing.T) {
	used := map[string]bool{"call_1": true, "call_3_1": true}
	calls := []ToolCall{{ID: "keep-me"}, {ID: "keep-me"}, {ID: ""}, {ID: "x y"}, {ID: "call_1"}, {ID: strings.Repeat("z", 65)}}
	AssignCallIDs(calls, 3, used)
	var got []string
	for _, c := range calls {
		got = append(got, c.ID)
	}
	want := []string{"keep-me", "call_3_1_2", "call_3_2", "call_3_3", "call_3_4", "call_3_5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ids %q, want %q", got, want)
	}
	for _, id := range want {
		if !used[id] {
			t.Errorf("%q not recorded as used", id)
		}
	}
}

func TestUniqueCallIDs(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "dup", Name: "a"}, {ID: "dup", Name: "b"}, {ID: "bad id", Name: "c"}}},
		{Role: RoleTool, ToolCallID: "dup", Text: "ra"},
		{Role: RoleTool, ToolCallID: "dup", Text: "rb"},
		{Role: RoleTool, ToolCallID: "bad id", Text: "rc"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "dup", Name: "d"}}},
		{Role: RoleTool, ToolCallID: "dup", Text: "rd"},
	}
	orig := make([]Message, len(msgs))
	copy(orig, msgs)
	origCalls := append([]ToolCall(nil), msgs[1].ToolCalls...)
	out := UniqueCallIDs(msgs, HostCallIDs)
	if !reflect.DeepEqual(msgs, orig) || !reflect.DeepEqual(msgs[1].ToolCalls, origCalls) {
		t.Fatal("the input was modified")
	}
	ids := []string{out[1].ToolCalls[0].ID, out[1].ToolCalls[1].ID, out[1].ToolCalls[2].ID, out[5].ToolCalls[0].ID}
	want := []string{"dup", "call_h1_1", "call_h1_2", "call_h5_0"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("call ids %q, want %q", ids, want)
	}
	results := []string{out[2].ToolCallID, out[3].ToolCallID, out[4].ToolCallID, out[6].ToolCallID}
	if !reflect.DeepEqual(results, want) {
		t.Errorf("result ids %q, want %q (each answers its call)", results, want)
	}
	// A clean history is returned as is.
	clean := []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a"}, {ID: "b"}}}, {Role: RoleTool, ToolCallID: "a"}}
	if got := UniqueCallIDs(clean, HostCallIDs); &got[0] != &clean[0] {
		t.Error("a clean history was copied")
	}
	// Chat's shorter rule renames an id the others accept.
	long := strings.Repeat("L", 50)
	got := UniqueCallIDs([]Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: long}}}, {Role: RoleTool, ToolCallID: long}}, ChatCallIDs)
	if got[0].ToolCalls[0].ID != "call_h0_0" || got[1].ToolCallID != "call_h0_0" {
		t.Errorf("chat ids %q %q", got[0].ToolCalls[0].ID, got[1].ToolCallID)
	}
}
