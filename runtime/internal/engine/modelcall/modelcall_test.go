package modelcall

import (
	"context"
	"errors"
	"testing"
)

// recorder is a Recoverer that makes the attempts it is given, committing
// the last and discarding the others.
type recorder struct{ attempts int }

func (r *recorder) Recover(ctx context.Context, op Operation[any]) (any, error) {
	var last any
	for i := 0; i < r.attempts; i++ {
		if i > 0 && op.Discard != nil {
			op.Discard(last)
		}
		v, err := op.Call(ctx)
		if err != nil {
			return nil, err
		}
		last = v
	}
	return last, nil
}

func TestRecoverKeepsTheValueType(t *testing.T) {
	n := 0
	var discarded []int
	got, err := Recover(context.Background(), &recorder{attempts: 3}, Operation[int]{
		Name:    "local_compaction",
		Call:    func(context.Context) (int, error) { n++; return n * 10, nil },
		Discard: func(v int) { discarded = append(discarded, v) },
	})
	if err != nil || got != 30 {
		t.Fatalf("Recover = %d, %v; want 30, nil", got, err)
	}
	if len(discarded) != 2 || discarded[0] != 10 || discarded[1] != 20 {
		t.Fatalf("discarded %v; want [10 20]", discarded)
	}
}

func TestRecoverFailureIsTheZeroValue(t *testing.T) {
	want := &Failed{Code: "retries_exhausted", Msg: "gave up"}
	got, err := Recover(context.Background(), &recorder{attempts: 1}, Operation[string]{
		Name: "terminal_gate",
		Call: func(context.Context) (string, error) { return "", want },
	})
	var f *Failed
	if got != "" || !errors.As(err, &f) || f != want {
		t.Fatalf("Recover = %q, %v; want \"\", %v", got, err, want)
	}
}
