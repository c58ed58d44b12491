package edge

import (
	"errors"
	"strings"
	"testing"

	"octet.dev/host/runtime/provider"
)

func TestArgsDropPastTheCallLimit(t *testing.T) {
	var q Queue
	q.SetOutputLimit(4 << 20)
	var a Args
	piece := strings.Repeat("a", 64<<10)
	for a.Len() <= provider.MaxToolArgBytes {
		q.AppendArgs(&a, piece)
	}
	if a.Bytes() != nil || q.Used() != 0 {
		t.Fatalf("held %d bytes, budget used %d: dropped arguments must be released", len(a.Bytes()), q.Used())
	}
	n := a.Len()
	call := a.ToolCall("id", "read")
	if call.Arguments != "{}" || call.ArgumentsDropped != n || n <= provider.MaxToolArgBytes {
		t.Fatalf("call %+v after %d bytes", call, n)
	}
	if err := q.LimitErr(); err != nil {
		t.Fatalf("LimitErr %v: dropped bytes below MaxDroppedArgBytes are not over the budget", err)
	}
	// The whole arguments, repeated within the limit, are kept again.
	q.SetArgs(&a, `{"path":"x"}`)
	if call := a.ToolCall("id", "read"); call.Arguments != `{"path":"x"}` || call.ArgumentsDropped != 0 || q.Used() != 12 {
		t.Fatalf("after SetArgs: %+v, used %d", call, q.Used())
	}
	// An endless stream of dropped arguments still ends.
	q = Queue{}
	var b Args
	big := strings.Repeat("b", 1<<20)
	for range MaxDroppedArgBytes / len(big) {
		q.AppendArgs(&b, big)
	}
	if q.LimitErr() != nil {
		t.Fatal("over the budget too early")
	}
	q.AppendArgs(&b, big)
	var pe *provider.Error
	if err := q.LimitErr(); !errors.As(err, &pe) || pe.Kind != provider.FailDecode || pe.Code != "output_too_large" {
		t.Fatalf("LimitErr %v", err)
	}
}

func TestOutputBudgetCountsTextAndKeptArgs(t *testing.T) {
	var q Queue
	q.SetOutputLimit(100)
	q.Push(provider.StreamEvent{Kind: provider.EventText, Text: strings.Repeat("t", 40)})
	q.Push(provider.StreamEvent{Kind: provider.EventReasoning, Text: strings.Repeat("r", 40)})
	var a Args
	q.AppendArgs(&a, strings.Repeat("a", 20))
	if q.Used() != 100 || q.LimitErr() != nil {
		t.Fatalf("used %d, err %v at the limit", q.Used(), q.LimitErr())
	}
	q.AppendArgs(&a, "a")
	if err := q.LimitErr(); err == nil || !strings.Contains(err.Error(), "more than 100 bytes") {
		t.Fatalf("LimitErr %v past the limit", err)
	}
}

func TestOutputLimit(t *testing.T) {
	for _, tc := range []struct{ tokens, want int }{
		{0, 1 << 20}, {-5, 1 << 20}, {1000, 1 << 20}, {65536, 1 << 20}, {65537, 16 * 65537}, {128000, 2048000}, {1 << 62, 1 << 40},
	} {
		if got := provider.OutputLimit(tc.tokens); got != tc.want {
			t.Errorf("OutputLimit(%d) = %d, want %d", tc.tokens, got, tc.want)
		}
	}
}
