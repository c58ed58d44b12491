package compact

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/compaction"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// The Compactor against a fake run: its decisions are the machine's, and
// the machine's transitions go to the run's tracer.

// overBudget is a conversation of about 8001 tokens: over the threshold
// (7500) of a window of 10000 with max_output_tokens 1000, within the
// window; keep (2500) is reached at its last message, a user message.
func overBudget() []provider.Message {
	return []provider.Message{
		{Role: provider.RoleUser, Text: strings.Repeat("a", 20000)},
		{Role: provider.RoleAssistant, Text: "ok"},
		{Role: provider.RoleUser, Text: strings.Repeat("b", 12000)},
	}
}

func newTraced(e *fakeEnv, msgs []provider.Message) (*Compactor, *[]string) {
	var trace []string
	c := New(e, Config{Window: 10000, MaxOutput: 1000, OutputCap: 1000, Tracer: func(t fsm.Transition) {
		trace = append(trace, t.Machine+":"+t.From+"-"+t.Trigger+"->"+t.To)
	}}, msgs)
	return c, &trace
}

func TestCheckCompactsThroughTheMachine(t *testing.T) {
	msgs := overBudget()
	e := &fakeEnv{summaries: []string{"## Goal\nx"}}
	e.convo = []provider.Message{{Role: provider.RoleUser, Text: "summary"}, msgs[2]}
	c, trace := newTraced(e, msgs)
	if tf := c.Check(context.Background(), 1, &msgs); tf != nil {
		t.Fatal(tf)
	}
	if want := []protocol.EventType{protocol.TypeCompactionStart, protocol.TypeCompactionFinish}; !slices.Equal(e.events, want) {
		t.Fatalf("events %v, want %v", e.events, want)
	}
	if len(msgs) != 2 || len(e.records) != 1 || !slices.Equal(e.aux, []string{protocol.OperationLocalCompaction}) {
		t.Fatalf("msgs %d, records %d, aux %v", len(msgs), len(e.records), e.aux)
	}
	cp := e.records[0].Body.(store.Compaction)
	if cp.Reason != protocol.CompactionThreshold || cp.SummaryText != "## Goal\nx" || cp.FirstKept != 2 {
		t.Fatalf("checkpoint %+v", cp)
	}
	if want := []string{"compaction:check-check->compacting", "compaction:compacting-compact_ok->calling"}; !slices.Equal(*trace, want) {
		t.Fatalf("trace %v, want %v", *trace, want)
	}
	c.End(true)
	if st := c.State(); st.Phase != compaction.PDone || st.Status != compaction.StatusCompleted {
		t.Fatalf("state %+v", st)
	}
}

// A refused threshold compaction of a context that still fits holds off:
// the next step at the same size calls the model without compacting.
func TestRefusedCompactionHoldsOff(t *testing.T) {
	msgs := overBudget()
	e := &fakeEnv{summaries: []string{"  "}}
	c, trace := newTraced(e, msgs)
	if tf := c.Check(context.Background(), 1, &msgs); tf != nil {
		t.Fatal(tf)
	}
	if st := c.State(); st.Phase != compaction.PCalling || st.HoldUntil != 9000 || len(e.records) != 0 {
		t.Fatalf("state %+v, records %d", st, len(e.records))
	}
	if tf := c.Check(context.Background(), 2, &msgs); tf != nil || len(e.events) != 2 {
		t.Fatalf("second check: %v, events %v", tf, e.events)
	}
	if want := []string{"compaction:check-check->compacting", "compaction:compacting-compact_refused->calling",
		"compaction:calling-tools->check", "compaction:check-check->calling"}; !slices.Equal(*trace, want) {
		t.Fatalf("trace %v, want %v", *trace, want)
	}
}

// A refused threshold compaction of a context past the window ends the run.
func TestRefusedCompactionPastTheWindowEnds(t *testing.T) {
	msgs := append(overBudget(), provider.Message{Role: provider.RoleAssistant, Text: strings.Repeat("c", 12000)})
	e := &fakeEnv{summaries: []string{""}}
	c, _ := newTraced(e, msgs)
	tf := c.Check(context.Background(), 1, &msgs)
	if tf == nil || tf.Code != protocol.CodeContextOverflow {
		t.Fatalf("failure %v, want context_overflow", tf)
	}
	if st := c.State(); st.Phase != compaction.PDone || st.Status != compaction.StatusError {
		t.Fatalf("state %+v", st)
	}
}

var overflowed = &modelcall.Failed{Code: protocol.CodeContextOverflow, Msg: "too long"}

// An overflow compacts once and re-issues the step; a second overflow in
// the same step ends the run.
func TestOverflowCompactsOnceAndRetries(t *testing.T) {
	build := func([]provider.Message) provider.Request { return provider.Request{} }
	for _, second := range []turnResult{{t: modelcall.Turn{Text: "done"}}, {err: overflowed}} {
		msgs := overBudget()[:2]
		msgs = append(msgs, provider.Message{Role: provider.RoleUser, Text: strings.Repeat("b", 12000)})
		e := &fakeEnv{turns: []turnResult{{err: overflowed}, second}, summaries: []string{"## Goal\nx"}}
		e.convo = msgs[1:]
		c, trace := newTraced(e, nil)
		c.bud.Window, c.bud.Threshold = 0, 0 // no threshold check: the machine calls
		c.m = compaction.New(compaction.Policy{Budget: c.bud.policy()})
		c.m.SetTracer(func(tr fsm.Transition) { *trace = append(*trace, tr.Trigger+"->"+tr.To) })
		if tf := c.Check(context.Background(), 1, &msgs); tf != nil {
			t.Fatal(tf)
		}
		got, err := c.Fitting(context.Background(), 1, &msgs, build)
		if second.err == nil {
			if err != nil || got.Text != "done" {
				t.Fatalf("turn %+v, %v", got, err)
			}
			if want := []string{"check->calling", "overflow->compacting", "compact_ok->calling"}; !slices.Equal(*trace, want) {
				t.Fatalf("trace %v, want %v", *trace, want)
			}
			continue
		}
		var tf *modelcall.Failed
		if !errors.As(err, &tf) || tf.Code != protocol.CodeContextOverflow || !strings.Contains(tf.Msg, "after one compaction") {
			t.Fatalf("second overflow: %v", err)
		}
		if st := c.State(); st.Phase != compaction.PDone || !st.Overflowed {
			t.Fatalf("state %+v", st)
		}
	}
}

// An overflow with nothing to summarize stands: the machine sees the
// call's own outcome, and a native-steered step (no threshold check)
// still passes the check.
func TestOverflowWithNothingToCompactStands(t *testing.T) {
	msgs := []provider.Message{{Role: provider.RoleUser, Text: "hi"}}
	e := &fakeEnv{turns: []turnResult{{err: overflowed}}}
	c, trace := newTraced(e, msgs)
	_, err := c.Fitting(context.Background(), 1, &msgs, func([]provider.Message) provider.Request { return provider.Request{} })
	if !errors.Is(err, overflowed) || len(e.events) != 0 {
		t.Fatalf("err %v, events %v", err, e.events)
	}
	c.End(false)
	if want := []string{"compaction:check-check->calling", "compaction:calling-fail->done"}; !slices.Equal(*trace, want) {
		t.Fatalf("trace %v, want %v", *trace, want)
	}
}
