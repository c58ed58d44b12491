package runtime

import (
	"context"
	"errors"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine"
)

// RunRequest is one run of the agent (CONTRACT §8). Zero values mean
// "absent" and take the documented defaults.
type RunRequest struct {
	RunID     string
	Workspace string // absolute path of an existing directory
	Model     string // catalog id, or the model name of an inline Route
	Prompt    string

	// SessionID resumes (or creates) that session; "" starts a new one
	// with a generated ID.
	SessionID string
	// SessionDir holds the session files; "" means ~/.octet/sessions.
	SessionDir   string
	SystemPrompt string
	// Tools selects the registered tools: nil means all, an empty non-nil
	// slice means none.
	Tools []string
	// AllowFileMutation pre-authorizes edit and write (source host_request).
	AllowFileMutation bool
	// DisplayText is presentation metadata for the prompt, stored in the
	// session; the model never sees it.
	DisplayText string
	// Route defines an inline provider route instead of a catalog model.
	Route *InlineRoute
	// History seeds a new session with prior messages.
	History []protocol.HistoryMessage
	// MaxSteps bounds model calls: nil means DefaultMaxSteps, a value must
	// be 1..MaxMaxSteps.
	MaxSteps *int
	// ReasoningEffort is the reasoning the run asks for: nil asks for none
	// (the session's or the agent's selection applies), a value must be
	// "low", "medium" or "high".
	ReasoningEffort *string
	// Media are typed inputs (images, audio) read from the workspace and
	// sent with the prompt, in order (CONTRACT §16).
	Media []protocol.Media
	// ConfirmDelivery makes the run hold its session after its
	// final_result until the consumer says whether the events reached
	// their reader: Wait (they did) or AbandonWith (they did not; the
	// session then records why). A consumer that sets it must call one of
	// them once it has handled the final_result, or the session stays
	// locked. The NDJSON host sets it; without it an abandonment after the
	// final_result is not recorded.
	ConfirmDelivery bool
}

// InlineRoute is a provider route defined in the request (CONTRACT §8).
type InlineRoute struct {
	Provider            string
	BaseURL             string
	APIKey              string
	Headers             map[string]string
	Mode                string // "" means openai-compatible
	ContextWindowTokens *int   // nil means the inline default; a value must be positive
	MaxOutputTokens     *int   // nil means the inline default; a value must be positive
	InputModalities     []string
	Vision              *bool
	SupportsReasoning   *bool
}

// Limits of CONTRACT §8.
const (
	MaxPromptBytes      = 512 << 10
	MaxDisplayTextBytes = 256 << 10
	MaxHeaderEntries    = 64
	MaxHeaderBytes      = 64 << 10
	DefaultMaxSteps     = 50
	MaxMaxSteps         = 1000
)

// engine returns the engine's request for r.
func (r RunRequest) engine() engine.RunRequest {
	return engine.RunRequest{
		RunID: r.RunID, Workspace: r.Workspace, Model: r.Model, Prompt: r.Prompt,
		SessionID: r.SessionID, SessionDir: r.SessionDir, SystemPrompt: r.SystemPrompt,
		Tools: r.Tools, AllowFileMutation: r.AllowFileMutation, DisplayText: r.DisplayText,
		Route: r.Route.engine(), History: r.History, MaxSteps: r.MaxSteps,
		ReasoningEffort: r.ReasoningEffort, Media: r.Media, ConfirmDelivery: r.ConfirmDelivery,
	}
}

// engine returns the engine's route for r (nil for nil).
func (r *InlineRoute) engine() *engine.InlineRoute {
	if r == nil {
		return nil
	}
	e := engine.InlineRoute(*r)
	return &e
}

// RunError is a run refused before it was accepted: no event was emitted,
// and the caller reports a single error final result (CONTRACT §8).
type RunError struct {
	Code    protocol.Code // one of protocol.RunCodes
	Message string
}

func (e *RunError) Error() string { return string(e.Code) + ": " + e.Message }

