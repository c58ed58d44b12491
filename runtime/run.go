package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/recovery"
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/provider"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/internal/tools"
)

// RunControl observes and controls one run.
//
// Events delivers the run's events in order, ending with the final_result
// event, and is closed after it. The run waits for the consumer (events are
// never dropped): read Events until it is closed, or call Abandon to stop
// reading.
type RunControl struct {
	events  chan Event
	done    chan struct{}
	abandon chan struct{}
	once    sync.Once
	cancel  context.CancelFunc
	result  protocol.FinalResult

	// closeEvents closes events once (early with ConfirmDelivery).
	closeEvents sync.Once
	// confirm is closed by Wait or Abandon*: the consumer has handled the
	// events (RunRequest.ConfirmDelivery).
	confirm     chan struct{}
	confirmOnce sync.Once
	// abandonCode and abandonMsg say why the consumer abandoned the
	// events (AbandonWith); guarded by mu.
	abandonCode, abandonMsg string

	supportsReasoning bool
	reasoningUpdates  bool // the route is qualified for changes during the run
	reasoningUltra    bool // and for the Ultra mode
	agent             *Agent
	modelID           string
	mu                sync.Mutex
	pendingReasoning  *ReasoningConfig
	reasoningClosed   bool // the run is ending: SetReasoning is refused
	queue             steeringQueue
}

// Events returns the run's ordered event stream.
func (rc *RunControl) Events() <-chan Event { return rc.events }

// Cancel stops the run: it ends with status error, code canceled.
func (rc *RunControl) Cancel() { rc.cancel() }

// Abandon tells the run that nobody reads its events any more (the
// consumer failed): remaining events are discarded and the run is
// canceled.
func (rc *RunControl) Abandon() { rc.AbandonWith("", "") }

// AbandonWith is Abandon with the reason the events did not reach their
// reader: code (e.g. protocol.CodeOutputTooLarge for an event the wire
// replaced, protocol.CodeOutputFailed for a failed write) and a message. The run
// ends with status error and that code, and its session records it: in
// its run_end when the run had not ended yet, else (with
// RunRequest.ConfirmDelivery) in a second run_end that supersedes the
// first. An empty code is Abandon: the run keeps the status it ends with
// (canceled, most often). The first reason given wins.
func (rc *RunControl) AbandonWith(code, message string) {
	if code != "" {
		rc.mu.Lock()
		if rc.abandonCode == "" {
			rc.abandonCode, rc.abandonMsg = code, message
		}
		rc.mu.Unlock()
	}
	rc.once.Do(func() { close(rc.abandon) })
	rc.cancel()
	rc.confirmed()
}

// abandoned returns the reason AbandonWith gave, "" when none.
func (rc *RunControl) abandoned() (code, message string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.abandonCode, rc.abandonMsg
}

func (rc *RunControl) confirmed() { rc.confirmOnce.Do(func() { close(rc.confirm) }) }

// Wait blocks until the run has ended and returns its result. The events
// must be consumed (or abandoned) for the run to end. With
// RunRequest.ConfirmDelivery, calling it confirms that the events reached
// their reader.
func (rc *RunControl) Wait() protocol.FinalResult {
	rc.confirmed()
	<-rc.done
	return rc.result
}

// Run validates req and starts the run. A request that fails validation
// returns a *RunError and no RunControl: nothing was accepted (CONTRACT
// §8). ctx bounds the whole run.
func (a *Agent) Run(ctx context.Context, req RunRequest) (*RunControl, error) {
	return a.start(ctx, req, nil)
}

