package gate

import (
	"strings"
	"testing"
)

func TestReviews(t *testing.T) {
	for _, c := range []struct {
		hasGate, lastStep, pending, want bool
	}{
		{false, false, false, false}, // no gate: never
		{false, true, true, false},
		{true, false, false, true}, // a candidate with nothing pending
		{true, false, true, false}, // pending steering goes first
		{true, true, true, true},   // at the last step nothing is delivered: reviewed
		{true, true, false, true},
	} {
		if got := Reviews(c.hasGate, c.lastStep, c.pending); got != c.want {
			t.Errorf("Reviews(gate %v, last %v, pending %v) = %v, want %v", c.hasGate, c.lastStep, c.pending, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		d    Decision
		want string // "" valid, else a substring of the failure
	}{
		{Decision{Verdict: Accept}, ""},
		{Decision{Verdict: Accept, Reason: "fine"}, ""},
		{Decision{Verdict: Reject, Reason: "run the tests"}, ""},
		{Decision{Verdict: Stop, Reason: "cannot be done"}, ""},
		{Decision{Verdict: Reject}, "it answered reject without a reason"},
		{Decision{Verdict: Stop}, "it answered stop without a reason"},
		{Decision{Verdict: "maybe", Reason: "x"}, `it answered the unknown verdict "maybe"`},
		{Decision{Verdict: ""}, `it answered the unknown verdict ""`},
		{Decision{Verdict: "ACCEPT"}, `unknown verdict "ACCEPT"`}, // a reviewer's verdict is exact (only a model's answer is folded)
		{Decision{Verdict: Verdict(strings.Repeat("v", 100))}, `"` + strings.Repeat("v", 64) + `…"`},
	} {
		got := Check(c.d)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("Check(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		v          Verdict
		rejections int
		want       Outcome
		after      int
	}{
		{Accept, 0, Accepted, 0},
		{Accept, 5, Accepted, 0}, // the count starts again
		{Stop, 0, Stopped, 0},
		{Stop, 3, Stopped, 3}, // a stop leaves the count
		{Reject, 0, Rejected, 1},
		{Reject, MaxRejections - 2, Rejected, MaxRejections - 1},
		{Reject, MaxRejections - 1, Exhausted, MaxRejections}, // the rejection that reaches the cap
	} {
		got, after := Decide(c.v, c.rejections)
		if got != c.want || after != c.after {
			t.Errorf("Decide(%s, %d) = %s, %d; want %s, %d", c.v, c.rejections, got, after, c.want, c.after)
		}
	}
}

// TestDecideBudget: rejections in a row exhaust the gate at the
// MaxRejections-th; an accept in between starts the count again.
func TestDecideBudget(t *testing.T) {
	n, out := 0, Outcome(0)
	for i := 1; i < MaxRejections; i++ {
		if out, n = Decide(Reject, n); out != Rejected || n != i {
			t.Fatalf("rejection %d: %s, %d", i, out, n)
		}
	}
	if out, n = Decide(Accept, n); out != Accepted || n != 0 {
		t.Fatalf("accept: %s, %d", out, n)
	}
	for i := 1; i <= MaxRejections; i++ {
		out, n = Decide(Reject, n)
	}
	if out != Exhausted || n != MaxRejections {
		t.Fatalf("after %d rejections in a row: %s, %d", MaxRejections, out, n)
	}
}
