package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// The terminal gate (issue 11 §6, after Claude Code's and Codex's Stop
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
var ErrGateOutsideRun = errors.New("runtime: a ModelGate reviews candidates only inside a run (set it with Agent.SetTerminalGate, or delegate to it with the context Review was given)")

// SetTerminalGate sets the terminal gate of runs started afterwards; nil
// removes it. A gate set here takes precedence over a terminal_gate of the
// operator's settings (~/.octet/settings.json or a trusted workspace's),
// which builds a ModelGate for runs of an agent without one. A *ModelGate
// is checked here: its Model and Instructions are required.
func (a *Agent) SetTerminalGate(g TerminalGate) error {
	if mg, ok := g.(*ModelGate); ok {
		if mg == nil {
			g = nil
		} else if err := mg.check(); err != nil {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gate = g
	return nil
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

func (g *ModelGate) check() error {
	if err := policy.CheckTerminalGate("ModelGate", g.Model, g.Instructions); err != nil {
		return errors.New("runtime: " + err.Error())
	}
	return nil
}

// gateRunKey carries the reviewing run's driver in a gate's context.
type gateRunKey struct{}

// Review asks the gate's model about the candidate. It works only with the
// context a run gave its terminal gate (else ErrGateOutsideRun), and on
// the goroutine that called the gate's Review: its recovery events are
// the run's.
func (g *ModelGate) Review(ctx context.Context, in GateInput) (GateDecision, error) {
	d, _ := ctx.Value(gateRunKey{}).(*driver)
	if d == nil {
		return GateDecision{}, ErrGateOutsideRun
	}
	return d.askModelGate(ctx, g, in)
}

// runGate is a run's terminal gate and the routes of its model gates,
// resolved once per run and closed with it.
type runGate struct {
	gate   TerminalGate
	routes map[*ModelGate]*gateRoute
	// rejections counts the candidates rejected since the run began or
	// the gate last accepted one.
	rejections int
}

// gateRoute is a model gate's resolved route.
type gateRoute struct {
	model catalog.Model
	prov  provider.Provider
	key   string
	red   *redactor
}

func (r *runGate) close() {
	if r == nil {
		return
	}
	for _, gr := range r.routes {
		if c, ok := gr.prov.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}

// prepareGate picks the run's gate: the agent's, else the one the settings
// configure. A ModelGate's route is resolved now, so that a gate model
// missing from the catalog or without credentials refuses the run before
// anything ran (with the code of that refusal; the message names the gate).
func (a *Agent) prepareGate(ctx context.Context, p *prepared, setting *policy.TerminalGate) *RunError {
	a.mu.Lock()
	g := a.gate
	a.mu.Unlock()
	if g == nil && setting != nil {
		g = &ModelGate{Model: setting.Model, Instructions: setting.Instructions}
	}
	if g == nil {
		return nil
	}
	p.gate = &runGate{gate: g, routes: map[*ModelGate]*gateRoute{}}
	if mg, ok := g.(*ModelGate); ok {
		if _, err := a.gateRoute(ctx, p.gate, mg); err != nil {
			return err
		}
	}
	return nil
}

// gateRoute resolves a model gate's route once per run.
func (a *Agent) gateRoute(ctx context.Context, rg *runGate, g *ModelGate) (*gateRoute, *RunError) {
	if r := rg.routes[g]; r != nil {
		return r, nil
	}
	if err := g.check(); err != nil {
		return nil, refuse(protocol.CodeConfigInvalid, "%s", err.Error())
	}
	tmp := &prepared{req: RunRequest{Model: g.Model, Route: g.Route}}
	if err := a.resolveRoute(ctx, tmp); err != nil {
		return nil, &RunError{Code: err.Code, Message: bound("the terminal gate's model " + strconv.Quote(textutil.Truncate(g.Model, 128)) + ": " + err.Message)}
	}
	r := &gateRoute{model: tmp.model, prov: tmp.prov, key: tmp.key, red: tmp.red}
	rg.routes[g] = r
	return r, nil
}

// runEnd is how the loop ends.
type runEnd struct {
	status, output string
	err            *protocol.ErrorData
}

// wouldStop handles a step that answered without tool calls: the point
// where the run would end. In order: pending steering is delivered and the
// run goes on (no gate); else the gate reviews the candidate; once it
// accepts (or without a gate), queued follow-ups are delivered and the run
// goes on; else the run completes with the candidate. At the last step
// nothing is delivered. It returns the run's end, or nil and the output
// the loop keeps while it goes on ("" once the candidate was rejected:
// it must never become the output).
func (d *driver) wouldStop(ctx context.Context, step int, msgs *[]provider.Message, candidate string, lastStep bool) (*runEnd, string) {
	p := d.p
	writeFailed := func(err error, output string) (*runEnd, string) {
		return &runEnd{fsmrun.StatusError, output, &protocol.ErrorData{Code: protocol.CodeSessionWriteFailed,
			Message: bound(p.red.String("the session could not be written: " + err.Error()))}}, ""
	}
	// accepted ends the run with the candidate or delivers what is queued.
	accepted := func() (*runEnd, string) {
		if lastStep {
			return &runEnd{fsmrun.StatusCompleted, candidate, nil}, ""
		}
		b := d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn, Answered: true})
		if b.complete {
			return &runEnd{fsmrun.StatusCompleted, candidate, nil}, ""
		}
		if err := d.deliver(step+1, msgs, b.deliver); err != nil {
			return writeFailed(err, candidate)
		}
		return nil, candidate
	}
	if p.gate == nil || (!lastStep && d.rc.steeringPending()) {
		return accepted()
	}
	dec, end := d.review(ctx, step, candidate)
	if end != nil {
		return end, ""
	}
	switch dec.Verdict {
	case GateAccept:
		d.p.gate.rejections = 0
		return accepted()
	case GateStop:
		return &runEnd{fsmrun.StatusBlocked, "", &protocol.ErrorData{Code: protocol.CodeTerminalGateStopped,
			Message: bound("the terminal gate stopped the run: " + dec.Reason)}}, ""
	}
	d.p.gate.rejections++
	d.stream(protocol.TypeCandidateRejected, &protocol.CandidateRejected{Step: step, Attempt: d.p.gate.rejections, MaxAttempts: MaxGateRejections, Reason: dec.Reason})
	if d.p.gate.rejections >= MaxGateRejections {
		return &runEnd{fsmrun.StatusBlocked, "", &protocol.ErrorData{Code: protocol.CodeTerminalGateExhausted,
			Message: bound("the terminal gate rejected " + strconv.Itoa(MaxGateRejections) + " candidate answers in a row; the last reason: " + dec.Reason)}}, ""
	}
	if lastStep {
		// No step is left to act on the reason: the loop ends the run
		// with max_steps_reached, without the rejected candidate.
		return nil, ""
	}
	// The reason is the model's next message, then any steering that came
	// meanwhile (the turn goes on: follow-ups wait for a candidate the gate
	// accepts).
	reason := provider.Message{Role: provider.RoleUser, Text: gateFeedback(dec.Reason, d.p.gate.rejections)}
	if err := p.sess.Append(store.Record{Body: store.Message{RunID: p.req.RunID, Origin: originTerminalGate, Message: store.NewMessageV1(reason)}}); err != nil {
		return writeFailed(err, "")
	}
	*msgs = append(*msgs, reason)
	b := d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn})
	if err := d.deliver(step+1, msgs, b.deliver); err != nil {
		return writeFailed(err, "")
	}
	return nil, ""
}