// start starts a run, a worker run (delegation.go) when w is not nil.
func (a *Agent) start(ctx context.Context, req RunRequest, w *worker) (*RunControl, error) {
	p, rerr := a.prepare(ctx, req)
	if rerr != nil {
		return nil, rerr
	}
	ctx, cancel := context.WithCancel(ctx)
	rc := &RunControl{events: make(chan Event, 64), done: make(chan struct{}), abandon: make(chan struct{}), confirm: make(chan struct{}), cancel: cancel,
		supportsReasoning: p.model.SupportsReasoning, reasoningUpdates: p.model.ReasoningUpdates, reasoningUltra: p.model.ReasoningUltra,
		agent: a, modelID: p.model.ID, queue: steeringQueue{m: steering.New()}}
	trace := transitionTracer(ctx, a.log, req.RunID)
	rc.queue.m.SetTracer(trace)
	a.runs.Add(1)
	go func() {
		defer a.runs.Done()
		defer close(rc.done)
		defer rc.closeEvents.Do(func() { close(rc.events) })
		defer cancel()
		defer p.close()
		d := &driver{a: a, p: p, rc: rc, m: fsmrun.New(), recovery: a.recoveryConfig(), trace: trace}
		d.m.SetTracer(trace)
		if w != nil {
			d.parent, d.recovery = w.parent, w.recovery
		}
		rc.result = d.drive(ctx)
	}()
	return rc, nil
}

// driver runs one accepted run on its own goroutine, the owner of the run
// machine.
type driver struct {
	a  *Agent
	p  *prepared
	rc *RunControl
	m  *fsmrun.Machine

	steps     int
	toolCalls int
	changed   []string
	total     protocol.Totals
	uncertain bool            // usage figures are known subtotals (sticky)
	recovery  recovery.Config // snapshot at run start
	effort    string          // the reasoning effort the model calls use (the pinned baseline)
	rs        reasoningState  // the updates after it (reasoning.go)
	parent    string          // the delegating run's id for a worker (delegation.go)
	workers   int             // worker runs started (delegation.go)
	reauthed  int             // the step whose Codex 401 refreshed the credential (codex.go)
	trace     fsm.Tracer      // the run's machines' tracer (nil: tracing off)
}

// send delivers an event unless the consumer abandoned the run.
func (d *driver) send(ev Event) {
	d.observe(ev)
	select {
	case d.rc.events <- ev:
	case <-d.rc.abandon:
	}
}

// fire applies a lifecycle input and sends the events it calls for; data
// is the streaming event for TrStream, the result for TrFinalize.
func (d *driver) fire(in fsmrun.Input, data Event) {
	effects, err := d.m.Fire(in)
	if err != nil {
		panic(err) // the driver only fires permitted inputs
	}
	for _, e := range effects {
		switch e.Kind {
		case fsmrun.EffAccepted, fsmrun.EffStream, fsmrun.EffFinal:
			d.send(data)
		case fsmrun.EffStarted:
			d.send(Event{protocol.TypeStarted, &protocol.Started{}})
		case fsmrun.EffSettled:
			d.send(Event{protocol.TypeSettled, &protocol.Settled{Status: e.Status}})
		}
	}
}

func (d *driver) stream(typ string, data any) {
	d.fire(fsmrun.Input{Trigger: fsmrun.TrStream}, Event{typ, data})
}

