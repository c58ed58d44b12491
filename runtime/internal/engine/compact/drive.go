package compact

import (
	"context"
	"errors"

	"octet.dev/host/fsm/compaction"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/provider"
)

// The run's compaction as the machine of fsm/compaction drives it: the
// engine's threshold check and model calls fire its triggers, and its
// effects say whether to compact (locally or natively), call, re-issue,
// hold off or end the run with context_overflow.
//
// Overflow recovery (CONTRACT §17): a step the provider refuses as too
// long (context_overflow, or a 413), one that stops because the window
// filled up (Anthropic's model_context_window_exceeded), or a successful
// one whose input alone passed the window (a silent overflow: the server
// cut the context) is compacted once and re-issued. An overflow is not a
// retry: it never uses the retry budget. A second overflow in the same
// logical turn (step) ends the run with context_overflow.

// fire applies an input; the engine only fires inputs the machine
// permits where it stands.
func (c *Compactor) fire(in compaction.Input) []compaction.Effect {
	effs, err := c.m.Fire(in)
	if err != nil {
		panic(err)
	}
	return effs
}

// begin positions the machine at step: a machine still calling from an
// earlier step saw that step go on to another (the spec's CallTools: tool
// results, or a steering message or follow-up after an answer).
func (c *Compactor) begin(step int) {
	if step > c.step && c.m.State().Phase == compaction.PCalling {
		c.fire(compaction.Input{Trigger: compaction.TrTools})
	}
	c.step = step
}

// Check is the threshold check before a model call: it compacts when the
// context is over the threshold (and past the hold-off a refused
// compaction left). A refused compaction lets the run go on while the
// request still fits the window; it ends the run (context_overflow) when
// it does not. A local compaction with nothing older than the newest keep
// tokens to summarize does not run: the request goes out, and if it
// overflows, the overflow path reports it.
func (c *Compactor) Check(ctx context.Context, step int, msgs *[]provider.Message) *modelcall.Failed {
	c.begin(step)
	pol := c.m.Policy()
	in := compaction.Input{Trigger: compaction.TrCheck}
	var pl cutPlan
	if pol.Budget.On() {
		in.Tokens = c.count.current(*msgs)
		if !pol.Native && pol.Due(in.Tokens, c.m.State().HoldUntil) {
			pl, in.CanPlan = c.plan(*msgs)
		}
	}
	eff := c.fire(in)[0]
	if eff == compaction.EffCall {
		return nil
	}
	ok, tf := c.run(ctx, step, msgs, eff, pl, protocol.CompactionThreshold, in.Tokens)
	return c.settle(ok, tf, in.Tokens, "the conversation is larger than the model's context window and could not be compacted")
}

// run runs the compaction effect eff calls for.
func (c *Compactor) run(ctx context.Context, step int, msgs *[]provider.Message, eff compaction.Effect, pl cutPlan, reason string, tokens int64) (bool, *modelcall.Failed) {
	if eff == compaction.EffCompactNative {
		ep, ok := c.env.NativeEndpoint()
		if !ok {
			return false, nil // never: the route's endpoint does not change during a run
		}
		return c.compactNative(ctx, step, ep, msgs, reason, tokens)
	}
	return c.compact(ctx, step, msgs, pl, reason, tokens)
}

// settle fires a compaction's outcome: nil when the call (re-issued after
// an overflow) goes out, the run's failure otherwise. what is the overflow
// failure's message when a refusal ends the run. A compaction that must
// end the run itself (tf: canceled, the session could not be written) is
// a failed compaction to the machine (CompactRefused) and, when that lets
// the run go on, a call that failed for good (CallFail): the run ends with
// tf's code.
func (c *Compactor) settle(ok bool, tf *modelcall.Failed, tokens int64, what string) *modelcall.Failed {
	if tf != nil {
		c.fire(compaction.Input{Trigger: compaction.TrCompactRefused, Tokens: tokens})
		if c.m.State().Phase == compaction.PCalling {
			c.fire(compaction.Input{Trigger: compaction.TrFail})
		}
		return tf
	}
	if ok {
		c.fire(compaction.Input{Trigger: compaction.TrCompactOK})
		return nil
	}
	for _, eff := range c.fire(compaction.Input{Trigger: compaction.TrCompactRefused, Tokens: tokens}) {
		if eff == compaction.EffOverflow {
			return &modelcall.Failed{Code: protocol.CodeContextOverflow, Msg: OverflowAdvice(what)}
		}
	}
	return nil // held off: the call goes out uncompacted
}

