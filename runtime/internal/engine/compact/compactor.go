package compact

import (
	"context"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/compaction"
	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Env is what compaction needs of the run it serves (the engine's driver
// satisfies it).
type Env interface {
	// Recover performs an auxiliary operation (a summary, a native
	// compaction) under the recovery machine.
	modelcall.Recoverer
	// Emit sends a streaming event of the run.
	Emit(typ protocol.EventType, data protocol.Payload)
	// Append appends records to the run's session, durably.
	Append(recs ...store.Record) error
	// ModelTurn performs a step's model call under the recovery machine.
	ModelTurn(ctx context.Context, step int, req provider.Request) (modelcall.Turn, error)
	// Provider is the run's provider now (a refreshed credential may
	// replace it): the summarizer's calls go to it.
	Provider() provider.Provider
	// NativeEndpoint is the route's compaction endpoint, when it
	// declares one.
	NativeEndpoint() (provider.Compactor, bool)
	// Conversation is the session's conversation for the run's route,
	// media attached.
	Conversation() ([]provider.Message, error)
	// LatestCompaction is the newest checkpoint of the run's route.
	LatestCompaction() (store.Compaction, bool)
	// ConversationOrdinals are the file-wide ordinals of the message
	// records of the route's conversation after its checkpoint.
	ConversationOrdinals() []int
	// MessageCount is the number of message records of the session.
	MessageCount() int
	// ContextUsage is the usage of the newest step since the newest
	// checkpoint and the number of messages after it.
	ContextUsage() (u provider.Usage, after int, ok bool)
	// RecordAuxUsage puts an auxiliary call's usage in the session's
	// ledger (a usage_uncertainty record when it was not reported).
	RecordAuxUsage(step int, op string, u provider.Usage, reported bool) error
	// DiscardTurn reports a discarded answer as recovered output and
	// records its usage as discarded.
	DiscardTurn(step int, t modelcall.Turn) error
	// NativeBusy says the step is native-steered: it cannot be re-issued.
	NativeBusy() bool
	// Redact redacts the run's credentials from model output.
	Redact(s string) string
	// RedactError scrubs and redacts an error message.
	RedactError(msg string) string
	// FailureMessage is the message a run ending on tf reports.
	FailureMessage(tf *modelcall.Failed) string
}

// Config is what a run's compaction is set up with.
type Config struct {
	System    string              // the run's system prompt (native compaction sends it)
	Tools     []provider.ToolSpec // the tool schemas every request carries
	Window    int64               // the model's context_window_tokens (0: no budget)
	MaxOutput int64               // the model's max_output_tokens (0: not declared)
	OutputCap int                 // the output cap the route's requests take (0: none)
	APIModel  string              // the model the summarizer's requests name
	Workspace string              // file evidence is relative to it
	Route     string              // the route key a native checkpoint records
	Native    bool                // the route has a compaction endpoint
	Tracer    fsm.Tracer          // the run's machines' tracer (nil: off)
}

// Compactor is a run's compaction state: its budget, the context's
// running size, and the compaction machine (fsm/compaction) whose effects
// decide when to compact, retry, hold off or end.
type Compactor struct {
	env      Env
	cfg      Config
	bud      Budget
	overhead int64 // system prompt and tool schemas
	count    contextCount
	m        *compaction.Machine
	step     int // the step of the machine's last check
}

// New sets up budgeting for a run whose conversation is msgs: the usage
// of the newest step since the newest checkpoint plus estimates of the
// messages after it, or, without one (or when that usage is all zeros),
// an estimate of everything.
func New(env Env, cfg Config, msgs []provider.Message) *Compactor {
	c := &Compactor{env: env, cfg: cfg, bud: BudgetOf(cfg.Window, cfg.MaxOutput), overhead: overheadTokens(cfg.System, cfg.Tools)}
	c.m = compaction.New(compaction.Policy{Budget: c.bud.policy(), Native: cfg.Native})
	c.m.SetTracer(cfg.Tracer)
	if u, after, ok := env.ContextUsage(); ok && after <= len(msgs) && usageTokens(u) > 0 {
		c.count.reset(usageTokens(u)+EstimateMessages(msgs[len(msgs)-after:]), len(msgs))
		return c
	}
	c.count.reset(c.overhead+EstimateMessages(msgs), len(msgs))
	return c
}

// Budget is the run's budget.
func (c *Compactor) Budget() Budget { return c.bud }

// State is the compaction machine's state.
func (c *Compactor) State() compaction.State { return c.m.State() }

// NoteStep records a successful step's usage as the context's size; the
// assistant message that is appended next is in it. A usage of zero tokens
// (a gateway that sends a usage object of zeros) says nothing about the
// context: the count goes on from its estimates.
func (c *Compactor) NoteStep(t modelcall.Turn, msgs []provider.Message) {
	if t.UsageReported && usageTokens(t.Usage) > 0 {
		c.count.reset(usageTokens(t.Usage), len(msgs)+1)
	}
}

// bound cuts an event's message as the engine's messages are cut.
func bound(s string) string { return textutil.Truncate(s, 1024-len(textutil.Ellipsis)) }

// OverflowAdvice completes an overflow failure message with what the
// user can do.
func OverflowAdvice(what string) string {
	return what + "; start a new session, shorten the prompt or the files the agent reads, or choose a model with a larger context window"
}

// canceledFailure is the failure of a compaction the run's cancel
// interrupted.
func canceledFailure() *modelcall.Failed {
	return &modelcall.Failed{Code: protocol.CodeCanceled, Msg: "the run was canceled"}
}

// IsOverflowCode reports whether a failed turn's code is an overflow
// signal.
func IsOverflowCode(code protocol.Code) bool {
	return code == protocol.CodeContextOverflow || code == protocol.CodeRequestTooLarge
}