func (d *driver) drive(ctx context.Context) protocol.FinalResult {
	p := d.p
	names := make([]string, len(p.tools))
	for i, t := range p.tools {
		names[i] = t.spec.Name
	}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrAccept}, Event{protocol.TypeAccepted, &protocol.Accepted{
		Model: protocol.ModelInfo{ID: p.model.ID, Provider: p.model.Provider, Name: p.model.Name,
			ProviderMode: string(p.model.Mode), ContextWindowTokens: p.model.ContextWindowTokens,
			MaxOutputTokens: p.model.MaxOutputTokens, InputModalities: p.model.EffectiveModalities(),
			Vision: p.model.Vision(), Audio: p.model.Audio(), SupportsReasoning: p.model.SupportsReasoning},
		SessionFile:         p.sess.Path(),
		Tools:               names,
		EffectiveToolPolicy: p.policy.EffectivePolicy,
		Skills:              p.skillNames,
	}})
	d.fire(fsmrun.Input{Trigger: fsmrun.TrStart}, Event{})
	d.reportExtensions()
	d.sessionUncertain(p.sess) // sticky across resume: every later run says so again

	status, output, errInfo := d.contain(ctx)
	d.rc.closeSteering() // what is still queued is dropped, before settled
	if code, msg := d.rc.abandoned(); code != "" {
		// Nobody saw the run's events after the one that failed: it ends
		// as what its consumer was told, whatever the loop made of the
		// cancel.
		status, errInfo = fsmrun.StatusError, &protocol.ErrorData{Code: code, Message: bound(msg)}
	}

	// A reasoning change no boundary admitted (held back by an Anthropic
	// tool-use loop, or set after the last boundary) is not dropped: it is
	// recorded, so that the session's next run starts with it.
	end := store.RunEnd{RunID: p.req.RunID, Status: status}
	if errInfo != nil {
		end.Code = errInfo.Code
	}
	ends := []store.Record{{Body: end}}
	pending, commitReasoning := d.endReasoning()
	if pending != nil {
		ends = append([]store.Record{*pending}, ends...)
	}
	switch err := p.sess.Append(ends...); {
	case err != nil:
		if errInfo == nil {
			status, errInfo = fsmrun.StatusError, &protocol.ErrorData{Code: protocol.CodeSessionWriteFailed, Message: "the session could not be written: " + bound(err.Error())}
		}
	case pending != nil:
		commitReasoning()
	}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrSettle, Status: status}, Event{})
	path := p.sess.Path()
	changed := d.changed
	if changed == nil {
		changed = []string{}
	}
	res := protocol.FinalResult{Status: status, Output: output, Error: errInfo, FilesChanged: changed, ToolCalls: d.toolCalls, Steps: d.steps, SessionFile: &path}
	d.fire(fsmrun.Input{Trigger: fsmrun.TrFinalize}, Event{protocol.TypeFinalResult, &res})
	if !p.req.ConfirmDelivery {
		return res
	}
	// The session stays open until the consumer says whether the last
	// events reached their reader: if they did not, a second run_end says
	// so (the first one said what the run itself ended with).
	d.rc.closeEvents.Do(func() { close(d.rc.events) })
	<-d.rc.confirm
	code, msg := d.rc.abandoned()
	if code == "" || code == end.Code {
		return res
	}
	corrected := res
	corrected.Status, corrected.Error = fsmrun.StatusError, &protocol.ErrorData{Code: code, Message: bound(msg)}
	if err := p.sess.Append(store.Record{Body: store.RunEnd{RunID: p.req.RunID, Status: corrected.Status, Code: code}}); err != nil {
		d.a.log.LogAttrs(context.Background(), slog.LevelError, "the session could not record that the run's events were abandoned",
			slog.String("run_id", p.req.RunID), slog.Any("error", err))
	}
	return corrected
}

// withMediaBytes attaches to every media reference of msgs its bytes: this
// run's from memory, earlier runs' from the session's media objects.
func (d *driver) withMediaBytes(msgs []provider.Message) ([]provider.Message, error) {
	have := make(map[string][]byte, len(d.p.media))
	for _, m := range d.p.media {
		have[m.SHA256] = m.Data
	}
	for i := range msgs {
		if len(msgs[i].Media) == 0 {
			continue
		}
		media := slices.Clone(msgs[i].Media) // the session's copy stays as it is
		for j := range media {
			data, ok := have[media[j].SHA256]
			if !ok {
				var err error
				if data, err = d.p.sess.Media(media[j].SHA256); err != nil {
					return nil, fmt.Errorf("the session's media could not be read: %w", err)
				}
				have[media[j].SHA256] = data
			}
			media[j].Data = data
		}
		msgs[i].Media = media
	}
	return msgs, nil
}

// contain runs the loop and turns a panic inside it (a bug in a decoder or a
// tool) into an internal_error result, so that the run still ends with its
// one final_result and the host serves on; the stack goes to the log. The
// loop's deferred cleanups (shell process groups, descriptors) have run by
// then.
func (d *driver) contain(ctx context.Context) (status, output string, errInfo *protocol.ErrorData) {
	defer func() {
		if v := recover(); v != nil {
			// The panic value may quote provider output: redacted like it.
			pv := scrub(d.p.red.String(fmt.Sprint(v)), d.p.key)
			d.a.log.LogAttrs(ctx, slog.LevelError, "the run failed on an internal error",
				slog.String("run_id", d.p.req.RunID), slog.String("panic", pv), slog.String("stack", string(debug.Stack())))
			status, errInfo = fsmrun.StatusError, &protocol.ErrorData{Code: protocol.CodeInternalError, Message: bound("internal error: " + pv)}
		}
	}()
	return d.loop(ctx)
}

