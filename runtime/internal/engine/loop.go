package engine

import (
	"context"
	"errors"
	"strconv"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
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
	d.initCompaction(system, specs, msgs)
	d.startNative() // env_steer.go
	n := d.native
	unknown := func() (string, string, *protocol.ErrorData) {
		if ctx.Err() != nil {
			// Canceled: the steer's outcome is unknown all the same (the
			// session records it), but the run ends as canceled.
			return fail(protocol.CodeCanceled, "the run was canceled")
		}
		return fsmrun.StatusBlocked, output, &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: unknownNativeMessage}
	}

	for step := 1; ; step++ {
		if step > p.maxSteps {
			return fsmrun.StatusBlocked, output, &protocol.ErrorData{Code: protocol.CodeMaxStepsReached, Message: "the run reached max_steps (" + strconv.Itoa(p.maxSteps) + ") before the model finished"}
		}
		// A step of native steering reads a successor the server already
		// created, or sends the one response.create that must continue a
		// steered response (package steer): neither may change the
		// request's history or baseline first.
		cont := ""
		d.nativeStep = false
		if n != nil {
			cont, n.Cont = n.Cont, ""
			d.nativeStep = n.Next != nil || cont != ""
			n.Allow = step < p.maxSteps // a steer's successor is one more step
		}
		if !d.nativeStep {
			// A safe step boundary: admit a pending reasoning change
			// (reasoning.go).
			if err := d.boundaryReasoning(ctx, step, &msgs); err != nil {
				return writeFailed(err)
			}
			// Compact first when the context is over the budget's threshold.
			if tf := d.compactIfNeeded(ctx, step, &msgs); tf != nil {
				return fail(tf.Code, tf.Msg)
			}
		}
		turn, err := d.modelTurnFitting(ctx, step, &msgs, func(msgs []provider.Message) provider.Request {
			return provider.Request{
				Model: p.model.APIModel, System: system, Messages: msgs, Tools: d.offeredTools(specs),
				MaxOutputTokens: requestOutputCap(p.model), ReasoningEffort: d.rs.Baseline(),
				MaxOutputBytes: provider.OutputLimit(p.model.MaxOutputTokens), CacheKey: cacheKey,
				SpoolDir: p.sess.MediaDir(), NativeSteering: n != nil, ContinueResponse: cont,
			}
		})
		if err != nil {
			var tf *modelcall.Failed
			switch {
			case ctx.Err() != nil:
				return fail(protocol.CodeCanceled, "the run was canceled")
			case errors.As(err, &tf) && tf.Code == protocol.CodeUnsettledNativeSteering:
				return unknown()
			case errors.As(err, &tf):
				return fail(tf.Code, failureMessage(tf))
			}
			return fail(protocol.CodeProviderError, scrub(providerMessage(err), p.key))
		}
		if n != nil {
			// Steering the successor's response.created linked during the
			// call comes before its answer.
			msgs = append(msgs, n.TakeLinked()...)
		}
		outMedia, err := d.commitMedia(step, &turn) // outputmedia.go
		if err != nil {
			return writeFailed(err)
		}
		d.steps++
		d.noteStep(turn, msgs)
		if !turn.UsageReported {
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
		provider.SetOrigin(turn.ReasoningBlocks, string(p.model.Mode), p.model.APIModel)
		// Each call gets an id unique in the conversation and fit for every
		// wire, used alike by tool_start, tool_finish, the session and the
		// next request.
		provider.AssignCallIDs(turn.Calls, step, provider.CallIDs(msgs))
		assistant := provider.Message{
			Role: provider.RoleAssistant, Text: turn.Text, Reasoning: turn.Reasoning,
			ReasoningBlocks: turn.ReasoningBlocks, ToolCalls: turn.Calls, OutputMedia: outMedia,
		}
		cost := d.account(step, turn.Usage)
		if err := p.sess.Append(
			store.Record{Body: store.Message{RunID: p.req.RunID, Message: store.NewMessageV1(assistant)}},
			store.Record{Body: store.Usage{RunID: p.req.RunID, Step: step, Model: p.model.ID, Usage: store.NewUsageV1(turn.Usage), CostUSD: cost.Total}},
		); err != nil {
			return writeFailed(err)
		}
		msgs = append(msgs, assistant)
		output = turn.Text
		if n != nil {
			// A successor's usage is accounted: its intents settle.
			if err := n.Accounted(step); err != nil {
				return writeFailed(err)
			}
			if n.Blocked {
				return unknown()
			}
		}
		if turn.Finish == provider.FinishLength {
			// A tool call cut by the output cap is never executed, and a cut
			// answer is not presented as complete.
			return fail(protocol.CodeOutputIncomplete, "the model's output reached max_output_tokens before it finished")
		}
		// Steering boundaries exist only while another step may follow: a
		// message delivered now is one the model will see. At the last step
		// the queue waits, and the run's end drops it.
		lastStep := step >= p.maxSteps
		if n != nil && len(turn.Calls) == 0 && (n.Follow != nil || n.Unresolved()) {
			// A steer is outstanding: the server creates a successor (the
			// next step reads it) or says it failed (the input is queued).
			successor, err := d.awaitNative(step, false)
			switch {
			case errors.Is(err, errNativeUnknown):
				return unknown()
			case err != nil:
				return writeFailed(err)
			case successor:
				msgs = append(msgs, n.TakeLinked()...)
				continue
			}
		}
		if len(turn.Calls) == 0 {
			// The run would complete: steering, the terminal gate and
			// follow-ups decide whether it goes on (gate.go).
			end, kept := d.wouldStop(ctx, step, &msgs, turn.Text, lastStep)
			if end != nil {
				return end.status, end.output, end.err
			}
			output = kept
			continue
		}
		var b boundaryOutcome
		for i, call := range turn.Calls {
			result := d.runTool(ctx, step, call)
			if err := p.sess.Append(store.Record{Body: store.Message{RunID: p.req.RunID, Message: store.NewMessageV1(result)}}); err != nil {
				return writeFailed(err)
			}
			msgs = append(msgs, result)
			if ctx.Err() != nil {
				return fail(protocol.CodeCanceled, "the run was canceled")
			}
			if i < len(turn.Calls)-1 && !lastStep {
				if b = d.rc.boundary(steering.Input{Trigger: steering.TrAfterTool}); b.skipTools {
					if err := d.skipTools(&msgs, turn.Calls[i+1:]); err != nil {
						return writeFailed(err)
					}
					break
				}
			}
		}
		if n != nil && (n.Follow != nil || n.Unresolved() || n.InPhase(steering.NPending)) {
			// The steered response stopped for these tool outputs: read
			// the steer's outcome (pending, or failed and queued), then
			// the next request is the one response.create that carries
			// the outputs.
			if _, err := d.awaitNative(step, true); errors.Is(err, errNativeUnknown) {
				return unknown()
			} else if err != nil {
				return writeFailed(err)
			}
			if err := n.ToolsDone(); err != nil {
				return writeFailed(err)
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

const defaultSystemPrompt = `You are a coding agent working inside one workspace directory through tools. ` +
	`Paths are relative to the workspace. Read before you edit; make the smallest change that does the job; ` +
	`when a tool call is denied or fails, adapt instead of repeating it. Answer concisely when you are done.`