// runError gives the engine's refusal as the façade's *RunError; any other
// error is returned as it is.
func runError(err error) error {
	var re *engine.RunError
	if errors.As(err, &re) {
		return &RunError{Code: re.Code, Message: re.Message}
	}
	return err
}

// Event is one event of a run's ordered stream. Type is a run event type
// of package protocol (protocol.TypeAccepted … protocol.TypeFinalResult),
// or the Go-only TypeRecoveredOutput; Data, a protocol.Payload, is a
// pointer to its payload type: the type protocol.PayloadFor(Type) returns
// (*protocol.ModelDelta for model_delta), or *RecoveredOutput. Its JSON
// encoding is the event's data object.
type Event = protocol.RunEvent

// RunControl observes and controls one run.
//
// Events delivers the run's events in order, ending with the final_result
// event, and is closed after it. The run waits for the consumer (events are
// never dropped): read Events until it is closed, or call Abandon to stop
// reading.
type RunControl struct {
	rc *engine.RunControl
}

// Events returns the run's ordered event stream.
func (rc *RunControl) Events() <-chan Event { return rc.rc.Events() }

// Cancel stops the run: it ends with status error, code canceled.
func (rc *RunControl) Cancel() { rc.rc.Cancel() }

// Abandon tells the run that nobody reads its events any more (the
// consumer failed): remaining events are discarded and the run is
// canceled.
func (rc *RunControl) Abandon() { rc.rc.Abandon() }

// AbandonWith is Abandon with the reason the events did not reach their
// reader: code (e.g. protocol.CodeOutputTooLarge for an event the wire
// replaced, protocol.CodeOutputFailed for a failed write) and a message. The run
// ends with status error and that code, and its session records it: in
// its run_end when the run had not ended yet, else (with
// RunRequest.ConfirmDelivery) in a second run_end that supersedes the
// first. An empty code is Abandon: the run keeps the status it ends with
// (canceled, most often). The first reason given wins.
func (rc *RunControl) AbandonWith(code protocol.Code, message string) {
	rc.rc.AbandonWith(code, message)
}

// Wait blocks until the run has ended and returns its result. The events
// must be consumed (or abandoned) for the run to end. With
// RunRequest.ConfirmDelivery, calling it confirms that the events reached
// their reader.
func (rc *RunControl) Wait() protocol.FinalResult { return rc.rc.Wait() }

// Queued steering (CONTRACT §15): the application adds user messages to a
// running run. The NDJSON host has no command for it: these are Go API
// controls.

// Kinds of queued messages (QueuedMessage.Kind, and the origin of the
// session's message record).
const (
	KindSteering = "steering"
	KindFollowUp = "follow_up"
)

// ErrMessageInvalid reports an empty, oversized or non-UTF-8 steering
// message or follow-up.
var ErrMessageInvalid = engine.ErrMessageInvalid

// QueuedMessage is a steering message or follow-up the run did not deliver.
type QueuedMessage struct {
	Kind string // KindSteering or KindFollowUp
	Text string
}

// Steer queues a steering message. It is delivered at the next safe
// boundary: after the tool call that is running (the turn's remaining calls
// are then skipped, and the model is told so) or after the model's turn;
// an answer the model gives while steering is pending does not end the run.
// It returns ErrRunEnded once the run has completed or is ending, and
// ErrMessageInvalid for an empty, oversized or non-UTF-8 text.
//
// On a route qualified for native steering (see Native steering in
// docs/steering-and-reasoning.md), an input that comes while the model
// streams goes into its live response instead (response.steer), after a
// durable intent record; at any other time (or when that response has just
// ended) it is queued as above. A native input is delivered once
// (steering_delivered with mode "native"), handed back to the queue when
// the provider refuses it, or left unsettled when its outcome cannot be
// known: the run then ends blocked with unsettled_native_steering and the
// input is never replayed.
// When the intent record cannot be written, nothing is sent and the
// session's write error is returned.
func (rc *RunControl) Steer(text string) error { return rc.rc.Steer(text) }

// FollowUp queues a follow-up: it is delivered when the run would otherwise
// complete, and the run goes on with it. Errors as for Steer.
func (rc *RunControl) FollowUp(text string) error { return rc.rc.FollowUp(text) }