// loop is the agent loop: model steps and tool calls until the model stops,
// the step limit is hit, or a failure.
func (d *driver) loop(ctx context.Context) (status, output string, errInfo *protocol.ErrorData) {
	p := d.p
	fail := func(code, msg string) (string, string, *protocol.ErrorData) {
		return fsmrun.StatusError, output, &protocol.ErrorData{Code: code, Message: bound(p.red.String(msg))}
	}
	writeFailed := func(err error) (string, string, *protocol.ErrorData) {
		return fail(protocol.CodeSessionWriteFailed, "the session could not be written: "+err.Error())
	}
	// The prompt and its context are durable before the first model call.
	recs := []store.Record{
		{Body: store.RunStart{RunID: p.req.RunID, DisplayText: p.req.DisplayText}},
		{Body: store.ModelChange{Model: p.model.ID, Provider: p.model.Provider, ProviderMode: string(p.model.Mode)}},
	}
	// The effort (reasoning.go); a change is persisted so a resume
	// restores it.
	if rec := d.startReasoning(); rec != nil {
		recs = append(recs, *rec)
	}
	for _, h := range p.req.History {
		recs = append(recs, store.Record{Body: store.Message{Message: provider.Message{Role: provider.Role(h.Role), Text: h.Content}}})
	}
	// Media bytes are stored beside the session before the message that
	// refers to them.
	for _, m := range p.media {
		if _, err := p.sess.PutMedia(m.Data); err != nil {
			return fail(protocol.CodeSessionWriteFailed, "the session's media could not be written: "+err.Error())
		}
	}
	recs = append(recs, store.Record{Body: store.Message{RunID: p.req.RunID, Message: provider.Message{Role: provider.RoleUser, Text: p.req.Prompt, Media: p.media}}})
	if err := p.sess.Append(recs...); err != nil {
		return writeFailed(err)
	}
	msgs, err := d.withMediaBytes(p.sess.Messages())
	if err != nil {
		return fail(protocol.CodeSessionCorrupt, err.Error())
	}
	specs := make([]provider.ToolSpec, len(p.tools))
	for i, t := range p.tools {
		specs[i] = t.spec
	}
	system := defaultSystemPrompt
	if p.resourcePrompt != "" {
		system += "\n\n" + p.resourcePrompt
	}
	if p.req.SystemPrompt != "" {
		system += "\n\n" + p.req.SystemPrompt
	}
	cacheKey := promptCacheKey(p.sess.ID(), p.model)

	for step := 1; ; step++ {
		if step > p.maxSteps {
			return fsmrun.StatusBlocked, output, &protocol.ErrorData{Code: protocol.CodeMaxStepsReached, Message: "the run reached max_steps (" + strconv.Itoa(p.maxSteps) + ") before the model finished"}
		}
		// A safe step boundary: admit a pending reasoning change
		// (reasoning.go).
		if err := d.boundaryReasoning(ctx, step, &msgs); err != nil {
			return writeFailed(err)
		}
		turn, err := d.modelTurn(ctx, step, provider.Request{
			Model: p.model.APIModel, System: system, Messages: msgs, Tools: d.offeredTools(specs),
			MaxOutputTokens: requestOutputCap(p.model), ReasoningEffort: d.effort,
			MaxOutputBytes: provider.OutputLimit(p.model.MaxOutputTokens), CacheKey: cacheKey,
		})
		if err != nil {
			var tf *errTurnFailed
			switch {
			case ctx.Err() != nil:
				return fail(protocol.CodeCanceled, "the run was canceled")
			case errors.As(err, &tf):
				return fail(tf.code, failureMessage(tf))
			}
			return fail(protocol.CodeProviderError, scrub(providerMessage(err), p.key))
		}
		d.steps++
		if !turn.usageReported {
			// The call was billed but the server never said how much: the
			// figures from here on are known subtotals, exactly as after a
			// discarded attempt (CONTRACT §12), never zeros presented as fact.
			if err := p.sess.RecordUsageUncertainty(p.model.Provider, p.model.ID, operationAssistantTurn); err != nil {
				return fail(protocol.CodeSessionWriteFailed, "the usage uncertainty record could not be written: "+err.Error())
			}
			d.markUncertain()
		}
		// The blocks record the wire and model they came from, so that a
		// session resumed on another wire never sends them there.
		provider.SetOrigin(turn.reasoningBlocks, string(p.model.Mode), p.model.APIModel)
		// Each call gets an id unique in the conversation and fit for every
		// wire, used alike by tool_start, tool_finish, the session and the
		// next request.
		provider.AssignCallIDs(turn.calls, step, provider.CallIDs(msgs))
		assistant := provider.Message{
			Role: provider.RoleAssistant, Text: turn.text, Reasoning: turn.reasoning,
			ReasoningBlocks: turn.reasoningBlocks, ToolCalls: turn.calls,
		}
		cost := d.account(step, turn.usage)
		if err := p.sess.Append(
			store.Record{Body: store.Message{RunID: p.req.RunID, Message: assistant}},
			store.Record{Body: store.Usage{RunID: p.req.RunID, Step: step, Model: p.model.ID, Usage: turn.usage, CostUSD: cost.Total}},
		); err != nil {
			return writeFailed(err)
		}
		msgs = append(msgs, assistant)
		output = turn.text
		if turn.finish == provider.FinishLength {
			// A tool call cut by the output cap is never executed, and a cut
			// answer is not presented as complete.
			return fail(protocol.CodeOutputIncomplete, "the model's output reached max_output_tokens before it finished")
		}
		// Steering boundaries exist only while another step may follow: a
		// message delivered now is one the model will see. At the last step
		// the queue waits, and the run's end drops it.
		lastStep := step >= p.maxSteps
		if len(turn.calls) == 0 {
			// The run would complete: steering, the terminal gate and
			// follow-ups decide whether it goes on (gate.go).
			end, kept := d.wouldStop(ctx, step, &msgs, turn.text, lastStep)
			if end != nil {
				return end.status, end.output, end.err
			}
			output = kept
			continue
		}
		var b boundaryOutcome
		for i, call := range turn.calls {
			result := d.runTool(ctx, step, call)
			if err := p.sess.Append(store.Record{Body: store.Message{RunID: p.req.RunID, Message: result}}); err != nil {
				return writeFailed(err)
			}
			msgs = append(msgs, result)
			if ctx.Err() != nil {
				return fail(protocol.CodeCanceled, "the run was canceled")
			}
			if i < len(turn.calls)-1 && !lastStep {
				if b = d.rc.boundary(steering.Input{Trigger: steering.TrAfterTool}); b.skipTools {
					if err := d.skipTools(&msgs, turn.calls[i+1:]); err != nil {
						return writeFailed(err)
					}
					break
				}
			}
		}
		if !b.skipTools && !lastStep {
			b = d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn})
		}
		if err := d.deliver(step+1, &msgs, b.deliver); err != nil {
			return writeFailed(err)
		}
	}
}

