package engine

import (
	"context"
	"strings"
	"testing"

	"octet.dev/host/runtime/provider"
)

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
	d := &driver{cmp: &compactor{bud: budget{window: 1 << 40, reserve: 16384, threshold: 1<<40 - 16384, keep: 20000}}}
	d.cmp.count.reset(estimateMessages(msgs), len(msgs))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "read", Arguments: `{"path":"a.go"}`}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: "c", Text: text})
		if tf := d.compactIfNeeded(ctx, 1, &msgs); tf != nil {
			b.Fatal(tf)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/step")
}
