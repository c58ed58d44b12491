package compact

import (
	"context"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/provider"
)

func TestSummarizerMarkerMatchesFake(t *testing.T) {
	if summarizerMarker != fakeprovider.SummarizerMarker || !strings.Contains(summarizerSystem, fakeprovider.SummarizerMarker) {
		t.Fatalf("the summarizer's system prompt does not carry the fake's marker %q", fakeprovider.SummarizerMarker)
	}
}

func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		window, out                  int
		reserve, threshold, keepWant int64
	}{
		{200000, 8192, 16384, 183616, 20000},
		{32768, 4096, 8192, 24576, 8192},
		{10000, 1000, 2500, 7500, 2500},
		{10000, 4000, 4000, 6000, 2500},
	} {
		b := BudgetOf(int64(tc.window), int64(tc.out))
		if b.Reserve != tc.reserve || b.Threshold != tc.threshold || b.Keep != tc.keepWant {
			t.Errorf("window %d out %d: %+v", tc.window, tc.out, b)
		}
	}
	// fit: the largest request that leaves room for the answer.
	for _, tc := range []struct{ window, out, fit int }{{10000, 1000, 9000}, {10000, 0, 7500}, {6000, 400, 5600}, {1000, 5000, 0}} {
		if b := BudgetOf(int64(tc.window), int64(tc.out)); b.Fit != int64(tc.fit) {
			t.Errorf("window %d out %d: fit %d, want %d", tc.window, tc.out, b.Fit, tc.fit)
		}
	}
	if BudgetOf(0, 100).On() {
		t.Error("a route without a window budgets")
	}
}

func TestHandoffCaps(t *testing.T) {
	ev := []string{strings.Repeat("d/", 997) + "f.go"} // 2000 bytes with its block
	for _, tc := range []struct {
		name      string
		summary   string
		read, mod []string
		code      protocol.Code
	}{
		{"empty", "", nil, nil, protocol.CodeCompactionHandoffEmpty},
		{"whitespace", " \n\t ", nil, nil, protocol.CodeCompactionHandoffEmpty},
		{"evidence only", "  ", []string{"a.go"}, []string{"b.go"}, protocol.CodeCompactionHandoffEmpty},
		{"exactly 131072 bytes", strings.Repeat("x", 131072), nil, nil, ""},
		{"131073 bytes", strings.Repeat("x", 131073), nil, nil, protocol.CodeCompactionHandoffTooLarge},
		{"131000 and 2000 of evidence", strings.Repeat("x", 131000), ev, nil, protocol.CodeCompactionHandoffTooLarge},
		{"trailing space trimmed", strings.Repeat("x", 131072) + " \n", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, code := assembleHandoff(tc.summary, tc.read, tc.mod)
			if code != tc.code {
				t.Fatalf("code %q, want %q (handoff %d bytes)", code, tc.code, len(h))
			}
			if code == protocol.CodeCompactionHandoffTooLarge && !strings.HasPrefix(h, tc.summary) {
				t.Error("a refused handoff was truncated")
			}
		})
	}
	h, _ := assembleHandoff("## Goal\nx\n\n", []string{"a.go"}, []string{"b.go"})
	if want := "## Goal\nx\n\n<read-files>\na.go\n</read-files>\n\n<modified-files>\nb.go\n</modified-files>"; h != want {
		t.Errorf("handoff %q, want %q", h, want)
	}
}

func TestFileEvidence(t *testing.T) {
	call := func(id, name, path string) provider.ToolCall {
		return provider.ToolCall{ID: id, Name: name, Arguments: `{"path":"` + path + `"}`}
	}
	msgs := []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
			call("1", "read", "src/b.go"), call("2", "read", "src/a.go"), call("3", "edit", "src/a.go"),
			call("4", "edit", "failed.go"), call("5", "write", "/ws/new.go"), call("6", "read", "/etc/passwd"),
			call("7", "read", "../out.go"), call("8", "ls", "src"), call("9", "read", "./src/b.go"),
		}},
		{Role: provider.RoleTool, ToolCallID: "1", Text: "b"},
		{Role: provider.RoleTool, ToolCallID: "2", Text: "a"},
		{Role: provider.RoleTool, ToolCallID: "3", Text: "ok"},
		{Role: provider.RoleTool, ToolCallID: "4", Text: "error not_found", IsError: true},
		{Role: provider.RoleTool, ToolCallID: "5", Text: "ok"},
		{Role: provider.RoleTool, ToolCallID: "6", Text: "root"},
		{Role: provider.RoleTool, ToolCallID: "7", Text: "x"},
		{Role: provider.RoleTool, ToolCallID: "8", Text: "a.go"},
		{Role: provider.RoleTool, ToolCallID: "9", Text: "b"},
	}
	read, mod := fileEvidence("/ws", msgs, nil, []string{"old.go", "new.go"}, []string{"prev.go"})
	if want := []string{"old.go", "src/b.go"}; !slices.Equal(read, want) {
		t.Errorf("read %q, want %q", read, want)
	}
	if want := []string{"new.go", "prev.go", "src/a.go"}; !slices.Equal(mod, want) {
		t.Errorf("modified %q, want %q", mod, want)
	}
}