// admitsReasoning reports whether a change to effort may apply to the next
// model call, whose conversation is msgs. Anthropic's extended thinking
// cannot be turned on or off in the middle of an assistant turn, and a
// tool-use loop is part of the turn: the API rejects a request whose
// thinking mode differs from the one the turn began with ("When thinking is
// enabled, a final assistant message must start with a thinking block").
// On that wire an effort of "" sends no thinking and every other effort
// sends it (messages.setThinking), so a change between "" and an effort
// waits for a call that begins a new assistant turn. A change of effort
// with thinking on (budget_tokens or output_config.effort) is allowed
// mid-turn, and the other wires take any change at once.
func (d *driver) admitsReasoning(effort string, msgs []provider.Message) bool {
	if d.p.model.Mode != catalog.ModeAnthropicMessages || (effort == "") == (d.effort == "") {
		return true
	}
	return beginsAssistantTurn(msgs)
}

// beginsAssistantTurn reports whether a model call on msgs begins a new
// assistant turn: the conversation ends with user messages and no tool
// result follows the last assistant message, or those user messages
// include a run's prompt (NewTurn: the wire closes a loop a previous run
// left before it). A message delivered right after tool results (steering
// in a tool-use loop) does not begin one: the Anthropic wire sends it in
// the same user message as those results, so the loop, and the turn, go
// on.
func beginsAssistantTurn(msgs []provider.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case provider.RoleUser:
			if msgs[i].NewTurn {
				return true
			}
		case provider.RoleTool:
			return false
		case provider.RoleAssistant:
			return i < len(msgs)-1
		}
	}
	return true
}

