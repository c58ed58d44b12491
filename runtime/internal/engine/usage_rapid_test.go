package engine

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"octet.dev/host/protocol"
)

// usageCount draws a reported count: plausible (small, so that no
// compaction is triggered), or absurd: negative, beyond 10^12, MaxInt64.
func usageCount() *rapid.Generator[int64] {
	return rapid.OneOf(
		rapid.Int64Range(0, 1000),
		rapid.Int64Range(0, 1000),
		rapid.Int64Range(math.MinInt64, -1),
		rapid.Int64Range(1_000_000_000_001, math.MaxInt64),
		rapid.Just(int64(math.MaxInt64)),
	)
}

// TestUsageNeverWraps: whatever usage a provider reports (huge,
// negative, MaxInt64), no model_step carries a negative count or a
// cumulative figure that went down (wrapped), the session's ledger sums
// stay non-negative, and a step whose report was absurd is marked
// uncertain exactly as one that reported nothing.
func TestUsageNeverWraps(t *testing.T) {
	f := newFixture(t)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		steps := rapid.IntRange(1, 4).Draw(rt, "steps")
		var turns [][]StreamEvent
		var absurd []bool
		for i := range steps {
			u := ProviderUsage{InputTokens: usageCount().Draw(rt, "in"), OutputTokens: usageCount().Draw(rt, "out"),
				CacheReadTokens: usageCount().Draw(rt, "cr"), ReasoningTokens: usageCount().Draw(rt, "reason"),
				TotalTokens: usageCount().Draw(rt, "total")}
			absurd = append(absurd, !u.Plausible())
			var evs []StreamEvent
			finish := FinishStop
			if i < steps-1 {
				evs = append(evs, StreamEvent{Kind: StreamToolCall, ToolCall: ToolCall{ID: fmt.Sprint("c", i), Name: "ls", Arguments: `{}`}})
				finish = FinishToolCalls
			} else {
				evs = append(evs, StreamEvent{Kind: StreamText, Text: "done"})
			}
			turns = append(turns, append(evs, StreamEvent{Kind: StreamUsage, Usage: u}, StreamEvent{Kind: StreamFinish, FinishReason: finish}))
		}
		f.prov = &scripted{turns: turns}
		req := f.req("go")
		req.RunID, req.SessionID = fmt.Sprint("run-", n), fmt.Sprint("usage-", n)
		evs, res := f.run(req)
		if res.Status != protocol.StatusCompleted {
			rt.Fatalf("status %s: %+v", res.Status, res.Error)
		}
		var prev protocol.Usage
		uncertain := false
		step := 0
		for _, ev := range evs {
			ms, ok := ev.Data.(*protocol.ModelStep)
			if !ok {
				continue
			}
			uncertain = uncertain || absurd[step]
			step++
			u, c := ms.Usage, ms.Cumulative.Usage
			for _, v := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.TotalTokens,
				c.InputTokens, c.OutputTokens, c.CacheReadTokens, c.CacheWriteTokens, c.ReasoningTokens, c.TotalTokens} {
				if v < 0 {
					rt.Fatalf("step %d: a negative count in %+v", ms.Step, ms)
				}
			}
			if c.TotalTokens < prev.TotalTokens || c.InputTokens < prev.InputTokens {
				rt.Fatalf("step %d: the cumulative usage went down: %+v after %+v", ms.Step, c, prev)
			}
			prev = c
			if ms.UsageUncertain != uncertain {
				rt.Fatalf("step %d: usage_uncertain %v, want %v", ms.Step, ms.UsageUncertain, uncertain)
			}
			if absurd[step-1] && u != (protocol.Usage{}) {
				rt.Fatalf("step %d: an absurd report reached the figures: %+v", ms.Step, u)
			}
		}
		if step != steps {
			rt.Fatalf("%d model_step events, want %d", step, steps)
		}
		sess, err := f.agent.OpenSession(f.sessions, req.SessionID)
		if err != nil {
			rt.Fatal(err)
		}
		st := sess.Statistics()
		sess.Close()
		if st.TotalTokens < 0 || st.InputTokens < 0 || st.OutputTokens < 0 || st.UsageUncertain != uncertain {
			rt.Fatalf("ledger %+v, want uncertain %v", st, uncertain)
		}
	})
}
