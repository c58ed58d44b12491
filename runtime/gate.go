package runtime

import (
	"context"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine"
	"octet.dev/host/runtime/internal/engine/gate"
)

// Delegation: with the Ultra reasoning mode the Go API installs a
// delegation manager on the agent. From then on (leaving Ultra keeps it)
// the runs the application starts offer the model a delegate tool, whose
// call starts a worker run: a child run on the same agent, with a context
// and a session of its own, the parent's route, workspace and tools (never
// delegate: the depth is 1), the parent's network-wait ceiling, and the
// parent's effective reasoning effort at the call, pinned for the worker's
// whole run. The call waits for the worker and returns its answer. Every
// worker event reaches the observer (Observation.Parent names the
// delegating run). octet-host never installs a manager (the protocol has no
// field for it): there, delegate is denied with delegation_not_enabled.
const (
	// DelegateTool is the tool's name.
	DelegateTool = "delegate"
	// MaxConcurrentWorkers bounds the worker runs of an agent running at
	// once; a delegate call over it waits for a worker to end.
	MaxConcurrentWorkers = 4
	// MaxWorkersPerRun bounds the worker runs one run starts; the call
	// after fails with worker_limit.
	MaxWorkersPerRun = 16
)

// Tool error codes of delegate (tool_finish.data.error.code).
const (
	CodeWorkerLimit  = protocol.CodeWorkerLimit
	CodeWorkerFailed = protocol.CodeWorkerFailed
)

// The terminal gate (after Claude Code's and Codex's Stop
// hooks): when a step ends with no tool calls and no steering pending, its
// text is a candidate final answer, and the gate decides whether it ends
// the run. A rejected candidate stays in the conversation as an assistant
// message, never as the run's output; the gate's reason follows it as a
// user message and the run goes on. Unlike those hooks, the gate fails
// closed: a gate that cannot decide ends the run with terminal_gate_failed
// rather than letting the candidate through.

// GateVerdict is a terminal gate's decision on a candidate.
type GateVerdict string

// Verdicts.
const (
	// GateAccept lets the candidate end the run (queued follow-ups still
	// go on first).
	GateAccept GateVerdict = "accept"
	// GateReject sends the model back to work with the reason.
	GateReject GateVerdict = "reject"
	// GateStop ends the run now without an answer: status blocked, code
	// terminal_gate_stopped, the reason in the error's message.
	GateStop GateVerdict = "stop"
)

// GateInput is what a terminal gate reviews.
type GateInput struct {
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

// GateDecision is a terminal gate's answer. Reason is required for
// GateReject and GateStop; it is sanitized and cut to MaxGateReasonBytes
// before the model or an event sees it.
type GateDecision struct {
	Verdict GateVerdict
	Reason  string
}

// TerminalGate reviews candidate final answers (Agent.SetTerminalGate).
// Review runs on the run's goroutine, between the candidate's model_step
// and the run's next event; ctx ends with the run. An error, an unknown
// verdict, or a reject or stop without a reason ends the run with status
// error, code terminal_gate_failed (fail closed). A gate may delegate to a
// ModelGate with the ctx it was given.
type TerminalGate interface {
	Review(ctx context.Context, in GateInput) (GateDecision, error)
}

// TerminalGateFunc adapts a function to TerminalGate.
type TerminalGateFunc func(ctx context.Context, in GateInput) (GateDecision, error)

// Review calls f.
func (f TerminalGateFunc) Review(ctx context.Context, in GateInput) (GateDecision, error) {
	return f(ctx, in)
}

// Bounds of the terminal gate.
const (
	// MaxGateRejections is the most candidates the gate may reject in a
	// row: the rejection that reaches it ends the run with status blocked,
	// code terminal_gate_exhausted (Claude Code's Stop-hook cap).
	MaxGateRejections = 8
	// MaxGateReasonBytes bounds a reason in candidate_rejected, in the
	// model's next message and in an error message.
	MaxGateReasonBytes = 2048
)

// ErrGateOutsideRun is what ModelGate.Review returns when it is not called
// with the context a run gave a terminal gate.
var ErrGateOutsideRun = gate.ErrOutsideRun

// SetTerminalGate sets the terminal gate of runs started afterwards; nil
// removes it. A gate set here takes precedence over a terminal_gate of the
// operator's settings (~/.octet/settings.json or a trusted workspace's),
// which builds a ModelGate for runs of an agent without one. A *ModelGate
// is checked here: its Model and Instructions are required.
func (a *Agent) SetTerminalGate(g TerminalGate) error {
	switch t := g.(type) {
	case nil:
		return a.e.SetTerminalGate(nil)
	case *ModelGate:
		if t == nil {
			return a.e.SetTerminalGate(nil)
		}
		return a.e.SetTerminalGate(t.engine())
	}
	return a.e.SetTerminalGate(gateAdapter{g})
}

// ModelGate is a terminal gate that asks a model. Its call goes to its own
// route, with its own instructions, under the run's recovery settings
// (retry budget, max network wait): transient failures emit
// provider_operation_retry with operation "terminal_gate", and a call that
// still fails ends the run with terminal_gate_failed. Its usage enters
// the session's usage ledger (Session.Statistics) tagged with the
// operation.
//
// The model gets the run's prompt and the candidate and must answer with
// one JSON object: {"decision":"accept"}, {"decision":"reject","reason":…}
// or {"decision":"stop","reason":…}; text around the object is ignored.
// Anything else fails the gate.
type ModelGate struct {
	// Model is the catalog id of the gate's model, as RunRequest.Model
	// (with Route: the model name of that route).
	Model string
	// Route, when set, is an inline route for the gate's calls, as
	// RunRequest.Route.
	Route *InlineRoute
	// Instructions say what a candidate must satisfy (at most 64 KiB).
	Instructions string
}

// engine returns the engine's model gate for g.
func (g *ModelGate) engine() *engine.ModelGate {
	return &engine.ModelGate{Model: g.Model, Route: g.Route.engine(), Instructions: g.Instructions}
}

// Review asks the gate's model about the candidate. It works only with the
// context a run gave its terminal gate (else ErrGateOutsideRun), and on
// the goroutine that called the gate's Review: its recovery events are
// the run's.
func (g *ModelGate) Review(ctx context.Context, in GateInput) (GateDecision, error) {
	d, err := g.engine().Review(ctx, gate.Input(in))
	return GateDecision{Verdict: GateVerdict(d.Verdict), Reason: d.Reason}, err
}

// gateAdapter serves an application's TerminalGate to the engine.
type gateAdapter struct{ g TerminalGate }

func (a gateAdapter) Review(ctx context.Context, in gate.Input) (gate.Decision, error) {
	d, err := a.g.Review(ctx, GateInput(in))
	return gate.Decision{Verdict: gate.Verdict(d.Verdict), Reason: d.Reason}, err
}