// originTerminalGate marks the session message that carries a rejection's
// reason to the model.
const originTerminalGate = protocol.OperationTerminalGate

// gateFeedback is the user message that carries a rejection's reason.
func gateFeedback(reason string, attempt int) string {
	return "The host's terminal gate did not accept your last answer as final (rejection " + strconv.Itoa(attempt) + " of at most " +
		strconv.Itoa(MaxGateRejections) + "). Its reason:\n" + reason + "\nContinue the task, then answer again."
}

// review asks the run's gate about the candidate and checks its decision.
// A failure is the run's end: canceled, session_write_failed (a recovery
// record could not be written), or terminal_gate_failed.
func (d *driver) review(ctx context.Context, step int, candidate string) (GateDecision, *runEnd) {
	in := GateInput{RunID: d.p.req.RunID, Step: step, CandidateText: candidate, Attempt: d.p.gate.rejections + 1, Prompt: d.p.req.Prompt}
	dec, err := d.p.gate.gate.Review(context.WithValue(ctx, gateRunKey{}, d), in)
	failed := func(msg string) (GateDecision, *runEnd) {
		return GateDecision{}, &runEnd{fsmrun.StatusError, "", &protocol.ErrorData{Code: protocol.CodeTerminalGateFailed,
			Message: bound(d.sanitize("the terminal gate failed: " + msg))}}
	}
	if err != nil {
		var tf *modelcall.Failed
		switch {
		case ctx.Err() != nil:
			return GateDecision{}, &runEnd{fsmrun.StatusError, "", &protocol.ErrorData{Code: protocol.CodeCanceled, Message: "the run was canceled"}}
		case errors.As(err, &tf) && tf.Code == protocol.CodeSessionWriteFailed:
			return GateDecision{}, &runEnd{fsmrun.StatusError, "", &protocol.ErrorData{Code: tf.Code, Message: bound(d.sanitize(tf.Msg))}}
		case errors.As(err, &tf):
			return failed("its model call failed (" + tf.Code + "): " + failureMessage(tf))
		}
		return failed(err.Error())
	}
	dec.Reason = d.sanitize(dec.Reason)
	switch dec.Verdict {
	case GateAccept:
	case GateReject, GateStop:
		if dec.Reason == "" {
			return failed("it answered " + string(dec.Verdict) + " without a reason")
		}
	default:
		return failed("it answered the unknown verdict " + strconv.Quote(textutil.Truncate(string(dec.Verdict), 64)))
	}
	return dec, nil
}

