package gate

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// A model gate asks a model. Its call goes to its own route, with its own
// instructions, under the run's recovery settings (retry budget, max
// network wait): transient failures emit provider_operation_retry with
// operation "terminal_gate", and a call that still fails ends the run with
// terminal_gate_failed. Its usage enters the session's usage ledger tagged
// with the operation.
//
// The model gets the run's prompt and the candidate and must answer with
// one JSON object: {"decision":"accept"}, {"decision":"reject","reason":…}
// or {"decision":"stop","reason":…}; text around the object is ignored.
// Anything else fails the gate.

// operation names the model gate's calls (CONTRACT §12).
const operation = protocol.OperationTerminalGate

// systemPrompt frames a model gate's instructions.
const systemPrompt = `You are the terminal gate of a coding agent. The agent has given a candidate final answer to its task; ` +
	`you decide whether that answer may end its run, judging only by the operator's instructions below. ` +
	`Do not carry on with the task or do it yourself. ` +
	`Answer with exactly one JSON object and nothing else: {"decision":"accept"} to let the answer end the run; ` +
	`{"decision":"reject","reason":"..."} to send the agent back to work, where the reason is its next instruction ` +
	`(say what is missing or wrong); or {"decision":"stop","reason":"..."} to end the run without an answer ` +
	`(only when going on cannot help).

Operator instructions:
`

// message is the user message a model gate reviews.
func message(in Input) string {
	return "The agent's task:\n<task>\n" + in.Prompt + "\n</task>\n\nIts candidate final answer (attempt " + strconv.Itoa(in.Attempt) +
		"):\n<candidate>\n" + in.CandidateText + "\n</candidate>"
}

// answer is a model gate's committed call.
type answer struct {
	text          string
	usage         provider.Usage
	usageReported bool
}

// AskModel asks model gate m about the candidate: its call under the
// recovery machine of the run whose review ctx comes from (operation
// terminal_gate), its usage recorded, its verdict read. It works only with
// the context a run gave its terminal gate (else ErrOutsideRun), and on
// the goroutine that called the gate's Review: its recovery events are the
// run's.
func AskModel(ctx context.Context, m Model, in Input) (Decision, error) {
	rv, ok := ctx.Value(reviewKey{}).(reviewing)
	if !ok {
		return Decision{}, ErrOutsideRun
	}
	s, env := rv.s, rv.env
	r, err := s.Route(ctx, m)
	if err != nil {
		return Decision{}, errors.New(err.Error())
	}
	req := provider.Request{
		Model: r.Model.APIModel, System: systemPrompt + m.GateInstructions(),
		Messages:        []provider.Message{{Role: provider.RoleUser, Text: message(in)}},
		MaxOutputTokens: r.OutputCap, MaxOutputBytes: provider.OutputLimit(r.Model.MaxOutputTokens),
	}
	ans, err := modelcall.Recover(ctx, env, modelcall.Operation[answer]{
		Name: operation, Endpoint: r.Model.Provider, Model: r.Model.ID,
		Call: func(ctx context.Context) (answer, error) { return r.call(ctx, req) },
	})
	if err != nil {
		return Decision{}, err
	}
	if ans.usageReported {
		u := store.Usage{RunID: env.RunID(), Step: in.Step, Model: r.Model.ID, Operation: operation,
			Usage: store.NewUsageV1(ans.usage), CostUSD: callCost(r.Model.Cost, ans.usage)}
		if err := env.Append(store.Record{Body: u}); err != nil {
			return Decision{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
		}
	} else {
		// Billed, but of unknown size: the figures are subtotals from now
		// on, as for a model step.
		if err := env.RecordUsageUncertainty(r.Model.Provider, r.Model.ID, operation); err != nil {
			return Decision{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the usage uncertainty record could not be written: " + err.Error()}
		}
	}
	return parseVerdict(ans.text)
}

// call makes one attempt of a model gate's call. Nothing of it is streamed
// as run output; an error's message loses the gate route's credentials.
func (r *Route) call(ctx context.Context, req provider.Request) (answer, error) {
	var a answer
	s, err := r.Prov.Stream(ctx, req)
	if err != nil {
		return a, r.clean(err)
	}
	defer s.Close()
	var text strings.Builder
	for s.Next() {
		switch ev := s.Event(); ev.Kind {
		case provider.EventText:
			text.WriteString(ev.Text)
		case provider.EventUsage:
			a.usage, a.usageReported = provider.Reported(ev.Usage)
		}
	}
	a.text = text.String()
	return a, r.clean(s.Err())
}

func (r *Route) clean(err error) error {
	var pe *provider.Error
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	c := *pe
	c.Message = r.Redact(c.Message)
	return &c
}

// parseVerdict reads a model gate's answer: the JSON object from its first
// "{" to its last "}".
func parseVerdict(text string) (Decision, error) {
	i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if i < 0 || j < i {
		return Decision{}, errors.New("the gate model's answer holds no JSON object: " + strconv.Quote(textutil.Truncate(text, 200)))
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(text[i:j+1]), &v, json.RejectUnknownMembers(false)); err != nil {
		return Decision{}, errors.New("the gate model's answer is not a verdict object: " + textutil.Truncate(err.Error(), 200))
	}
	verdict := Verdict(strings.ToLower(strings.TrimSpace(v.Decision)))
	switch verdict {
	case Accept, Reject, Stop:
	default:
		return Decision{}, errors.New("the gate model's decision " + strconv.Quote(textutil.Truncate(v.Decision, 64)) + ` is not "accept", "reject" or "stop"`)
	}
	return Decision{Verdict: verdict, Reason: v.Reason}, nil
}

// callCost prices one auxiliary call's usage, as account prices a step.
func callCost(pr *catalog.Cost, u provider.Usage) float64 {
	if pr == nil {
		return 0
	}
	fresh := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(fresh)*pr.Input + float64(u.OutputTokens)*pr.Output +
		float64(u.CacheReadTokens)*pr.CacheRead + float64(u.CacheWriteTokens)*pr.CacheWrite) / 1e6
}
