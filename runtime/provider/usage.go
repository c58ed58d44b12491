package provider

import "math"

// Usage is the token accounting of one model call. InputTokens counts every
// input token, cached ones included (OpenAI's convention): a mode whose wire
// reports cache reads and writes separately (Anthropic) adds them in, so
// that pricing can split InputTokens into fresh, cache-read and cache-write
// parts. OutputTokens includes ReasoningTokens.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// MaxReportedTokens is the largest token count a provider may report for
// one call (10^12). A report with a count beyond it, or a negative one, is
// absurd: it is treated as no report at all (see Plausible).
const MaxReportedTokens = 1_000_000_000_000

// Plausible reports whether every count of u is between 0 and
// MaxReportedTokens. An implausible report never reaches the arithmetic:
// the edge drops it and the runtime treats the call as one that reported
// no usage (the step is marked uncertain).
func (u Usage) Plausible() bool {
	for _, n := range [...]int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.TotalTokens} {
		if n < 0 || n > MaxReportedTokens {
			return false
		}
	}
	return true
}

// Reported returns u and true for a plausible report, else the zero Usage
// and false: what a consumer of EventUsage keeps.
func Reported(u Usage) (Usage, bool) {
	if !u.Plausible() {
		return Usage{}, false
	}
	return u, true
}

// AddTokens is a + b saturating at math.MaxInt64; a negative operand
// counts as 0. Totals never wrap around and never go negative.
func AddTokens(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Add adds v to u count by count with AddTokens.
func (u *Usage) Add(v Usage) {
	u.InputTokens = AddTokens(u.InputTokens, v.InputTokens)
	u.OutputTokens = AddTokens(u.OutputTokens, v.OutputTokens)
	u.CacheReadTokens = AddTokens(u.CacheReadTokens, v.CacheReadTokens)
	u.CacheWriteTokens = AddTokens(u.CacheWriteTokens, v.CacheWriteTokens)
	u.ReasoningTokens = AddTokens(u.ReasoningTokens, v.ReasoningTokens)
	u.TotalTokens = AddTokens(u.TotalTokens, v.TotalTokens)
}

// Total is the call's total: TotalTokens when reported, else input +
// output (saturating).
func (u Usage) Total() int64 {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return AddTokens(u.InputTokens, u.OutputTokens)
}
