package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

func code(end *End) protocol.Code {
	if end == nil || end.Err == nil {
		return ""
	}
	return end.Err.Code
}

// TestWouldStopWithoutGate: a run without a gate completes with the
// candidate, or delivers what the after-turn boundary releases and goes on
// keeping the candidate as its output; at the last step it completes.
func TestWouldStopWithoutGate(t *testing.T) {
	var s *State
	env := &fakeEnv{complete: true}
	end, kept := s.WouldStop(context.Background(), env, 1, new([]provider.Message), "done", false)
	if end == nil || end.Status != fsmrun.StatusCompleted || end.Output != "done" || kept != "" {
		t.Fatalf("complete: %+v, %q", end, kept)
	}
	env = &fakeEnv{queued: []string{"and the docs"}}
	var msgs []provider.Message
	end, kept = s.WouldStop(context.Background(), env, 1, &msgs, "done", false)
	if end != nil || kept != "done" || len(msgs) != 1 || msgs[0].Text != "and the docs" {
		t.Fatalf("follow-up: %+v, %q, %v", end, kept, msgs)
	}
	if len(env.afterTurns) != 1 || !env.afterTurns[0] {
		t.Fatalf("after turns %v, want [true]", env.afterTurns)
	}
	env = &fakeEnv{queued: []string{"later"}}
	end, _ = s.WouldStop(context.Background(), env, 5, &msgs, "last", true)
	if end == nil || end.Status != fsmrun.StatusCompleted || end.Output != "last" || len(env.afterTurns) != 0 {
		t.Fatalf("last step: %+v, after turns %v", end, env.afterTurns)
	}
}

// TestWouldStopPendingSteeringFirst: pending steering is delivered without
// asking the gate; at the last step the gate reviews anyway.
func TestWouldStopPendingSteeringFirst(t *testing.T) {
	g := &answers{list: []Decision{{Verdict: Accept}}}
	s := New(g, noRoutes)
	env := &fakeEnv{pending: true, queued: []string{"steer"}}
	end, kept := s.WouldStop(context.Background(), env, 1, new([]provider.Message), "first", false)
	if end != nil || kept != "first" || len(g.inputs) != 0 {
		t.Fatalf("%+v, %q, reviewed %d", end, kept, len(g.inputs))
	}
	env = &fakeEnv{pending: true, complete: true}
	end, _ = s.WouldStop(context.Background(), env, 9, new([]provider.Message), "final", true)
	if end == nil || end.Status != fsmrun.StatusCompleted || end.Output != "final" || len(g.inputs) != 1 {
		t.Fatalf("last step: %+v, reviewed %d", end, len(g.inputs))
	}
	if in := g.inputs[0]; in != (Input{RunID: "run-1", Step: 9, CandidateText: "final", Attempt: 1, Prompt: "fix the bug"}) {
		t.Fatalf("input %+v", in)
	}
}

// TestWouldStopRejectThenAccept: a rejection emits candidate_rejected, puts
// the sanitized reason in the session and the conversation, fires the
// boundary unanswered, and never keeps the candidate; the next candidate is
// attempt 2; an accept starts the count again.
func TestWouldStopRejectThenAccept(t *testing.T) {
	g := &answers{list: []Decision{
		{Verdict: Reject, Reason: "  run the tests\x00 with sk-secret-123\n"},
		{Verdict: Accept},
		{Verdict: Reject, Reason: "again"},
	}}
	s := New(g, noRoutes)
	env := &fakeEnv{secret: "sk-secret-123", queued: []string{"steer meanwhile"}}
	var msgs []provider.Message
	end, kept := s.WouldStop(context.Background(), env, 1, &msgs, "draft", false)
	if end != nil || kept != "" {
		t.Fatalf("reject: %+v, %q", end, kept)
	}
	reason := "run the tests  with [REDACTED]"
	if len(env.events) != 1 {
		t.Fatalf("events %v", env.events)
	}
	if ev, ok := env.events[0].(*protocol.CandidateRejected); !ok || *ev != (protocol.CandidateRejected{Step: 1, Attempt: 1, MaxAttempts: MaxRejections, Reason: reason}) {
		t.Fatalf("event %+v", env.events[0])
	}
	want := feedback(reason, 1)
	if !strings.Contains(want, "rejection 1 of at most 8") || !strings.Contains(want, reason) {
		t.Fatalf("feedback %q", want)
	}
	if len(msgs) != 2 || msgs[0].Text != want || msgs[0].Role != provider.RoleUser || msgs[1].Text != "steer meanwhile" {
		t.Fatalf("messages %+v", msgs)
	}
	if len(env.recs) != 1 {
		t.Fatalf("records %+v", env.recs)
	}
	if m, ok := env.recs[0].Body.(store.Message); !ok || m.Origin != protocol.OperationTerminalGate || m.RunID != "run-1" {
		t.Fatalf("record %+v", env.recs[0].Body)
	}
	if len(env.afterTurns) != 1 || env.afterTurns[0] {
		t.Fatalf("after turns %v, want [false]", env.afterTurns)
	}

	env.complete = true
	end, _ = s.WouldStop(context.Background(), env, 2, &msgs, "better", false)
	if end == nil || end.Status != fsmrun.StatusCompleted || end.Output != "better" {
		t.Fatalf("accept: %+v", end)
	}
	end, _ = s.WouldStop(context.Background(), env, 3, &msgs, "more", false)
	if end != nil || g.inputs[1].Attempt != 2 || g.inputs[2].Attempt != 1 {
		t.Fatalf("attempts %+v (end %+v)", g.inputs, end)
	}
}