const defaultSystemPrompt = `You are a coding agent working inside one workspace directory through tools. ` +
	`Paths are relative to the workspace. Read before you edit; make the smallest change that does the job; ` +
	`when a tool call is denied or fails, adapt instead of repeating it. Answer concisely when you are done.`

// turn is one model call's committed result.
type turn struct {
	text, reasoning string
	reasoningBlocks []provider.ReasoningBlock
	calls           []provider.ToolCall
	usage           provider.Usage
	usageReported   bool // the server sent usage figures for this call
	finish          string
}

func (d *driver) callModel(ctx context.Context, step int, req provider.Request) (turn, error) {
	var t turn
	s, err := d.p.prov.Stream(ctx, req)
	if err != nil {
		var again bool
		if again, err = d.reauthCodex(ctx, step, err); again {
			s, err = d.p.prov.Stream(ctx, req)
		}
	}
	if err != nil {
		return t, err
	}
	defer s.Close()
	if d.lifecycleOn() {
		// The answer's first bytes (its headers) are here.
		d.lifecycle(protocol.LifecycleReady, nil)
	}
	var text strings.Builder
	var reasoning provider.ReasoningCollector
	// Echoed credentials are redacted before any delta goes out; a
	// credential split across deltas is held back until it is whole
	// (redact.go).
	textRed, reasonRed := stream{r: d.p.red}, stream{r: d.p.red}
	for s.Next() {
		ev := s.Event()
		reasoning.Add(ev)
		switch ev.Kind {
		case provider.EventText:
			if out := textRed.Push(ev.Text); out != "" || ev.Text == "" {
				text.WriteString(out)
				d.stream(protocol.TypeModelDelta, &protocol.ModelDelta{Step: step, Channel: protocol.ChannelText, Text: out})
			}
		case provider.EventReasoning:
			if out := reasonRed.Push(ev.Text); out != "" {
				d.stream(protocol.TypeModelDelta, &protocol.ModelDelta{Step: step, Channel: protocol.ChannelReasoning, Text: out})
			}
		case provider.EventToolCall:
			t.calls = append(t.calls, d.p.red.call(ev.ToolCall))
		case provider.EventUsage:
			t.usage, t.usageReported = ev.Usage, true
		case provider.EventFinish:
			t.finish = ev.FinishReason
		}
	}
	if out := textRed.Flush(); out != "" {
		text.WriteString(out)
		d.stream(protocol.TypeModelDelta, &protocol.ModelDelta{Step: step, Channel: protocol.ChannelText, Text: out})
	}
	if out := reasonRed.Flush(); out != "" {
		d.stream(protocol.TypeModelDelta, &protocol.ModelDelta{Step: step, Channel: protocol.ChannelReasoning, Text: out})
	}
	// On failure the partial text is returned too: it becomes recovered
	// output when recovery discards the attempt.
	t.text, t.reasoning, t.reasoningBlocks = text.String(), d.p.red.String(reasoning.Text()), d.p.red.blocks(reasoning.Blocks())
	return t, s.Err()
}

