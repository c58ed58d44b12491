package turn

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/fsm"
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
)

// at is a state in phase p of step step of a run limited to max steps.
func at(max, step int, p Phase) State { return State{MaxSteps: max, Step: step, Phase: p} }

func TestNext(t *testing.T) {
	canceled := Outcome{Status: fsmrun.StatusError, Code: protocol.CodeCanceled, Msg: canceledMsg}
	tooling := func(max, step, calls, ran int) State {
		s := at(max, step, Tooling)
		s.Calls, s.Ran = calls, ran
		return s
	}
	steering := func(max, step, calls, ran int) State {
		s := tooling(max, step, calls, ran)
		s.Phase = Steering
		return s
	}
	tests := []struct {
		name  string
		from  State
		fact  Fact
		phase Phase
		want  []Effect
	}{
		{"first step: boundary work, then the call", New(3), Fact{Kind: Begin}, Calling,
			[]Effect{{Kind: AdmitReasoning, Step: 1}, {Kind: Compact, Step: 1}, {Kind: CallModel, Step: 1}}},
		{"a native step is never re-issued: no boundary work", at(3, 1, Idle), Fact{Kind: Begin, Native: true}, Calling,
			[]Effect{{Kind: CallModel, Step: 2}}},
		{"the last step still calls", at(3, 2, Idle), Fact{Kind: Begin}, Calling,
			[]Effect{{Kind: AdmitReasoning, Step: 3}, {Kind: Compact, Step: 3}, {Kind: CallModel, Step: 3}}},
		{"past max_steps the run is blocked", at(3, 3, Idle), Fact{Kind: Begin, Native: true}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusBlocked, Code: protocol.CodeMaxStepsReached,
				Msg: "the run reached max_steps (3) before the model finished"}}}},
		{"max_steps 0 never calls", New(0), Fact{Kind: Begin}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusBlocked, Code: protocol.CodeMaxStepsReached,
				Msg: "the run reached max_steps (0) before the model finished"}}}},
		{"an answer cut by the output cap ends the run, calls and all", at(3, 1, Calling), Fact{Kind: Answer, Calls: 2, Length: true, Outstanding: true}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusError, Code: protocol.CodeOutputIncomplete, Msg: incompleteMsg}}}},
		{"tool calls run, the first first", at(3, 1, Calling), Fact{Kind: Answer, Calls: 2, Outstanding: true}, Tooling,
			[]Effect{{Kind: RunTool, Index: 0}}},
		{"no calls: the would-stop point", at(3, 1, Calling), Fact{Kind: Answer}, Gating,
			[]Effect{{Kind: AskGate, Step: 1}}},
		{"no calls at the last step: the gate knows", at(3, 3, Calling), Fact{Kind: Answer}, Gating,
			[]Effect{{Kind: AskGate, Step: 3, LastStep: true}}},
		{"no calls with a steer outstanding: its outcome first", at(3, 1, Calling), Fact{Kind: Answer, Outstanding: true}, Awaiting,
			[]Effect{{Kind: AwaitNative}}},
		{"a successor is the next step's", at(3, 1, Awaiting), Fact{Kind: Awaited, Successor: true}, Idle, nil},
		{"no successor: the would-stop point", at(3, 2, Awaiting), Fact{Kind: Awaited}, Gating,
			[]Effect{{Kind: AskGate, Step: 2}}},
		{"the gate ends the run", at(3, 1, Gating), Fact{Kind: Gate, End: true, Status: fsmrun.StatusCompleted}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusCompleted, Gate: true}}}},
		{"the gate's blocked end is passed on", at(3, 1, Gating), Fact{Kind: Gate, End: true, Status: fsmrun.StatusBlocked, Code: protocol.CodeTerminalGateStopped, Msg: "no"}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusBlocked, Code: protocol.CodeTerminalGateStopped, Msg: "no", Gate: true}}}},
		{"the run goes on after the gate", at(3, 1, Gating), Fact{Kind: Gate}, Idle, nil},
		{"a tool done with more to run: the after-tool boundary", tooling(3, 1, 3, 0), Fact{Kind: ToolDone, Outstanding: true}, Steering,
			[]Effect{{Kind: SteerAfterTool}}},
		{"no after-tool boundary at the last step", tooling(3, 3, 3, 0), Fact{Kind: ToolDone}, Tooling,
			[]Effect{{Kind: RunTool, Index: 1}}},
		{"the last tool done: the after-turn boundary, then delivery", tooling(3, 1, 2, 1), Fact{Kind: ToolDone}, Idle,
			[]Effect{{Kind: SteerAfterTurn}, {Kind: Deliver, Step: 2}}},
		{"the last tool done with a steer outstanding: its outcome first", tooling(3, 1, 1, 0), Fact{Kind: ToolDone, Outstanding: true}, Idle,
			[]Effect{{Kind: AwaitNative, WithCalls: true}, {Kind: SteerAfterTurn}, {Kind: Deliver, Step: 2}}},
		{"the last tool of the last step: no boundary", tooling(3, 3, 1, 0), Fact{Kind: ToolDone, Outstanding: true}, Idle,
			[]Effect{{Kind: AwaitNative, WithCalls: true}, {Kind: Deliver, Step: 4}}},
		{"a tool canceled ends the run", tooling(3, 1, 2, 0), Fact{Kind: ToolDone, Canceled: true}, Settled,
			[]Effect{{Kind: Settle, Outcome: canceled}}},
		{"steering cut the rest: skipped, delivered, no second boundary", steering(3, 1, 4, 1), Fact{Kind: Steered, Skip: true}, Idle,
			[]Effect{{Kind: SkipTools, Index: 1}, {Kind: Deliver, Step: 2}}},
		{"steering cut the rest with a steer outstanding", steering(3, 2, 4, 3), Fact{Kind: Steered, Skip: true, Outstanding: true}, Idle,
			[]Effect{{Kind: SkipTools, Index: 3}, {Kind: AwaitNative, WithCalls: true}, {Kind: Deliver, Step: 3}}},
		{"nothing to deliver mid-turn: the next call", steering(3, 1, 4, 2), Fact{Kind: Steered}, Tooling,
			[]Effect{{Kind: RunTool, Index: 2}}},
		{"a failure is an error with its code", at(3, 1, Calling), Fact{Kind: Fail, Code: protocol.CodeProviderError, Msg: "boom"}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusError, Code: protocol.CodeProviderError, Msg: "boom"}}}},
		{"a failure between steps", at(3, 1, Idle), Fact{Kind: Fail, Code: protocol.CodeSessionWriteFailed, Msg: "disk"}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusError, Code: protocol.CodeSessionWriteFailed, Msg: "disk"}}}},
		{"an unknown native outcome blocks the run", at(3, 1, Awaiting), Fact{Kind: Fail, Code: protocol.CodeUnsettledNativeSteering, Msg: "unknown"}, Settled,
			[]Effect{{Kind: Settle, Outcome: Outcome{Status: fsmrun.StatusBlocked, Code: protocol.CodeUnsettledNativeSteering, Msg: "unknown"}}}},
		{"cancellation wins over an unknown native outcome", at(3, 1, Calling), Fact{Kind: Fail, Canceled: true, Code: protocol.CodeUnsettledNativeSteering}, Settled,
			[]Effect{{Kind: Settle, Outcome: canceled}}},
		{"cancellation wins over a successor", at(3, 1, Awaiting), Fact{Kind: Awaited, Canceled: true, Successor: true}, Settled,
			[]Effect{{Kind: Settle, Outcome: canceled}}},
		{"cancellation wins over the gate's end", at(3, 1, Gating), Fact{Kind: Gate, Canceled: true, End: true, Status: fsmrun.StatusCompleted}, Settled,
			[]Effect{{Kind: Settle, Outcome: canceled}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, effs, err := Next(tt.from, tt.fact)
			if err != nil {
				t.Fatal(err)
			}
			if s.Phase != tt.phase {
				t.Errorf("phase %v, want %v", s.Phase, tt.phase)
			}
			if diff := cmp.Diff(tt.want, effs); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
			if s.Phase == Settled && s.Outcome != effs[len(effs)-1].Outcome {
				t.Errorf("settled with %+v, effect says %+v", s.Outcome, effs[len(effs)-1].Outcome)
			}
		})
	}
}

