package engine

import (
	"context"
	"errors"

	"octet.dev/host/fsm/compaction"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Overflow recovery: a step the provider refuses as too
// long (context_overflow, or a 413), one that stops because the window
// filled up (Anthropic's model_context_window_exceeded), or a successful
// one whose input alone passed the window (a silent overflow: the server
// cut the context) is compacted once and re-issued. An overflow is not a
// retry: it never uses the retry budget. A second overflow in the same
// logical turn (step) ends the run with context_overflow.

// isOverflowCode reports whether a failed turn's code is an overflow
// signal.
func isOverflowCode(code string) bool {
	return code == protocol.CodeContextOverflow || code == protocol.CodeRequestTooLarge
}

// modelTurnFitting performs the step's model turn on msgs (build makes
// the request), compacting and re-issuing it once when it overflows.
func (d *driver) modelTurnFitting(ctx context.Context, step int, msgs *[]provider.Message, build func([]provider.Message) provider.Request) (modelcall.Turn, error) {
	for compacted := false; ; compacted = true {
		t, err := d.modelTurn(ctx, step, build(*msgs))
		var tf *modelcall.Failed
		// A step of native steering cannot be re-issued (the successor
		// was created by the server, the continuation is one request), nor
		// can a step whose steer awaits its outcome: its silent overflow
		// does not count (compaction.Overflowed), so past this check a
		// silent overflow is one of a step that may be re-issued.
		silent := err == nil && d.silentOverflow(t)
		failed := err != nil && errors.As(err, &tf) && isOverflowCode(tf.Code) && ctx.Err() == nil
		if !compaction.Overflowed(failed, silent, silent && d.nativeBusy()) {
			return t, err
		}
		_, native := d.nativeCompactor()
		_, can := d.plan(*msgs)
		pol := compaction.Policy{Native: native}
		decision := pol.OnOverflow(compacted, can)
		if decision == compaction.OverflowStands {
			// Nothing to summarize (the newest messages alone are too
			// large): the outcome stands as the provider reported it.
			return t, err
		}
		if silent {
			// The answer is discarded as a replaced attempt's is; the
			// call was billed all the same.
			d.discardTurn(step, t)
			if werr := d.p.sess.Append(store.Record{Body: store.Usage{RunID: d.p.req.RunID, Operation: operationAssistantTurn, Discarded: true, Step: step, Model: d.p.model.ID, Usage: store.NewUsageV1(t.Usage),
				CostUSD: priceUsage(d.p.model.Cost, protocol.Usage(t.Usage)).Total}}); werr != nil {
				return modelcall.Turn{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + werr.Error()}
			}
		}
		if decision == compaction.OverflowEnd {
			return modelcall.Turn{}, &modelcall.Failed{Code: protocol.CodeContextOverflow, Msg: overflowAdvice("the conversation is still too large for the model's context window after one compaction")}
		}
		tokens := d.cmp.count.current(*msgs)
		_, ok, ctf := d.runCompaction(ctx, step, msgs, protocol.CompactionOverflow, tokens)
		if ctf != nil {
			return modelcall.Turn{}, ctf
		}
		if !ok && pol.OnRefusal(true, tokens) == compaction.RefusalEnd {
			return modelcall.Turn{}, &modelcall.Failed{Code: protocol.CodeContextOverflow, Msg: overflowAdvice("the conversation is too large for the model's context window and could not be compacted")}
		}
	}
}

// silentOverflow reports a successful step that overflowed all the same:
// it stopped for the window, or its input passed the window.
func (d *driver) silentOverflow(t modelcall.Turn) bool {
	if t.Finish == provider.FinishContextWindow {
		return true
	}
	w := d.cmp.bud.window
	return w > 0 && t.UsageReported && t.Usage.InputTokens > w
}

// discardTurn reports a discarded answer's text and reasoning as
// recovered output, as recovery does for a replaced attempt.
func (d *driver) discardTurn(step int, t modelcall.Turn) {
	if t.Text != "" {
		d.stream(protocol.TypeRecoveredOutput, &protocol.RecoveredOutput{Step: step, Channel: protocol.ChannelText, Text: t.Text})
	}
	if t.Reasoning != "" {
		d.stream(protocol.TypeRecoveredOutput, &protocol.RecoveredOutput{Step: step, Channel: protocol.ChannelReasoning, Text: t.Reasoning})
	}
}
