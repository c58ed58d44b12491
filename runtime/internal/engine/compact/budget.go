package compact

import (
	"octet.dev/host/fsm/compaction"
	"octet.dev/host/runtime/provider"
)

// Context budgeting (CONTRACT §17). The route's window is its
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
	imageTokens    = 1200
	audioBytesPerT = 16
)

// Budget is a route's context budget; the zero value (no window) never
// compacts.
type Budget struct {
	Window, Reserve, Threshold, Keep, Fit int64
}

// BudgetOf is the budget of a route whose model has a context window of
// window tokens and answers with at most maxOutput tokens (0: not
// declared).
func BudgetOf(window, maxOutput int64) Budget {
	b, reserve := compaction.BudgetOf(window, maxOutput)
	return Budget{Window: b.Window, Reserve: reserve, Threshold: b.Threshold, Keep: b.Keep, Fit: b.Fit}
}

// On reports whether the route has a window to budget.
func (b Budget) On() bool { return b.Window > 0 }

// policy is the machine's view of the budget.
func (b Budget) policy() compaction.Budget {
	return compaction.Budget{Window: b.Window, Threshold: b.Threshold, Keep: b.Keep, Fit: b.Fit}
}

// estimateBytes is ceil(n/4).
func estimateBytes(n int) int64 { return int64(n+3) / 4 }

// EstimateMessage estimates one message's tokens.
func EstimateMessage(m *provider.Message) int64 {
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

// EstimateMessages sums EstimateMessage over msgs.
func EstimateMessages(msgs []provider.Message) int64 {
	var t int64
	for i := range msgs {
		t += EstimateMessage(&msgs[i])
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
		c.tokens += EstimateMessage(&msgs[i])
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
