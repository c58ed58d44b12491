package gate

import (
	"context"
	"errors"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// The terminal gate (after Claude Code's and Codex's Stop hooks): when a
// step ends with no tool calls and no steering pending, its text is a
// candidate final answer, and the gate decides whether it ends the run. A
// rejected candidate stays in the conversation as an assistant message,
// never as the run's output; the gate's reason follows it as a user
// message and the run goes on. Unlike those hooks, the gate fails closed:
// a gate that cannot decide ends the run with terminal_gate_failed rather
// than letting the candidate through.

// Verdict is a terminal gate's decision on a candidate.
type Verdict string

// Verdicts.
const (
	// Accept lets the candidate end the run (queued follow-ups still go
	// on first).
	Accept Verdict = "accept"
	// Reject sends the model back to work with the reason.
	Reject Verdict = "reject"
	// Stop ends the run now without an answer: status blocked, code
	// terminal_gate_stopped, the reason in the error's message.
	Stop Verdict = "stop"
)

// Input is what a terminal gate reviews.
type Input struct {
	RunID string `json:"run_id"`
	// Step is the model step that produced the candidate.
	Step int `json:"step"`
	// CandidateText is the step's answer text, as the run's output would
	// carry it (credentials redacted).
	CandidateText string `json:"candidate_text"`
	// Attempt numbers the candidate among those since the run began or
	// the gate last accepted one: 1 for the first, n+1 after n
	// rejections in a row.
	Attempt int `json:"attempt"`
	// Prompt is the run's prompt, the task the candidate answers.
	Prompt string `json:"prompt"`
}

// Decision is a terminal gate's answer. Reason is required for Reject and
// Stop; it is sanitized and cut to MaxReasonBytes before the model or an
// event sees it.
type Decision struct {
	Verdict Verdict
	Reason  string
}

// Reviewer is a terminal gate: it reviews candidate final answers. Review
// runs on the run's goroutine, between the candidate's model_step and the
// run's next event; ctx ends with the run. An error, an unknown verdict,
// or a reject or stop without a reason ends the run with status error,
// code terminal_gate_failed (fail closed). A reviewer may delegate to a
// model gate (AskModel) with the ctx it was given.
type Reviewer interface {
	Review(ctx context.Context, in Input) (Decision, error)
}

// Bounds of the terminal gate.
const (
	// MaxRejections is the most candidates the gate may reject in a row:
	// the rejection that reaches it ends the run with status blocked, code
	// terminal_gate_exhausted (Claude Code's Stop-hook cap).
	MaxRejections = 8
	// MaxReasonBytes bounds a reason in candidate_rejected, in the
	// model's next message and in an error message.
	MaxReasonBytes = 2048
)

// ErrOutsideRun is what a model gate's review returns when it is not
// called with the context a run gave its terminal gate.
var ErrOutsideRun = errors.New("runtime: a ModelGate reviews candidates only inside a run (set it with Agent.SetTerminalGate, or delegate to it with the context Review was given)")

// Model is a model gate as the engine defines it (its catalog model,
// inline route and instructions). The state resolves its route once per
// run and per Model value (the resolver New was given) and frames its
// instructions in the gate's system prompt.
type Model interface {
	GateInstructions() string
}

// Route is a model gate's resolved route.
type Route struct {
	Model catalog.Model
	Prov  provider.Provider
	// OutputCap is the output-token cap of the gate's request (0: none).
	OutputCap int
	// Redact removes the route's credentials from a message.
	Redact func(string) string
}

// Resolver resolves a model gate's route. Its error refuses the run when
// the gate is prepared, and fails the gate (by its message) during a
// review.
type Resolver func(ctx context.Context, m Model) (*Route, error)

// Env is the run a gate serves: what the state asks of the engine's
// driver. The steering queue stays the driver's: SteeringPending and
// AfterTurn are its boundaries.
type Env interface {
	// Recover makes a model gate's question under the run's recovery
	// machine (operation terminal_gate).
	modelcall.Recoverer
	// Emit sends a streaming event of the run.
	Emit(typ protocol.EventType, data protocol.Payload)
	// Append appends records to the run's session, durably.
	Append(recs ...store.Record) error
	// RunID and Prompt are the run's id and prompt.
	RunID() string
	Prompt() string
	// Redact removes the run's credentials (its redactor's) from s.
	Redact(s string) string
	// Scrub removes the run's credentials from s: its redactor's, then
	// its route's key.
	Scrub(s string) string
	// FailureMessage explains a call recovery gave up on, as the run's
	// own failures say it.
	FailureMessage(f *modelcall.Failed) string
	// RecordUsageUncertainty durably records that a call of the route was
	// billed without usage figures, and marks the run's usage uncertain.
	RecordUsageUncertainty(endpoint, model, operation string) error
	// SteeringPending reports whether steering waits to be delivered.
	SteeringPending() bool
	// AfterTurn fires the after-turn steering boundary (answered: the
	// turn's answer may end the run) and delivers what it releases to
	// step+1; it reports whether the run completes instead (then nothing
	// is delivered).
	AfterTurn(step int, msgs *[]provider.Message, answered bool) (complete bool, err error)
}

// State is a run's terminal gate: its reviewer and the routes of its
// model gates, resolved once per run and closed with it, and the count of
// rejections in a row. A nil *State is a run without a gate.
type State struct {
	reviewer Reviewer
	resolve  Resolver
	routes   map[Model]*Route
	// rejections counts the candidates rejected since the run began or
	// the gate last accepted one.
	rejections int
}

// New returns the gate state of a run reviewed by r; resolve resolves
// its model gates' routes.
func New(r Reviewer, resolve Resolver) *State {
	return &State{reviewer: r, resolve: resolve, routes: map[Model]*Route{}}
}

// Route resolves a model gate's route once per run.
func (s *State) Route(ctx context.Context, m Model) (*Route, error) {
	if r := s.routes[m]; r != nil {
		return r, nil
	}
	r, err := s.resolve(ctx, m)
	if err != nil {
		return nil, err
	}
	s.routes[m] = r
	return r, nil
}

// Close closes the providers of the model gates' routes.
func (s *State) Close() {
	if s == nil {
		return
	}
	for _, r := range s.routes {
		if c, ok := r.Prov.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}