// Undelivered returns the queued messages the run dropped because it ended
// first (steering first, then follow-ups, each in submission order). It is
// complete once Wait has returned.
func (rc *RunControl) Undelivered() []QueuedMessage {
	in := rc.rc.Undelivered()
	if in == nil {
		return nil
	}
	out := make([]QueuedMessage, len(in))
	for i, m := range in {
		out[i] = QueuedMessage(m)
	}
	return out
}

// ReasoningConfig selects the reasoning effort: "" (the route's default),
// "low", "medium" or "high".
//
// Ultra selects the Ultra mode: the effort (Effort, "high" when "") becomes
// a new request baseline instead of a reasoning update, superseding the
// updates before it, and selecting it installs the agent's delegation
// manager, which gives the model the delegate tool (delegation.go) and
// stays installed when a later selection leaves Ultra.
// It needs an observer (Agent.SetObserver); during a run it needs a route
// that declares it ("reasoning_ultra": true in ~/.octet/models.json).
type ReasoningConfig struct {
	Effort string
	Ultra  bool
}

// Reasoning errors.
var (
	ErrReasoningInvalid     = engine.ErrReasoningInvalid
	ErrReasoningUnsupported = engine.ErrReasoningUnsupported
	// ErrReasoningNotQualified: the run's route is not qualified for a
	// reasoning change during a run. A route is when both its model and
	// its endpoint declare reasoning updates ("reasoning_updates": true on
	// the model and on its provider in ~/.octet/models.json; the built-in
	// endpoints declare them, no built-in model does, and inline routes
	// never are). The error's message names the model or the endpoint (or
	// both) that does not. Nothing changed: the effort stays as the run
	// began, and Agent.SetReasoning (between runs) still applies.
	ErrReasoningNotQualified = engine.ErrReasoningNotQualified
	// ErrUltraUnsupported: the run's route does not declare the Ultra mode
	// ("reasoning_ultra": true in ~/.octet/models.json).
	ErrUltraUnsupported = engine.ErrUltraUnsupported
	// ErrObserverRequired: the Ultra mode needs an observation hook
	// (Agent.SetObserver) to report the events of the run and its workers.
	ErrObserverRequired = engine.ErrObserverRequired
	ErrRunEnded         = engine.ErrRunEnded
)

// SetReasoning asks the running run to use cfg from its next model call on.
// It is admitted only on a route qualified by both its model's and its
// endpoint's metadata ("reasoning_updates": true on the model and on its
// provider in ~/.octet/models.json, never guessed from a name; no built-in
// model and no inline route is): elsewhere it returns
// ErrReasoningNotQualified, naming what does not declare them, and changes
// nothing (ErrReasoningUnsupported on a route without reasoning).
//
// On a qualified route, a change between two efforts (neither the route's
// default "") is a reasoning update: the requests keep their reasoning
// baseline, so their cached prefix stays byte-identical, and the
// conversation gets a host message saying the new effort (a developer
// message on Responses, a system message on Chat, a user-turn text block
// on Anthropic Messages), recorded in the session in order. A change to or
// from "" turns reasoning on or off, which no message can do: it changes
// the baseline. Ultra (ErrUltraUnsupported unless the route declares
// "reasoning_ultra", ErrObserverRequired without an observer) changes the
// baseline too, superseding earlier updates; the conversation, reasoning
// blocks included, and the session stay.
//
// A change is admitted at the next safe step boundary (never mid-response),
// is persisted in the session there, and is not a provider acknowledgement.
// On an anthropic-messages route a baseline change that turns thinking on
// or off waits for a boundary where a new assistant turn begins, since the
// API rejects a thinking mode changed inside one, tool-use loops included.
// Pending choices coalesce: the last one before the boundary wins. A change
// still pending when the run ends is recorded in the session, and the
// session's next run starts with it. It fails once the run has ended or is
// ending.
func (rc *RunControl) SetReasoning(ctx context.Context, cfg ReasoningConfig) error {
	return rc.rc.SetReasoning(ctx, engine.ReasoningConfig(cfg))
}
