package engine

import (
	"context"
	"errors"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/engine/steer"
	"octet.dev/host/runtime/provider"
)

func (d *driver) callModel(ctx context.Context, step int, req provider.Request) (modelcall.Turn, error) {
	var t modelcall.Turn
	var s provider.Stream
	var err error
	n := d.native
	if n != nil && n.Next != nil {
		// A successor the server created after a steer: its
		// response.created was read, the rest of it is this step's.
		s, n.Next = n.Next, nil
	} else {
		if n != nil {
			n.Live = ""
		}
		s, err = d.p.prov.Stream(ctx, req)
		if err != nil {
			var again bool
			if again, err = d.reauthCodex(ctx, step, err); again {
				s, err = d.p.prov.Stream(ctx, req)
			}
		}
	}
	if err != nil {
		return t, err
	}
	defer s.Close()
	// Native steering (package steer): between events the gate lets
	// RunControl.Steer into the live response.
	var g *steer.Gate
	st, steerable := s.(provider.Steerer)
	if steerable && req.NativeSteering && n != nil {
		g = d.rc.native
		g.Begin(st)
		defer g.End()
	}
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
	// A stream that lends its current event (the edge's do) spares each
	// delta a copy of the whole StreamEvent.
	cur, _ := s.(currentEvent)
	for {
		if g != nil {
			g.Open()
		}
		more := s.Next()
		if g != nil {
			g.Shut()
		}
		if !more {
			break
		}
		var ev *provider.StreamEvent
		if cur != nil {
			ev = cur.Current()
		} else {
			e := s.Event()
			ev = &e
		}
		switch ev.Kind {
		case provider.EventText:
			if out := textRed.Push(ev.Text); out != "" || ev.Text == "" {
				text.WriteString(out)
				d.delta(step, protocol.ChannelText, out)
			}
		case provider.EventReasoning:
			reasoning.Add(*ev)
			if out := reasonRed.Push(ev.Text); out != "" {
				d.delta(step, protocol.ChannelReasoning, out)
			}
		case provider.EventToolCall:
			reasoning.Add(*ev) // it counts the calls each block follows
			t.Calls = append(t.Calls, d.p.red.call(ev.ToolCall))
		case provider.EventUsage:
			t.Usage, t.UsageReported = provider.Reported(ev.Usage)
		case provider.EventFinish:
			t.Finish = ev.FinishReason
		case provider.EventMedia:
			t.AddMedia(ev.Media)
		case provider.EventResponseCreated:
			if g != nil {
				if err := n.Created(ev.ID, step); err != nil {
					return t, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
				}
			}
		case provider.EventSteerAccepted, provider.EventSteerPending, provider.EventSteerFailed:
			if g != nil {
				if err := n.OnEvent(*ev); err != nil {
					return t, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
				}
			}
		}
	}
	if g != nil && s.Err() == nil {
		// Steers still without an outcome: the connection is held for
		// it (awaitNative reads on).
		n.Follow = st.Follow(ctx)
	}
	if out := textRed.Flush(); out != "" {
		text.WriteString(out)
		d.delta(step, protocol.ChannelText, out)
	}
	if out := reasonRed.Flush(); out != "" {
		d.delta(step, protocol.ChannelReasoning, out)
	}
	// On failure the partial text is returned too: it becomes recovered
	// output when recovery discards the attempt.
	t.Text, t.Reasoning, t.ReasoningBlocks = text.String(), d.p.red.String(reasoning.Text()), d.p.red.blocks(reasoning.Blocks())
	return t, t.SettleMedia(s.Err())
}

// currentEvent is a provider.Stream that lends its current event in place,
// valid until its next Next.
type currentEvent interface {
	Current() *provider.StreamEvent
}

// deltaSlab is how many model_delta payloads are allocated at once.
const deltaSlab = 64

// delta emits a model_delta. model_delta is the hottest event: its
// payloads come from a slab allocated deltaSlab at a time (each used once,
// never reused), so that streaming costs one allocation per deltaSlab
// deltas instead of one per delta. A consumer that keeps one delta keeps
// its slab alive, and with it the texts of up to deltaSlab-1 other deltas.
func (d *driver) delta(step int, channel, text string) {
	if len(d.deltas) == 0 {
		d.deltas = make([]protocol.ModelDelta, deltaSlab)
	}
	m := &d.deltas[0]
	d.deltas = d.deltas[1:]
	m.Step, m.Channel, m.Text = step, channel, text
	d.stream(protocol.TypeModelDelta, m)
}

// failureMessage explains a turn recovery gave up on.
func failureMessage(tf *modelcall.Failed) string {
	switch tf.Code {
	case protocol.CodeRetriesExhausted:
		return "the retry budget is exhausted: " + tf.Msg
	case protocol.CodeNetworkWaitExceeded:
		return "the provider was unreachable for longer than the maximum network wait; last failure: " + tf.Msg
	}
	return tf.Msg
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
	u, _ = provider.Reported(u) // absurd counts never reach the sums
	if u.TotalTokens == 0 {
		u.TotalTokens = u.Total()
	}
	usage := protocol.Usage(u)
	c := priceUsage(d.p.model.Cost, usage)
	t := &d.total
	cum := provider.Usage(t.Usage)
	cum.Add(u) // saturating
	t.Usage = protocol.Usage(cum)
	t.Cost.Input += c.Input
	t.Cost.Output += c.Output
	t.Cost.CacheRead += c.CacheRead
	t.Cost.CacheWrite += c.CacheWrite
	t.Cost.Total += c.Total
	t.Cost.Currency = c.Currency
	d.stream(protocol.TypeModelStep, &protocol.ModelStep{Step: step, Model: d.p.model.ID, Usage: usage, Cost: c, Cumulative: *t, UsageUncertain: d.uncertain})
	return c
}