// failureMessage explains a turn recovery gave up on.
func failureMessage(tf *errTurnFailed) string {
	switch tf.code {
	case "retries_exhausted":
		return "the retry budget is exhausted: " + tf.msg
	case "network_wait_exceeded":
		return "the provider was unreachable for longer than the maximum network wait; last failure: " + tf.msg
	}
	return tf.msg
}

func providerMessage(err error) string {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return "the provider call failed: " + pe.Error()
	}
	return "the provider call failed: " + err.Error()
}

// account prices one step's usage and emits model_step.
func (d *driver) account(step int, u provider.Usage) protocol.StepCost {
	usage := protocol.Usage(u)
	if usage.TotalTokens == 0 {
		usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	}
	var c protocol.StepCost
	if pr := d.p.model.Cost; pr != nil {
		// InputTokens counts cached tokens too (provider.Usage); price
		// each part at its own rate.
		fresh := max(usage.InputTokens-usage.CacheReadTokens-usage.CacheWriteTokens, 0)
		c = protocol.StepCost{
			Input:      float64(fresh) * pr.Input / 1e6,
			Output:     float64(usage.OutputTokens) * pr.Output / 1e6,
			CacheRead:  float64(usage.CacheReadTokens) * pr.CacheRead / 1e6,
			CacheWrite: float64(usage.CacheWriteTokens) * pr.CacheWrite / 1e6,
			Currency:   pr.Currency,
		}
		c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	}
	t := &d.total
	t.Usage.InputTokens += usage.InputTokens
	t.Usage.OutputTokens += usage.OutputTokens
	t.Usage.CacheReadTokens += usage.CacheReadTokens
	t.Usage.CacheWriteTokens += usage.CacheWriteTokens
	t.Usage.ReasoningTokens += usage.ReasoningTokens
	t.Usage.TotalTokens += usage.TotalTokens
	t.Cost.Input += c.Input
	t.Cost.Output += c.Output
	t.Cost.CacheRead += c.CacheRead
	t.Cost.CacheWrite += c.CacheWrite
	t.Cost.Total += c.Total
	t.Cost.Currency = c.Currency
	d.stream(protocol.TypeModelStep, &protocol.ModelStep{Step: step, Model: d.p.model.ID, Usage: usage, Cost: c, Cumulative: *t, UsageUncertain: d.uncertain})
	return c
}