func TestCutNeverSeparatesToolResults(t *testing.T) {
	big := strings.Repeat("x", 4000) // 1000 tokens
	c := New(&fakeEnv{}, Config{}, nil)
	c.bud = Budget{Window: 10000, Keep: 1500}
	msgs := []provider.Message{
		{Role: provider.RoleUser, Text: big},
		{Role: provider.RoleAssistant, Text: "ok"},
		{Role: provider.RoleUser, Text: "next"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a", Name: "ls"}, {ID: "b", Name: "ls"}}},
		{Role: provider.RoleTool, ToolCallID: "a", Text: big},
		{Role: provider.RoleTool, ToolCallID: "b", Text: big},
		{Role: provider.RoleAssistant, Text: "done"},
	}
	pl, ok := c.plan(msgs)
	if !ok {
		t.Fatal("nothing to summarize")
	}
	// keep 1500 is reached inside the tool results (index 4): the cut
	// moves on to the assistant message after them, which splits the
	// turn that began at "next".
	if pl.cut != 6 {
		t.Fatalf("cut %d, want 6", pl.cut)
	}
	if len(pl.history) != 2 || len(pl.prefix) != 4 {
		t.Fatalf("history %d, prefix %d: want 2 and 4 (a split turn)", len(pl.history), len(pl.prefix))
	}
	for i := pl.cut; i < len(msgs); i++ {
		if msgs[i].Role == provider.RoleTool {
			t.Fatal("a kept tool result lost its call")
		}
	}
	// A cut that lands on a user message splits nothing.
	c.bud.Keep = 2003
	if pl, _ = c.plan(msgs); pl.cut != 2 || pl.prefix != nil || len(pl.history) != 2 {
		t.Fatalf("cut %d prefix %d history %d, want 2, 0, 2", pl.cut, len(pl.prefix), len(pl.history))
	}
	// Everything within keep: nothing to summarize.
	c.bud.Keep = 100000
	if _, ok := c.plan(msgs); ok {
		t.Fatal("a plan with nothing before the cut")
	}
}

// noItems: an output array without items is refused whatever whitespace
// the endpoint put inside it (a checkpoint of no items would replace the
// whole history with nothing).
func TestNativeCompactionNoItems(t *testing.T) {
	for items, want := range map[string]bool{
		"[]": true, "[ ]": true, "[\n]": true, " [\r\n\t] ": true,
		`[{}]`: false, `[ {"type":"compaction"} ]`: false, "[\n  1\n]": false,
	} {
		if got := noItems([]byte(items)); got != want {
			t.Errorf("noItems(%q) = %v, want %v", items, got, want)
		}
	}
}

// BenchmarkCompactionCheck10k is the per-step compaction check on a
// session of 10,000 messages: each step appends a tool call and its result
// and checks the budget (under the threshold, as almost every step is).
// Target: <= 50 µs per step; the estimate is incremental, so it
// does not depend on the history's length.
func BenchmarkCompactionCheck10k(b *testing.B) {
	text := strings.Repeat("some file content ", 40)
	msgs := make([]provider.Message, 0, 10000+2*b.N)
	for i := range 10000 {
		switch i % 3 {
		case 0:
			msgs = append(msgs, provider.Message{Role: provider.RoleUser, Text: text})
		case 1:
			msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "read", Arguments: `{"path":"a.go"}`}}})
		default:
			msgs = append(msgs, provider.Message{Role: provider.RoleTool, ToolCallID: "c", Text: text})
		}
	}
	c := New(&fakeEnv{}, Config{Window: 1 << 40}, msgs)
	if c.bud != (Budget{Window: 1 << 40, Reserve: 16384, Threshold: 1<<40 - 16384, Keep: 20000, Fit: 1<<40 - 16384}) {
		b.Fatalf("budget %+v", c.bud)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "read", Arguments: `{"path":"a.go"}`}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: "c", Text: text})
		if tf := c.Check(ctx, i+1, &msgs); tf != nil {
			b.Fatal(tf)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/step")
}
