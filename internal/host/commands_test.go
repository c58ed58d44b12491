package host

import (
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// TestRunRequestOptionalFields: an optional field the request omits stays
// nil (the runtime's default); one it sends is passed on even when it is
// invalid (zero, negative, empty, out of range), so that validation
// refuses it instead of defaulting it, and a value beyond int stays
// invalid.
func TestRunRequestOptionalFields(t *testing.T) {
	base := protocol.RunRequest{RunID: "r", Workspace: "/w", Model: "m", Prompt: "p"}
	rr := runRequest(&base)
	if rr.MaxSteps != nil || rr.ReasoningEffort != nil || rr.Route != nil {
		t.Fatalf("omitted fields: %+v", rr)
	}

	i64 := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		sent int64
		want int
	}{{0, 0}, {-7, 0}, {1, 1}, {1000, 1000}, {1001, 1001}, {1 << 62, runtime.MaxMaxSteps + 1}} {
		r := base
		r.MaxSteps = i64(tc.sent)
		if got := runRequest(&r).MaxSteps; got == nil || *got != tc.want {
			t.Errorf("max_steps %d: %v, want %d", tc.sent, got, tc.want)
		}
	}
	for _, tc := range []struct {
		sent int64
		want int
	}{{0, 0}, {-1, 0}, {4096, 4096}, {1 << 62, 1 << 40}} {
		r := base
		r.BaseURL, r.ContextWindowTokens, r.MaxOutputTokens = new("http://127.0.0.1:1/v1"), i64(tc.sent), i64(tc.sent)
		rt := runRequest(&r).Route
		if rt == nil || rt.ContextWindowTokens == nil || *rt.ContextWindowTokens != tc.want || rt.MaxOutputTokens == nil || *rt.MaxOutputTokens != tc.want {
			t.Errorf("token limits %d: %+v", tc.sent, rt)
		}
	}
	r := base
	r.BaseURL = new("http://127.0.0.1:1/v1")
	if rt := runRequest(&r).Route; rt == nil || rt.ContextWindowTokens != nil || rt.MaxOutputTokens != nil {
		t.Errorf("omitted token limits: %+v", rt)
	}
	for _, e := range []string{"", "high", "extreme"} {
		r := base
		r.Reasoning = &protocol.Reasoning{Effort: e}
		if got := runRequest(&r).ReasoningEffort; got == nil || *got != e {
			t.Errorf("reasoning.effort %q: %v", e, got)
		}
	}
}
