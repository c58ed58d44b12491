package modelcall

import (
	"context"
	"os"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/provider"
)

// Turn is one model call's committed result.
type Turn struct {
	Text, Reasoning string
	ReasoningBlocks []provider.ReasoningBlock
	Calls           []provider.ToolCall
	Usage           provider.Usage
	UsageReported   bool // the server sent usage figures for this call
	Finish          string
	Media           []provider.OutputMedia // spooled, not yet stored (the engine commits them)
}

// Failed is a model call (or an auxiliary operation) that recovery gave up on, with its code.
type Failed struct {
	Code protocol.Code
	Msg  string
}

func (e *Failed) Error() string { return string(e.Code) + ": " + e.Msg }

// AddMedia takes an EventMedia of the attempt.
func (t *Turn) AddMedia(m *provider.OutputMedia) {
	if m != nil {
		t.Media = append(t.Media, *m)
	}
}

// SettleMedia ends an attempt: on failure its media files are removed.
func (t *Turn) SettleMedia(err error) error {
	if err != nil {
		DropMedia(t.Media)
		t.Media = nil
	}
	return err
}

// DropMedia removes the temporary files of media never committed.
func DropMedia(ms []provider.OutputMedia) {
	for _, m := range ms {
		_ = os.Remove(m.Spool)
	}
}

// Operation is one auxiliary provider call (a compaction's summary, a
// model gate's question) to be made under the recovery machine: Call
// makes one attempt, whose value is provisional until the machine commits
// it; a replaced attempt's value goes to Discard. Lifecycle says the route
// opted into provider_lifecycle readiness waits; Endpoint and Model name
// the route of a usage_uncertainty record when the call goes to another
// route than the run's (empty: the run's).
type Operation[T any] struct {
	Name            string
	Call            func(ctx context.Context) (T, error)
	Discard         func(T)
	Lifecycle       bool
	Endpoint, Model string
}

// Recoverer performs an operation under the recovery machine: attempts,
// retries and network waits, each announced as the operation's, until a
// committed attempt (its value) or a final failure (a *Failed, or the
// context's error). The engine's driver is one.
type Recoverer interface {
	Recover(ctx context.Context, op Operation[any]) (any, error)
}

// Recover is Recoverer.Recover with the operation's own value type.
func Recover[T any](ctx context.Context, r Recoverer, op Operation[T]) (T, error) {
	anyOp := Operation[any]{Name: op.Name, Lifecycle: op.Lifecycle, Endpoint: op.Endpoint, Model: op.Model,
		Call: func(ctx context.Context) (any, error) { return op.Call(ctx) }}
	if op.Discard != nil {
		anyOp.Discard = func(v any) {
			if t, ok := v.(T); ok {
				op.Discard(t)
			}
		}
	}
	v, err := r.Recover(ctx, anyOp)
	t, _ := v.(T)
	return t, err
}
