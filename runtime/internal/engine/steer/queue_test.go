package steer

import (
	"errors"
	"slices"
	"testing"

	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/provider"
)

func texts(ms []QueuedMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Kind+":"+m.Text)
	}
	return out
}

// Steering goes first: after a tool it skips the rest of the turn and is
// delivered; follow-ups wait for an answered turn with no steering
// pending; an answered turn with nothing pending completes.
func TestQueueBoundaries(t *testing.T) {
	q := NewQueue()
	if !q.Open() || q.SteeringPending() {
		t.Fatal("a new queue is open and empty")
	}
	for _, m := range []struct {
		tr   steering.Trigger
		text string
	}{{steering.TrSteer, "s1"}, {steering.TrFollowUp, "f1"}, {steering.TrSteer, "s2"}} {
		if err := q.Submit(m.tr, m.text); err != nil {
			t.Fatal(err)
		}
	}
	if !q.SteeringPending() {
		t.Fatal("steering pending")
	}
	out := q.Boundary(steering.Input{Trigger: steering.TrAfterTool})
	if !out.SkipTools || out.Complete || !slices.Equal(texts(out.Deliver), []string{"steering:s1", "steering:s2"}) {
		t.Fatalf("after a tool: %+v", out)
	}
	if out = q.Boundary(steering.Input{Trigger: steering.TrAfterTool}); out.SkipTools || len(out.Deliver) != 0 {
		t.Fatalf("after a tool, nothing steering: %+v", out)
	}
	if out = q.Boundary(steering.Input{Trigger: steering.TrAfterTurn}); len(out.Deliver) != 0 || out.Complete {
		t.Fatalf("follow-ups wait for an answer: %+v", out)
	}
	out = q.Boundary(steering.Input{Trigger: steering.TrAfterTurn, Answered: true})
	if out.Complete || !slices.Equal(texts(out.Deliver), []string{"follow_up:f1"}) {
		t.Fatalf("answered with a follow-up: %+v", out)
	}
	if out = q.Boundary(steering.Input{Trigger: steering.TrAfterTurn, Answered: true}); !out.Complete || q.Open() {
		t.Fatalf("answered with nothing pending: %+v", out)
	}
	if err := q.Submit(steering.TrSteer, "late"); err == nil {
		t.Fatal("a closed queue took a message")
	}
	if len(q.Dropped()) != 0 {
		t.Fatalf("dropped %+v", q.Dropped())
	}
}

// Close drops what is pending, steering first, each in submission order;
// Drop adds a steering message the queue could not take.
func TestQueueCloseDrops(t *testing.T) {
	q := NewQueue()
	must(t, q.Submit(steering.TrFollowUp, "f1"))
	must(t, q.Submit(steering.TrSteer, "s1"))
	must(t, q.Submit(steering.TrFollowUp, "f2"))
	if out := q.Boundary(steering.Input{Trigger: steering.TrClose}); len(out.Deliver) != 0 || out.Complete {
		t.Fatalf("close: %+v", out)
	}
	q.Drop("native")
	got := q.Dropped()
	if !slices.Equal(texts(got), []string{"steering:s1", "follow_up:f1", "follow_up:f2", "steering:native"}) {
		t.Fatalf("dropped %v", texts(got))
	}
	got[0].Text = "changed"
	if q.Dropped()[0].Text != "s1" {
		t.Fatal("Dropped returned the queue's own slice")
	}
}

func TestDeliver(t *testing.T) {
	env := &fakeEnv{}
	msgs := []provider.Message{{Role: provider.RoleUser, Text: "q"}}
	must(t, Deliver(env, 3, &msgs, nil))
	if len(env.recs) != 0 || len(env.events) != 0 {
		t.Fatal("nothing to deliver wrote something")
	}
	must(t, Deliver(env, 3, &msgs, []QueuedMessage{{KindSteering, "s"}, {KindFollowUp, "f"}}))
	if got := env.messages(); !slices.Equal(got, []string{"steering:user:s", "follow_up:user:f"}) {
		t.Fatalf("records %v", got)
	}
	if len(msgs) != 3 || msgs[1].Text != "s" || msgs[2].Text != "f" {
		t.Fatalf("conversation %+v", msgs)
	}
	if !slices.Equal(env.events, []protocol.EventType{protocol.TypeSteeringDelivered, protocol.TypeFollowUpDelivered}) ||
		*env.data[0].(*protocol.SteeringDelivered) != (protocol.SteeringDelivered{Step: 3, Text: "s", Mode: protocol.SteeringModeQueued}) ||
		*env.data[1].(*protocol.FollowUpDelivered) != (protocol.FollowUpDelivered{Step: 3, Text: "f"}) {
		t.Fatalf("events %v %+v", env.events, env.data)
	}
	// A write failure: no event, and the conversation is as it was.
	env.fail = errReset
	if err := Deliver(env, 4, &msgs, []QueuedMessage{{KindSteering, "x"}}); !errors.Is(err, errReset) || len(msgs) != 3 || len(env.events) != 2 {
		t.Fatalf("failed write: %v, %d messages, %d events", err, len(msgs), len(env.events))
	}
}

func TestSkipTools(t *testing.T) {
	env := &fakeEnv{}
	var msgs []provider.Message
	calls := []provider.ToolCall{{ID: "c2", Name: "ls"}, {ID: "c3", Name: "read"}}
	must(t, SkipTools(env, &msgs, calls))
	if len(msgs) != 2 || len(env.recs) != 2 || len(env.events) != 0 {
		t.Fatalf("%d results, %d records, %d events", len(msgs), len(env.recs), len(env.events))
	}
	for i, m := range msgs {
		if m.Role != provider.RoleTool || m.ToolCallID != calls[i].ID || m.ToolName != calls[i].Name || !m.IsError || m.Text != skippedResult {
			t.Errorf("result %d: %+v", i, m)
		}
	}
	env.fail = errReset
	if err := SkipTools(env, &msgs, calls[:1]); !errors.Is(err, errReset) || len(msgs) != 2 {
		t.Fatalf("failed write: %v, %d results", err, len(msgs))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
