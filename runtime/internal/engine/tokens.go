package engine

import (
	"octet.dev/host/fsm/compaction"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/provider"
)

// Context budgeting. The route's window is its
// context_window_tokens; the reserve keeps room for the answer:
//
//	reserve   = max(max_output_tokens, min(16384, window/4))
//	threshold = window − reserve            (compact when context > threshold)
//	keep      = min(20000, window/4)        (newest history kept verbatim)
//	fit       = window − max_output_tokens  (the largest request that still
//	                                         leaves room for the answer;
//	                                         window − reserve without a cap)
//
// The context's size is the usage of the last successful model step
// (provider.Usage counts cached input inside input_tokens, so that is the
// reported total, or input + output) plus an estimate of every message
// after it: ceil(UTF-8 bytes / 4) of text, reasoning and tool calls, 1200
// per image, and an audio clip's bytes / 16. Usage of failed or discarded
// attempts and of steps before the newest checkpoint never counts.
const (
	reserveCap     = compaction.ReserveCap
	keepRecentCap  = compaction.KeepCap
	imageTokens    = 1200
	audioBytesPerT = 16
)

// budget is a route's context budget; the zero value (no window) never
// compacts.
type budget struct {
	window, reserve, threshold, keep, fit int64
}

func budgetOf(m catalog.Model) budget {
	b, reserve := compaction.BudgetOf(int64(m.ContextWindowTokens), int64(m.MaxOutputTokens))
	return budget{window: b.Window, reserve: reserve, threshold: b.Threshold, keep: b.Keep, fit: b.Fit}
}

// on reports whether the route has a window to budget.
func (b budget) on() bool { return b.window > 0 }

// estimateBytes is ceil(n/4).
func estimateBytes(n int) int64 { return int64(n+3) / 4 }

// estimateMessage estimates one message's tokens.
func estimateMessage(m *provider.Message) int64 {
	n := len(m.Text) + len(m.Reasoning)
	for i := range m.ToolCalls {
		n += len(m.ToolCalls[i].Name) + len(m.ToolCalls[i].Arguments)
	}
	t := estimateBytes(n)
	for i := range m.Media {
		switch m.Media[i].Type {
		case provider.MediaImage:
			t += imageTokens
		default:
			t += m.Media[i].Bytes / audioBytesPerT
		}
	}
	return t
}

// estimateMessages sums estimateMessage over msgs.
func estimateMessages(msgs []provider.Message) int64 {
	var t int64
	for i := range msgs {
		t += estimateMessage(&msgs[i])
	}
	return t
}

// usageTokens is a step's context size from its usage: the reported
// total, else input (cached tokens included) + output.
func usageTokens(u provider.Usage) int64 {
	return u.Total()
}

// contextCount keeps the context size incrementally: a base (the last
// step's usage, or an estimate after a rebuild) plus the estimates of the
// messages appended since, each estimated once. The check costs the
// messages added since the last check, never the whole history.
type contextCount struct {
	tokens  int64
	counted int // msgs[:counted] are in tokens
}

// reset sets the size of msgs[:n] to tokens.
func (c *contextCount) reset(tokens int64, n int) { c.tokens, c.counted = tokens, n }

// current returns the size of msgs, estimating the messages not counted
// yet.
func (c *contextCount) current(msgs []provider.Message) int64 {
	if c.counted > len(msgs) {
		c.counted = len(msgs) // never happens: msgs only grow between resets
	}
	for i := c.counted; i < len(msgs); i++ {
		c.tokens += estimateMessage(&msgs[i])
	}
	c.counted = len(msgs)
	return c.tokens
}

// overheadTokens estimates what every request carries besides the
// messages: the system prompt and the tool schemas.
func overheadTokens(system string, specs []provider.ToolSpec) int64 {
	n := len(system)
	for _, s := range specs {
		n += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	return estimateBytes(n)
}
