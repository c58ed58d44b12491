package gate

import (
	"context"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// fakeEnv is a run for the gate: it records what the gate asks of it.
type fakeEnv struct {
	secret     string // redacted by Redact and Scrub
	key        string // scrubbed by Scrub only
	pending    bool   // SteeringPending
	complete   bool   // AfterTurn(answered) completes the run
	queued     []string
	appendErr  error
	afterTurns []bool // AfterTurn's answered, in order
	events     []any
	recs       []store.Record
	uncertain  []string // endpoint/model/operation
	attempts   int      // Recover makes this many attempts (default 1), committing the last
	recovered  []string // operation names
}

func (e *fakeEnv) Recover(ctx context.Context, op modelcall.Operation[any]) (any, error) {
	e.recovered = append(e.recovered, op.Name)
	var last any
	for i := 0; i < max(e.attempts, 1); i++ {
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

func (e *fakeEnv) Emit(typ protocol.EventType, data protocol.Payload) {
	e.events = append(e.events, data)
}

func (e *fakeEnv) Append(recs ...store.Record) error {
	if e.appendErr != nil {
		return e.appendErr
	}
	e.recs = append(e.recs, recs...)
	return nil
}

func (e *fakeEnv) RunID() string  { return "run-1" }
func (e *fakeEnv) Prompt() string { return "fix the bug" }

func (e *fakeEnv) Redact(s string) string {
	if e.secret == "" {
		return s
	}
	return strings.ReplaceAll(s, e.secret, "[REDACTED]")
}

func (e *fakeEnv) Scrub(s string) string {
	s = e.Redact(s)
	if e.key != "" {
		s = strings.ReplaceAll(s, e.key, "[redacted]")
	}
	return s
}

func (e *fakeEnv) FailureMessage(f *modelcall.Failed) string { return "explained: " + f.Msg }

func (e *fakeEnv) RecordUsageUncertainty(endpoint, model, operation string) error {
	if e.appendErr != nil {
		return e.appendErr
	}
	e.uncertain = append(e.uncertain, endpoint+"/"+model+"/"+operation)
	return nil
}

func (e *fakeEnv) SteeringPending() bool { return e.pending }

func (e *fakeEnv) AfterTurn(step int, msgs *[]provider.Message, answered bool) (bool, error) {
	e.afterTurns = append(e.afterTurns, answered)
	if answered && e.complete {
		return true, nil
	}
	if e.appendErr != nil {
		return false, e.appendErr
	}
	for _, q := range e.queued {
		*msgs = append(*msgs, provider.Message{Role: provider.RoleUser, Text: q})
	}
	e.queued, e.pending = nil, false
	return false, nil
}

// reviewerFunc adapts a function to Reviewer.
type reviewerFunc func(ctx context.Context, in Input) (Decision, error)

func (f reviewerFunc) Review(ctx context.Context, in Input) (Decision, error) { return f(ctx, in) }

// answers is a reviewer answering from a list and recording its inputs.
type answers struct {
	list   []Decision
	errs   []error
	inputs []Input
}

func (a *answers) Review(_ context.Context, in Input) (Decision, error) {
	n := len(a.inputs)
	a.inputs = append(a.inputs, in)
	var err error
	if n < len(a.errs) {
		err = a.errs[n]
	}
	return a.list[min(n, len(a.list)-1)], err
}

// noRoutes is the resolver of a state whose reviewer asks no model.
func noRoutes(context.Context, Model) (*Route, error) { panic("no model gate here") }