// Fitting performs the step's model turn on msgs (build makes the
// request), compacting and re-issuing it once when it overflows.
func (c *Compactor) Fitting(ctx context.Context, step int, msgs *[]provider.Message, build func([]provider.Message) provider.Request) (modelcall.Turn, error) {
	c.begin(step)
	if c.m.State().Phase == compaction.PCheck {
		// A step of native steering has no threshold check (it may not
		// change the request's history): to the machine, one that found
		// nothing due.
		c.fire(compaction.Input{Trigger: compaction.TrCheck})
	}
	for {
		t, err := c.env.ModelTurn(ctx, step, build(*msgs))
		var tf *modelcall.Failed
		// A step of native steering cannot be re-issued (the successor
		// was created by the server, the continuation is one request), nor
		// can a step whose steer awaits its outcome: its silent overflow
		// does not count (compaction.Overflowed), so past this check a
		// silent overflow is one of a step that may be re-issued.
		silent := err == nil && c.silentOverflow(t)
		failed := err != nil && errors.As(err, &tf) && IsOverflowCode(tf.Code) && ctx.Err() == nil
		if !compaction.Overflowed(failed, silent, silent && c.env.NativeBusy()) {
			return t, err
		}
		_, native := c.env.NativeEndpoint()
		pl, can := c.plan(*msgs)
		if !c.m.State().Overflowed && (compaction.Policy{Native: native}).Choose(can) == compaction.KindNone {
			// Nothing to summarize (the newest messages alone are too
			// large): the outcome stands as the provider reported it,
			// and the machine sees it as the call's.
			return t, err
		}
		eff := c.fire(compaction.Input{Trigger: compaction.TrOverflow})[0]
		if silent {
			// The answer is discarded as a replaced attempt's is; the
			// call was billed all the same.
			if werr := c.env.DiscardTurn(step, t); werr != nil {
				return modelcall.Turn{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + werr.Error()}
			}
		}
		if eff == compaction.EffOverflow {
			return modelcall.Turn{}, &modelcall.Failed{Code: protocol.CodeContextOverflow, Msg: OverflowAdvice("the conversation is still too large for the model's context window after one compaction")}
		}
		tokens := c.count.current(*msgs)
		ok, ctf := c.run(ctx, step, msgs, eff, pl, protocol.CompactionOverflow, tokens)
		if f := c.settle(ok, ctf, tokens, "the conversation is too large for the model's context window and could not be compacted"); f != nil {
			return modelcall.Turn{}, f
		}
	}
}

// End tells the machine how the run ended, when its last step's call was
// out: completed (the spec's CallAnswer) or not (CallFail: every other
// status is an error to the spec, blocked included). A machine that
// already ended, or that stands elsewhere, is left as it is.
func (c *Compactor) End(completed bool) {
	if c.m.State().Phase != compaction.PCalling {
		return
	}
	if completed {
		c.fire(compaction.Input{Trigger: compaction.TrAnswer})
		return
	}
	c.fire(compaction.Input{Trigger: compaction.TrFail})
}

// silentOverflow reports a successful step that overflowed all the same:
// it stopped for the window, or its input passed the window.
func (c *Compactor) silentOverflow(t modelcall.Turn) bool {
	if t.Finish == provider.FinishContextWindow {
		return true
	}
	w := c.bud.Window
	return w > 0 && t.UsageReported && t.Usage.InputTokens > w
}
