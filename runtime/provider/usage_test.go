package provider

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestPlausible(t *testing.T) {
	for _, tc := range []struct {
		u    Usage
		want bool
	}{
		{Usage{}, true},
		{Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}, true},
		{Usage{InputTokens: MaxReportedTokens}, true},
		{Usage{InputTokens: MaxReportedTokens + 1}, false},
		{Usage{OutputTokens: -1}, false},
		{Usage{CacheReadTokens: math.MaxInt64}, false},
		{Usage{TotalTokens: math.MinInt64}, false},
		{Usage{ReasoningTokens: -5}, false},
		{Usage{CacheWriteTokens: 1 << 62}, false},
	} {
		if got := tc.u.Plausible(); got != tc.want {
			t.Errorf("%+v.Plausible() = %v, want %v", tc.u, got, tc.want)
		}
		if r, ok := Reported(tc.u); ok != tc.want || !ok && r != (Usage{}) {
			t.Errorf("Reported(%+v) = %+v, %v", tc.u, r, ok)
		}
	}
}

func TestAddTokens(t *testing.T) {
	for _, tc := range [][3]int64{
		{1, 2, 3}, {math.MaxInt64, 1, math.MaxInt64}, {math.MaxInt64 - 1, 1, math.MaxInt64},
		{-5, 3, 3}, {3, -5, 3}, {math.MinInt64, math.MinInt64, 0}, {math.MaxInt64, math.MaxInt64, math.MaxInt64},
	} {
		if got := AddTokens(tc[0], tc[1]); got != tc[2] {
			t.Errorf("AddTokens(%d, %d) = %d, want %d", tc[0], tc[1], got, tc[2])
		}
	}
	if got := (Usage{InputTokens: math.MaxInt64 - 10, OutputTokens: 20}).Total(); got != math.MaxInt64 {
		t.Errorf("Total saturates: %d", got)
	}
}

// count draws a token count: small, around the bound, huge, negative, or
// an extreme of int64.
func count() *rapid.Generator[int64] {
	return rapid.OneOf(
		rapid.Int64Range(0, 1000),
		rapid.Int64Range(MaxReportedTokens-2, MaxReportedTokens+2),
		rapid.Int64Range(math.MaxInt64-10, math.MaxInt64),
		rapid.Int64Range(math.MinInt64, -1),
		rapid.Int64(),
	)
}

func usageGen() *rapid.Generator[Usage] {
	return rapid.Custom(func(t *rapid.T) Usage {
		return Usage{InputTokens: count().Draw(t, "in"), OutputTokens: count().Draw(t, "out"), CacheReadTokens: count().Draw(t, "cr"),
			CacheWriteTokens: count().Draw(t, "cw"), ReasoningTokens: count().Draw(t, "reason"), TotalTokens: count().Draw(t, "total")}
	})
}

// TestUsageSumsNeverWrap: summing any sequence of reports, plausible or
// not, with Add never yields a negative count nor a smaller one than
// before (no wrap-around); Reported keeps exactly the plausible ones.
func TestUsageSumsNeverWrap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		reports := rapid.SliceOfN(usageGen(), 1, 50).Draw(t, "reports")
		var raw, kept Usage
		for _, u := range reports {
			prev := raw
			raw.Add(u)
			for _, pair := range [][2]int64{{prev.InputTokens, raw.InputTokens}, {prev.OutputTokens, raw.OutputTokens},
				{prev.CacheReadTokens, raw.CacheReadTokens}, {prev.CacheWriteTokens, raw.CacheWriteTokens},
				{prev.ReasoningTokens, raw.ReasoningTokens}, {prev.TotalTokens, raw.TotalTokens}} {
				if pair[1] < 0 || pair[1] < pair[0] {
					t.Fatalf("sum went from %d to %d after %+v", pair[0], pair[1], u)
				}
			}
			r, ok := Reported(u)
			if ok != u.Plausible() {
				t.Fatalf("Reported(%+v) ok = %v", u, ok)
			}
			kept.Add(r)
			if kept.Total() < 0 {
				t.Fatalf("total %d", kept.Total())
			}
		}
	})
}
