package engine

import (
	"context"
	"errors"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/fsm/turn"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// loop is the agent loop: model steps and tool calls until the model stops,
// the step limit is hit, or a failure.
func (d *driver) loop(ctx context.Context) (status, output string, errInfo *protocol.ErrorData) {
	p := d.p
	fail := func(code protocol.Code, msg string) (string, string, *protocol.ErrorData) {
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
		recs = append(recs, store.Record{Body: store.Message{Message: store.NewMessageV1(provider.Message{Role: provider.Role(h.Role), Text: h.Content})}})
	}
	// Media bytes are stored beside the session before the message that
	// refers to them.
	for _, m := range p.media {
		if _, err := p.sess.PutMedia(m.Data); err != nil {
			return fail(protocol.CodeSessionWriteFailed, "the session's media could not be written: "+err.Error())
		}
	}
	recs = append(recs, store.Record{Body: store.Message{RunID: p.req.RunID, Message: store.NewMessageV1(provider.Message{Role: provider.RoleUser, Text: p.req.Prompt, Media: p.media})}})
	if err := p.sess.Append(recs...); err != nil {
		return writeFailed(err)
	}
	msgs, err := d.sessionMessages()
	if err != nil {
		return fail(protocol.CodeSessionCorrupt, err.Error())
	}
	specs := make([]provider.ToolSpec, len(p.tools))
	for i, t := range p.tools {
		specs[i] = t.Spec
	}
	system := defaultSystemPrompt
	if p.resourcePrompt != "" {
		system += "\n\n" + p.resourcePrompt
	}
	if p.req.SystemPrompt != "" {
		system += "\n\n" + p.req.SystemPrompt
	}
	cacheKey := promptCacheKey(p.sess.ID(), p.model)
	d.initCompaction(system, specs, msgs)
	d.startNative() // env_steer.go
	n := d.native
	// The step boundaries are fsm/turn's: the loop reports each fact and
	// performs the effects it is given, in order; a failed effect is
	// reported instead of the rest of its batch.
	writeFact := func(err error) turn.Fact {
		return turn.Fact{Kind: turn.Fail, Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
	}
	unknown := func() turn.Fact {
		// Canceled: the steer's outcome is unknown all the same (the
		// session records it), but the run ends as canceled.
		return turn.Fact{Kind: turn.Fail, Code: protocol.CodeUnsettledNativeSteering, Msg: unknownNativeMessage, Canceled: ctx.Err() != nil}
	}
	// toolsOutstanding: the steered response stopped for the step's tool
	// outputs, and a steer's outcome (pending, or failed and queued) is
	// to be read before the one response.create that carries them.
	toolsOutstanding := func() bool {
		return n != nil && (n.Follow != nil || n.Unresolved() || n.InPhase(steering.NPending))
	}
	var (
		ts      = turn.New(p.maxSteps)
		fact    = turn.Fact{Kind: turn.Begin}
		cont    string          // the steered response the step continues
		answer  modelcall.Turn  // the step's answer
		b       boundaryOutcome // the step's steering boundary
		gateEnd *runEnd         // the would-stop point's end
		effs    []turn.Effect
	)
	for {
		if fact.Kind == turn.Begin && n != nil {
			// A step of native steering reads a successor the server
			// already created, or sends the one response.create that must
			// continue a steered response (package steer): neither may
			// change the request's history or baseline first.
			fact.Native = n.Next != nil || n.Cont != ""
		}
		var err error
		begin := fact.Kind == turn.Begin
		if ts, effs, err = turn.Next(ts, fact); err != nil {
			panic(err) // the loop only reports facts of the phase it is in
		}
		if begin && ts.Phase == turn.Calling {
			cont, d.nativeStep, b = "", false, boundaryOutcome{}
			if n != nil {
				cont, n.Cont = n.Cont, ""
				d.nativeStep = fact.Native
				n.Allow = !ts.LastStep() // a steer's successor is one more step
			}
		}
		fact = turn.Fact{Kind: turn.Begin}
		step := ts.Step
	batch:
		for _, e := range effs {
			switch e.Kind {
			case turn.Settle:
				switch o := e.Outcome; {
				case o.Gate:
					return gateEnd.status, gateEnd.output, gateEnd.err
				case o.Status == fsmrun.StatusError:
					return fail(o.Code, o.Msg)
				default:
					return o.Status, output, &protocol.ErrorData{Code: o.Code, Message: o.Msg}
				}
			case turn.AdmitReasoning:
				// A safe step boundary: admit a pending reasoning change
				// (reasoning.go).
				if err := d.boundaryReasoning(ctx, step, &msgs); err != nil {
					fact = writeFact(err)
				}
			case turn.Compact:
				// Compact first when the context is over the budget's
				// threshold.
				if tf := d.compactIfNeeded(ctx, step, &msgs); tf != nil {
					fact = turn.Fact{Kind: turn.Fail, Code: tf.Code, Msg: tf.Msg}
				}
			case turn.CallModel:
				answer, fact = d.stepModel(ctx, step, &msgs, &output, func(msgs []provider.Message) provider.Request {
					return provider.Request{
						Model: p.model.APIModel, System: system, Messages: msgs, Tools: d.offeredTools(specs),
						MaxOutputTokens: requestOutputCap(p.model), ReasoningEffort: d.rs.Baseline(),
						MaxOutputBytes: provider.OutputLimit(p.model.MaxOutputTokens), CacheKey: cacheKey,
						SpoolDir: p.sess.MediaDir(), NativeSteering: n != nil, ContinueResponse: cont,
					}
				}, unknown)
			case turn.AwaitNative:
				// A steer is outstanding: the server creates a successor
				// (the next step reads it) or says it failed (the input is
				// queued). With tool calls, the next request is the one
				// response.create that carries their outputs.
				successor, err := d.awaitNative(step, e.WithCalls)
				switch {
				case errors.Is(err, errNativeUnknown):
					fact = unknown()
				case err != nil:
					fact = writeFact(err)
				case e.WithCalls:
					if err := n.ToolsDone(); err != nil {
						fact = writeFact(err)
					}
				default:
					if successor {
						msgs = append(msgs, n.TakeLinked()...)
					}
					fact = turn.Fact{Kind: turn.Awaited, Successor: successor}
				}
			case turn.AskGate:
				// The run would complete: steering, the terminal gate and
				// follow-ups decide whether it goes on (gate.go).
				end, kept := d.wouldStop(ctx, step, &msgs, answer.Text, e.LastStep)
				fact = turn.Fact{Kind: turn.Gate}
				if end != nil {
					gateEnd, fact.End, fact.Status = end, true, end.status
					if end.err != nil {
						fact.Code, fact.Msg = end.err.Code, end.err.Message
					}
				} else {
					output = kept
				}
			case turn.RunTool:
				result := d.runTool(ctx, step, answer.Calls[e.Index])
				if err := p.sess.Append(store.Record{Body: store.Message{RunID: p.req.RunID, Message: store.NewMessageV1(result)}}); err != nil {
					fact = writeFact(err)
					break
				}
				msgs = append(msgs, result)
				fact = turn.Fact{Kind: turn.ToolDone, Canceled: ctx.Err() != nil}
				if e.Index == len(answer.Calls)-1 && !fact.Canceled {
					fact.Outstanding = toolsOutstanding()
				}
			case turn.SteerAfterTool:
				b = d.rc.boundary(steering.Input{Trigger: steering.TrAfterTool})
				fact = turn.Fact{Kind: turn.Steered, Skip: b.skipTools}
				if b.skipTools {
					fact.Outstanding = toolsOutstanding()
				}
			case turn.SkipTools:
				if err := d.skipTools(&msgs, answer.Calls[e.Index:]); err != nil {
					fact = writeFact(err)
				}
			case turn.SteerAfterTurn:
				b = d.rc.boundary(steering.Input{Trigger: steering.TrAfterTurn})
			case turn.Deliver:
				if err := d.deliver(e.Step, &msgs, b.deliver); err != nil {
					fact = writeFact(err)
				}
			}
			if fact.Kind == turn.Fail {
				break batch
			}
		}
	}
}

// stepModel performs the step's model call (build makes its request) and
// commits its answer: media, usage, the assistant message. It returns the
// answer and the fact for fsm/turn: Answer, or Fail (unknown makes the
// fact of a native steer whose outcome became unknown). output becomes
// the answer's text once it is committed.
func (d *driver) stepModel(ctx context.Context, step int, msgs *[]provider.Message, output *string, build func([]provider.Message) provider.Request, unknown func() turn.Fact) (modelcall.Turn, turn.Fact) {
	p, n := d.p, d.native
	failed := func(code protocol.Code, msg string) (modelcall.Turn, turn.Fact) {
		return modelcall.Turn{}, turn.Fact{Kind: turn.Fail, Code: code, Msg: msg}
	}
	writeFailed := func(err error) (modelcall.Turn, turn.Fact) {
		return failed(protocol.CodeSessionWriteFailed, "the session could not be written: "+err.Error())
	}
	t, err := d.modelTurnFitting(ctx, step, msgs, build)
	if err != nil {
		var tf *modelcall.Failed
		switch {
		case ctx.Err() != nil:
			return modelcall.Turn{}, turn.Fact{Kind: turn.Fail, Canceled: true}
		case errors.As(err, &tf) && tf.Code == protocol.CodeUnsettledNativeSteering:
			return modelcall.Turn{}, unknown()
		case errors.As(err, &tf):
			return failed(tf.Code, failureMessage(tf))
		}
		return failed(protocol.CodeProviderError, scrub(providerMessage(err), p.key))
	}
	if n != nil {
		// Steering the successor's response.created linked during the
		// call comes before its answer.
		*msgs = append(*msgs, n.TakeLinked()...)
	}
	outMedia, err := d.commitMedia(step, &t) // outputmedia.go
	if err != nil {
		return writeFailed(err)
	}
	d.steps++
	d.noteStep(t, *msgs)
	if !t.UsageReported {
		// The call was billed but the server never said how much: the
		// figures from here on are known subtotals, exactly as after a
		// discarded attempt (CONTRACT §12), never zeros presented as fact.
		if err := p.sess.RecordUsageUncertainty(p.model.Provider, p.model.ID, operationAssistantTurn); err != nil {
			return failed(protocol.CodeSessionWriteFailed, "the usage uncertainty record could not be written: "+err.Error())
		}
		d.markUncertain()
	}
	// The blocks record the wire and model they came from, so that a
	// session resumed on another wire never sends them there.
	provider.SetOrigin(t.ReasoningBlocks, string(p.model.Mode), p.model.APIModel)
	// Each call gets an id unique in the conversation and fit for every
	// wire, used alike by tool_start, tool_finish, the session and the
	// next request.
	provider.AssignCallIDs(t.Calls, step, provider.CallIDs(*msgs))
	assistant := provider.Message{
		Role: provider.RoleAssistant, Text: t.Text, Reasoning: t.Reasoning,
		ReasoningBlocks: t.ReasoningBlocks, ToolCalls: t.Calls, OutputMedia: outMedia,
	}
	cost := d.account(step, t.Usage)
	if err := p.sess.Append(
		store.Record{Body: store.Message{RunID: p.req.RunID, Message: store.NewMessageV1(assistant)}},
		store.Record{Body: store.Usage{RunID: p.req.RunID, Step: step, Model: p.model.ID, Usage: store.NewUsageV1(t.Usage), CostUSD: cost.Total}},
	); err != nil {
		return writeFailed(err)
	}
	*msgs = append(*msgs, assistant)
	*output = t.Text
	if n != nil {
		// A successor's usage is accounted: its intents settle.
		if err := n.Accounted(step); err != nil {
			return writeFailed(err)
		}
		if n.Blocked {
			return t, unknown()
		}
	}
	f := turn.Fact{Kind: turn.Answer, Calls: len(t.Calls), Length: t.Finish == provider.FinishLength}
	if n != nil && len(t.Calls) == 0 {
		// A steer is outstanding: its outcome is read before the run may
		// stop (a successor, or the input queued).
		f.Outstanding = n.Follow != nil || n.Unresolved()
	}
	return t, f
}

const defaultSystemPrompt = `You are a coding agent working inside one workspace directory through tools. ` +
	`Paths are relative to the workspace. Read before you edit; make the smallest change that does the job; ` +
	`when a tool call is denied or fails, adapt instead of repeating it. Answer concisely when you are done.`