// sanitize makes a gate's text fit for events, the session and the model:
// valid UTF-8, every credential the run knows redacted (its route's and
// its gate models'), control characters other than newline and tab
// replaced by spaces, trimmed, and cut to MaxGateReasonBytes.
func (d *driver) sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = scrub(d.p.red.String(s), d.p.key)
	if d.p.gate != nil {
		for _, r := range d.p.gate.routes {
			s = scrub(r.red.String(s), r.key)
		}
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return ' '
		}
		return r
	}, s)
	return textutil.Fit(strings.TrimSpace(s), MaxGateReasonBytes)
}

// steeringPending reports whether steering waits to be delivered.
func (rc *RunControl) steeringPending() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.queue.SteeringPending()
}

// gateSystemPrompt frames a model gate's instructions.
const gateSystemPrompt = `You are the terminal gate of a coding agent. The agent has given a candidate final answer to its task; ` +
	`you decide whether that answer may end its run, judging only by the operator's instructions below. ` +
	`Do not carry on with the task or do it yourself. ` +
	`Answer with exactly one JSON object and nothing else: {"decision":"accept"} to let the answer end the run; ` +
	`{"decision":"reject","reason":"..."} to send the agent back to work, where the reason is its next instruction ` +
	`(say what is missing or wrong); or {"decision":"stop","reason":"..."} to end the run without an answer ` +
	`(only when going on cannot help).

Operator instructions:
`