// runTool executes one tool call under the policy and returns the tool
// result message for the model. A denied or failed call is reported to
// the model as an error; the run goes on (CONTRACT §9–§10).
func (d *driver) runTool(ctx context.Context, step int, call provider.ToolCall) provider.Message {
	d.toolCalls++
	args := []byte(call.Arguments)
	if len(strings.TrimSpace(call.Arguments)) == 0 {
		args = []byte("{}") // some servers send "" for a call without arguments
	}
	argValue := jsontext.Value(args)
	isObject := argValue.IsValid() && argValue.Kind() == '{'
	if !isObject {
		argValue, _ = jsontext.AppendQuote(nil, trunc(call.Arguments, 4096))
	}
	if call.ArgumentsDropped > 0 {
		// Too large for any frame: the decoder dropped them, and
		// tool_start says so in their place.
		isObject = false
		argValue, _ = jsontext.AppendQuote(nil, droppedArgsMessage(call.ArgumentsDropped))
	}
	d.stream(protocol.TypeToolStart, &protocol.ToolStart{Step: step, CallID: call.ID, Tool: call.Name, Arguments: argValue})

	reply := func(fin *protocol.ToolFinish) provider.Message {
		// A tool's output may hold a credential too (a file the model read).
		fin.Output = d.p.red.String(fin.Output)
		if fin.Error != nil {
			fin.Error.Message = d.p.red.String(fin.Error.Message)
		}
		d.stream(protocol.TypeToolFinish, fin)
		msg := provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: fin.Output}
		if fin.Error != nil {
			msg.IsError = true
			msg.Text = "error " + fin.Error.Code + ": " + fin.Error.Message
			if fin.Output != "" { // a failed command's output matters to the model
				msg.Text += "\n" + fin.Output
			}
		}
		return msg
	}
	fail := func(code, msg string) provider.Message {
		return reply(&protocol.ToolFinish{CallID: call.ID, Tool: call.Name, Error: &protocol.ErrorData{Code: code, Message: bound(msg)}})
	}

	if call.Name == DelegateTool {
		return d.runDelegate(ctx, call, args, isObject, reply, fail)
	}
	var def *toolDef
	for i := range d.p.tools {
		if d.p.tools[i].spec.Name == call.Name {
			def = &d.p.tools[i]
		}
	}
	var decision policy.Decision
	if def == nil {
		decision = d.p.policy.Unknown()
	} else {
		decision = d.p.policy.Decide(call.Name, def.effect)
	}
	if !decision.Allowed {
		d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
		return fail(decision.DenialCode, denialMessage(call.Name, decision.DenialCode))
	}
	if call.ArgumentsDropped > 0 {
		return fail(tools.CodeInvalidArguments, droppedArgsMessage(call.ArgumentsDropped))
	}
	if !isObject {
		return fail(tools.CodeInvalidArguments, "the arguments are not a JSON object")
	}
	env := tools.Env{Root: d.p.root, MaxOutputBytes: int(d.p.policy.MaxOutputBytes.Value), Guard: d.p.guard, Skills: d.p.skills.Resolve}
	// Malformed arguments end the call before it is announced as allowed;
	// a path refused by a workspace gate (confinement, link refusal,
	// protected path) is a policy denial with the same code.
	if def.effect == policy.EffectProcess {
		if _, err := parseBashArgs(args); err != nil {
			return fail(tools.CodeInvalidArguments, err.Error())
		}
	} else if err := tools.Gate(env, call.Name, args); err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			return fail(tools.CodeInvalidArguments, err.Error())
		}
		if code, ok := gateDenial(te.Code); ok {
			d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: policy.Deny(decision, code)})
		}
		return fail(te.Code, te.Message)
	}
	// Every gate has passed: the allowed evidence goes out now. The tool
	// still opens every path beneath the workspace descriptor, so a link or
	// escape that appears after the gate fails the call with the same code.
	d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
	if def.effect == policy.EffectProcess {
		return reply(d.runBash(ctx, call, args))
	}
	res, err := tools.Run(ctx, env, call.Name, args)
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) {
			return fail(te.Code, te.Message)
		}
		return fail(tools.CodeIOError, err.Error())
	}
	for _, c := range res.Changed {
		if !slices.Contains(d.changed, c) {
			d.changed = append(d.changed, c)
		}
	}
	return reply(&protocol.ToolFinish{CallID: call.ID, Tool: call.Name, OK: true, Output: res.Output, Truncated: res.Truncated})
}

// gateDenial maps a tool error of a workspace gate to its denial code.
func gateDenial(code string) (string, bool) {
	switch code {
	case tools.CodePathOutsideWorkspace:
		return protocol.CodePathOutsideWorkspace, true
	case tools.CodeSymlinkRefused:
		return protocol.CodeSymlinkRefused, true
	case tools.CodeProtectedPath:
		return protocol.CodeProtectedPath, true
	}
	return "", false
}

// droppedArgsMessage explains a call whose arguments went over
// provider.MaxToolArgBytes.
func droppedArgsMessage(size int) string {
	return "the arguments are " + strconv.Itoa(size) + " bytes, over the limit of " +
		strconv.Itoa(provider.MaxToolArgBytes) + " bytes for one call; they were dropped"
}

func denialMessage(tool, code string) string {
	switch code {
	case protocol.CodeUnknownTool:
		return "there is no tool named " + strconv.Quote(trunc(tool, 64)) + " in this run"
	case protocol.CodeMutationNotAuthorized:
		return "file changes are not authorized for this run"
	case protocol.CodeProcessNotEnabled:
		return "running commands is not enabled by the operator of this host"
	case protocol.CodeShellUnavailable:
		return "no shell is available on this host"
	}
	return "the call is not allowed by the host's policy"
}
