package turn

// A rapid test of the machine against a simulated engine: random step
// limits, answers (tool calls or none, cut by the output cap, native
// steers outstanding), gate answers, steering that cuts tool calls,
// failures of any effect and cancellation anywhere. The engine performs
// each batch in order as the engine does; after the run it checks the
// invariants of the package doc.

import (
	"testing"

	"pgregory.net/rapid"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
)

func TestTurnInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New(rapid.IntRange(0, 5).Draw(t, "max_steps"))
		fact := Fact{Kind: Begin}
		settles, modelCalls, lastCallStep := 0, 0, 0
		ran := map[int]bool{} // the current step's calls run or skipped
		delivered := 0        // Deliver effects of the current step
		turnFired := false    // SteerAfterTurn of the current step
		var canceledFact bool
		for i := 0; ; i++ {
			if i > 1000 {
				t.Fatal("the run never settled")
			}
			// Sometimes the engine observes cancellation.
			fact.Canceled = rapid.IntRange(0, 15).Draw(t, "cancel") == 0
			canceledFact = fact.Canceled
			before := s
			next, effs, err := Next(s, fact)
			if err != nil {
				t.Fatalf("%v in %v: %v", fact.Kind, s.Phase, err)
			}
			s = next
			if canceledFact {
				if len(effs) != 1 || effs[0].Kind != Settle || effs[0].Outcome.Code != protocol.CodeCanceled || effs[0].Outcome.Status != fsmrun.StatusError {
					t.Fatalf("a canceled fact gave %+v", effs)
				}
			}
			if fact.Kind == Begin && before.Step != s.Step {
				ran, delivered, turnFired = map[int]bool{}, 0, false
			}
			for _, e := range effs {
				if e.Kind == CallModel {
					modelCalls++ // given, whether or not the boundary work before it fails
				}
			}
			// Perform the batch.
			fact = Fact{Kind: Begin}
			yielded := false
			for j, e := range effs {
				if yielded {
					t.Fatalf("effect %v after the one that yields a fact: %+v", e.Kind, effs)
				}
				failed := e.Kind != Settle && rapid.IntRange(0, 20).Draw(t, "fail") == 0
				switch e.Kind {
				case Settle:
					settles++
					if j != len(effs)-1 {
						t.Fatalf("settle is not the last effect: %+v", effs)
					}
				case AdmitReasoning, Compact:
					if e.Step != s.Step || s.Phase != Calling {
						t.Fatalf("%v for step %d in step %d, phase %v", e.Kind, e.Step, s.Step, s.Phase)
					}
				case CallModel:
					if settles > 0 || e.Step != lastCallStep+1 || e.Step > s.MaxSteps {
						t.Fatalf("call for step %d after step %d (max %d, settles %d)", e.Step, lastCallStep, s.MaxSteps, settles)
					}
					lastCallStep = e.Step
					if !failed {
						yielded = true
						fact = Fact{Kind: Answer, Length: rapid.IntRange(0, 10).Draw(t, "length") == 0,
							Calls: rapid.IntRange(0, 4).Draw(t, "calls"), Outstanding: rapid.Bool().Draw(t, "outstanding")}
					}
				case AwaitNative:
					if !e.WithCalls && !failed {
						yielded = true
						fact = Fact{Kind: Awaited, Successor: rapid.Bool().Draw(t, "successor")}
					}
				case AskGate:
					if e.LastStep != (s.Step >= s.MaxSteps) || s.Calls != 0 {
						t.Fatalf("gate asked with last=%v at step %d of %d, %d calls", e.LastStep, s.Step, s.MaxSteps, s.Calls)
					}
					if !failed {
						yielded = true
						fact = Fact{Kind: Gate, End: rapid.Bool().Draw(t, "end"), Status: fsmrun.StatusCompleted}
					}
				case RunTool:
					if ran[e.Index] || e.Index != len(ran) || e.Index >= s.Calls {
						t.Fatalf("tool %d of %d, run so far %v", e.Index, s.Calls, ran)
					}
					ran[e.Index] = true
					if !failed {
						yielded = true
						fact = Fact{Kind: ToolDone, Outstanding: rapid.Bool().Draw(t, "outstanding")}
					}
				case SteerAfterTool:
					if s.Step >= s.MaxSteps || len(ran) >= s.Calls || len(ran) == 0 {
						t.Fatalf("after-tool boundary at step %d of %d after %d of %d calls", s.Step, s.MaxSteps, len(ran), s.Calls)
					}
					yielded = true // a boundary takes from the queue: it does not fail
					fact = Fact{Kind: Steered, Skip: rapid.Bool().Draw(t, "skip"), Outstanding: rapid.Bool().Draw(t, "outstanding")}
					failed = false
				case SkipTools:
					for k := e.Index; k < s.Calls; k++ {
						if ran[k] {
							t.Fatalf("skips call %d, which ran", k)
						}
						ran[k] = true
					}
				case SteerAfterTurn:
					if s.Step >= s.MaxSteps || s.Skipped || turnFired {
						t.Fatalf("after-turn boundary at step %d of %d (skipped %v, fired %v)", s.Step, s.MaxSteps, s.Skipped, turnFired)
					}
					turnFired = true
					failed = false
				case Deliver:
					delivered++
					if delivered > 1 || e.Step != s.Step+1 || j != len(effs)-1 || s.Phase != Idle || len(ran) != s.Calls {
						t.Fatalf("delivery %d to step %d in step %d (phase %v, %d of %d calls done): %+v", delivered, e.Step, s.Step, s.Phase, len(ran), s.Calls, effs)
					}
				}
				if failed {
					fact = Fact{Kind: Fail, Code: protocol.CodeSessionWriteFailed, Msg: "x"}
					if rapid.Bool().Draw(t, "unknown") {
						fact.Code = protocol.CodeUnsettledNativeSteering
					}
					break
				}
			}
			if s.Phase == Settled {
				break
			}
			if !yielded && fact.Kind == Begin && s.Phase != Idle {
				t.Fatalf("a batch without a fact left phase %v: %+v", s.Phase, effs)
			}
		}
		if settles != 1 {
			t.Fatalf("%d settles", settles)
		}
		if modelCalls > s.MaxSteps || modelCalls != s.ModelCalls {
			t.Fatalf("%d model calls (state says %d), max_steps %d", modelCalls, s.ModelCalls, s.MaxSteps)
		}
		// Nothing after the settle.
		for k := Begin; k <= Fail; k++ {
			if _, effs, err := Next(s, Fact{Kind: k, Canceled: true}); err == nil || effs != nil {
				t.Fatalf("%v after the settle gave %+v", k, effs)
			}
		}
	})
}