// gateMessage is the user message a model gate reviews.
func gateMessage(in GateInput) string {
	return "The agent's task:\n<task>\n" + in.Prompt + "\n</task>\n\nIts candidate final answer (attempt " + strconv.Itoa(in.Attempt) +
		"):\n<candidate>\n" + in.CandidateText + "\n</candidate>"
}

// gateAnswer is a model gate's committed call.
type gateAnswer struct {
	text          string
	usage         provider.Usage
	usageReported bool
}

// askModelGate makes a model gate's call under the recovery machine
// (operation terminal_gate), records its usage, and reads its verdict.
func (d *driver) askModelGate(ctx context.Context, g *ModelGate, in GateInput) (GateDecision, error) {
	if d.p.gate == nil {
		// A run without a gate does not review; this is a ModelGate
		// called with a context that escaped its review.
		return GateDecision{}, ErrGateOutsideRun
	}
	r, rerr := d.a.gateRoute(ctx, d.p.gate, g)
	if rerr != nil {
		return GateDecision{}, errors.New(rerr.Code + ": " + rerr.Message)
	}
	req := provider.Request{
		Model: r.model.APIModel, System: gateSystemPrompt + g.Instructions,
		Messages:        []provider.Message{{Role: provider.RoleUser, Text: gateMessage(in)}},
		MaxOutputTokens: requestOutputCap(r.model), MaxOutputBytes: provider.OutputLimit(r.model.MaxOutputTokens),
	}
	ans, err := recoverCall(ctx, d, operation[gateAnswer]{
		name: operationTerminalGate, endpoint: r.model.Provider, model: r.model.ID,
		call: func(ctx context.Context) (gateAnswer, error) { return r.call(ctx, req) },
	})
	if err != nil {
		return GateDecision{}, err
	}
	if ans.usageReported {
		u := store.Usage{RunID: d.p.req.RunID, Step: in.Step, Model: r.model.ID, Operation: operationTerminalGate,
			Usage: store.NewUsageV1(ans.usage), CostUSD: callCost(r.model.Cost, ans.usage)}
		if err := d.p.sess.Append(store.Record{Body: u}); err != nil {
			return GateDecision{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
		}
	} else {
		// Billed, but of unknown size: the figures are subtotals from now
		// on, as for a model step.
		if err := d.p.sess.RecordUsageUncertainty(r.model.Provider, r.model.ID, operationTerminalGate); err != nil {
			return GateDecision{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the usage uncertainty record could not be written: " + err.Error()}
		}
		d.markUncertain()
	}
	return parseVerdict(ans.text)
}

// call makes one attempt of a model gate's call. Nothing of it is streamed
// as run output; an error's message loses the gate route's credentials.
func (r *gateRoute) call(ctx context.Context, req provider.Request) (gateAnswer, error) {
	var a gateAnswer
	s, err := r.prov.Stream(ctx, req)
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

func (r *gateRoute) clean(err error) error {
	var pe *provider.Error
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	c := *pe
	c.Message = scrub(r.red.String(c.Message), r.key)
	return &c
}

// parseVerdict reads a model gate's answer: the JSON object from its first
// "{" to its last "}".
func parseVerdict(text string) (GateDecision, error) {
	i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if i < 0 || j < i {
		return GateDecision{}, errors.New("the gate model's answer holds no JSON object: " + strconv.Quote(textutil.Truncate(text, 200)))
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(text[i:j+1]), &v, json.RejectUnknownMembers(false)); err != nil {
		return GateDecision{}, errors.New("the gate model's answer is not a verdict object: " + textutil.Truncate(err.Error(), 200))
	}
	verdict := GateVerdict(strings.ToLower(strings.TrimSpace(v.Decision)))
	switch verdict {
	case GateAccept, GateReject, GateStop:
	default:
		return GateDecision{}, errors.New("the gate model's decision " + strconv.Quote(textutil.Truncate(v.Decision, 64)) + ` is not "accept", "reject" or "stop"`)
	}
	return GateDecision{Verdict: verdict, Reason: v.Reason}, nil
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