// TestWouldStopExhausted: the MaxRejections-th rejection in a row ends the
// run blocked, without the candidate; the one before at the last step goes
// on with no output.
func TestWouldStopExhausted(t *testing.T) {
	s := New(&answers{list: []Decision{{Verdict: Reject, Reason: "no"}}}, noRoutes)
	env := &fakeEnv{}
	for i := 1; i < MaxRejections; i++ {
		end, kept := s.WouldStop(context.Background(), env, i, new([]provider.Message), "c", i == MaxRejections-1)
		if end != nil || kept != "" {
			t.Fatalf("rejection %d: %+v, %q", i, end, kept)
		}
	}
	if len(env.recs) != MaxRejections-2 {
		t.Fatalf("%d reasons recorded, want %d (none at the last step)", len(env.recs), MaxRejections-2)
	}
	end, kept := s.WouldStop(context.Background(), env, MaxRejections, new([]provider.Message), "c", false)
	if end == nil || end.Status != fsmrun.StatusBlocked || code(end) != protocol.CodeTerminalGateExhausted || end.Output != "" || kept != "" {
		t.Fatalf("exhausted: %+v", end)
	}
	if want := "the terminal gate rejected 8 candidate answers in a row; the last reason: no"; end.Err.Message != want {
		t.Fatalf("message %q", end.Err.Message)
	}
	if len(env.events) != MaxRejections {
		t.Fatalf("%d candidate_rejected events", len(env.events))
	}
}

func TestWouldStopEnds(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name     string
		ctx      context.Context
		dec      Decision
		err      error
		status   string
		code     protocol.Code
		contains string
	}{
		{"stop", nil, Decision{Verdict: Stop, Reason: "impossible"}, nil, fsmrun.StatusBlocked, protocol.CodeTerminalGateStopped, "the terminal gate stopped the run: impossible"},
		{"error", nil, Decision{}, errors.New("boom with sk-secret-123\x07"), fsmrun.StatusError, protocol.CodeTerminalGateFailed, "the terminal gate failed: boom with [REDACTED]"},
		{"canceled", canceled, Decision{}, context.Canceled, fsmrun.StatusError, protocol.CodeCanceled, "the run was canceled"},
		{"write failed", nil, Decision{}, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "disk full"}, fsmrun.StatusError, protocol.CodeSessionWriteFailed, "disk full"},
		{"call failed", nil, Decision{}, &modelcall.Failed{Code: protocol.CodeRetriesExhausted, Msg: "503"}, fsmrun.StatusError, protocol.CodeTerminalGateFailed, "its model call failed (retries_exhausted): explained: 503"},
		{"no reason", nil, Decision{Verdict: Reject, Reason: " \x01 "}, nil, fsmrun.StatusError, protocol.CodeTerminalGateFailed, "it answered reject without a reason"},
		{"unknown", nil, Decision{Verdict: "perhaps"}, nil, fsmrun.StatusError, protocol.CodeTerminalGateFailed, `unknown verdict "perhaps"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			s := New(&answers{list: []Decision{c.dec}, errs: []error{c.err}}, noRoutes)
			env := &fakeEnv{secret: "sk-secret-123"}
			end, kept := s.WouldStop(ctx, env, 1, new([]provider.Message), "candidate", false)
			if end == nil || end.Status != c.status || code(end) != c.code || end.Output != "" || kept != "" {
				t.Fatalf("%+v, %q", end, kept)
			}
			if !strings.Contains(end.Err.Message, c.contains) {
				t.Fatalf("message %q, want %q in it", end.Err.Message, c.contains)
			}
			if len(env.events) != 0 || len(env.recs) != 0 || len(env.afterTurns) != 0 {
				t.Fatalf("effects: events %v, records %v, after turns %v", env.events, env.recs, env.afterTurns)
			}
		})
	}
}

// TestWouldStopWriteFailed: a reason the session cannot take ends the run
// with session_write_failed, the message redacted.
func TestWouldStopWriteFailed(t *testing.T) {
	s := New(&answers{list: []Decision{{Verdict: Reject, Reason: "no"}}}, noRoutes)
	env := &fakeEnv{secret: "sk-secret-123", appendErr: errors.New("EIO at sk-secret-123")}
	end, _ := s.WouldStop(context.Background(), env, 1, new([]provider.Message), "c", false)
	if code(end) != protocol.CodeSessionWriteFailed || end.Err.Message != "the session could not be written: EIO at [REDACTED]" {
		t.Fatalf("%+v", end)
	}
}

// TestSanitize: every credential the run knows goes, its model gates'
// too; control characters become spaces (newline and tab stay); the text
// is valid UTF-8, trimmed, and cut to MaxReasonBytes.
func TestSanitize(t *testing.T) {
	s := New(nil, noRoutes)
	s.routes[testModel("m")] = &Route{Redact: func(t string) string { return strings.ReplaceAll(t, "gate-key-42", "[gate]") }}
	env := &fakeEnv{secret: "sk-secret-123", key: "route-key"}
	got := s.sanitize(env, " a\x1b[31m\tb\nsk-secret-123 route-key gate-key-42 \xff ")
	if want := "a [31m\tb\n[REDACTED] [redacted] [gate] \uFFFD"; got != want {
		t.Fatalf("sanitize = %q, want %q", got, want)
	}
	long := s.sanitize(env, strings.Repeat("é", MaxReasonBytes))
	if len(long) > MaxReasonBytes || !strings.HasPrefix(long, "é") {
		t.Fatalf("long reason: %d bytes", len(long))
	}
}

// testModel is a model gate of the tests.
type testModel string

func (m testModel) GateInstructions() string { return "instructions of " + string(m) }