// TestNextRefuses checks that a fact reported out of its phase, or after
// the settle, changes nothing and is an error.
func TestNextRefuses(t *testing.T) {
	settled, _, _ := Next(New(1), Fact{Kind: Fail, Code: protocol.CodeInternalError})
	for _, c := range []struct {
		from State
		fact Fact
	}{
		{New(3), Fact{Kind: Answer}},
		{at(3, 1, Calling), Fact{Kind: Begin}},
		{at(3, 1, Tooling), Fact{Kind: Steered}},
		{at(3, 1, Steering), Fact{Kind: ToolDone}},
		{at(3, 1, Gating), Fact{Kind: Awaited}},
		{at(3, 1, Idle), Fact{Kind: Kind(99)}},
		{settled, Fact{Kind: Begin}},
		{settled, Fact{Kind: Fail, Canceled: true}},
	} {
		s, effs, err := Next(c.from, c.fact)
		var te *fsm.TransitionError
		if !errors.As(err, &te) || effs != nil || s != c.from {
			t.Errorf("%v in %v: %v %+v %+v", c.fact.Kind, c.from.Phase, err, effs, s)
		}
	}
}

// BenchmarkStep is the turn machine's share of one step with two tool
// calls and an after-tool boundary (it runs per step, never per delta).
func BenchmarkStep(b *testing.B) {
	facts := []Fact{{Kind: Begin}, {Kind: Answer, Calls: 2}, {Kind: ToolDone}, {Kind: Steered}, {Kind: ToolDone}}
	b.ReportAllocs()
	for b.Loop() {
		s := New(1 << 30)
		for range 10 {
			for _, f := range facts {
				var err error
				if s, _, err = Next(s, f); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
