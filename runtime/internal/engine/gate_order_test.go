package engine

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/gate"
)

// The order at the would-stop point: pending steering first (no gate), else
// the gate, then queued follow-ups, else settled and final_result.

// recordingGate answers from a list and records what it reviewed; during
// review n it calls during(n) first.
type recordingGate struct {
	mu      sync.Mutex
	answers []gate.Decision
	inputs  []gate.Input
	during  func(n int)
}

func (g *recordingGate) Review(_ context.Context, in gate.Input) (gate.Decision, error) {
	g.mu.Lock()
	n := len(g.inputs)
	g.inputs = append(g.inputs, in)
	g.mu.Unlock()
	if g.during != nil {
		g.during(n)
	}
	return g.answers[n], nil
}

func (g *recordingGate) reviewed() []gate.Input {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]gate.Input(nil), g.inputs...)
}

func gateSteps(in []gate.Input) string {
	var b []string
	for _, i := range in {
		b = append(b, i.CandidateText+"@"+string(rune('0'+i.Step))+"#"+string(rune('0'+i.Attempt)))
	}
	return strings.Join(b, " ")
}

// TestGatePendingSteeringBypassesTheGate: steering queued while the model
// answers is delivered at the would-stop point without asking the gate;
// the next answer is reviewed.
func TestGatePendingSteeringBypassesTheGate(t *testing.T) {
	f, pub := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			if err := rc.Steer("also update the docs"); err != nil {
				t.Error(err)
			}
		}
	}, text("first answer"), text("docs too"))
	g := &recordingGate{answers: []gate.Decision{{Verdict: gate.Accept}}}
	if err := f.agent.SetTerminalGate(g); err != nil {
		t.Fatal(err)
	}
	evs, res, _ := runSteered(t, f, pub, f.req("fix it"))
	if res.Status != "completed" || res.Output != "docs too" {
		t.Fatalf("result %+v", res)
	}
	if got, want := typesNoDeltas(evs), "accepted,started,model_step,steering_delivered,model_step,settled,final_result"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if got := gateSteps(g.reviewed()); got != "docs too@2#1" {
		t.Errorf("reviewed %s", got)
	}
}

// TestGateBeforeFollowUps: a follow-up waits for a candidate the gate
// accepts; a rejection sends the reason (then steering that came during the
// review) instead; after an accepted candidate the follow-up goes on and
// the count of rejections starts again.
func TestGateBeforeFollowUps(t *testing.T) {
	f, pub := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			if err := rc.FollowUp("now write the changelog"); err != nil {
				t.Error(err)
			}
		}
	}, text("answer one"), text("answer two"), text("changelog written"))
	g := &recordingGate{answers: []gate.Decision{
		{Verdict: gate.Reject, Reason: "run the tests first"},
		{Verdict: gate.Accept},
		{Verdict: gate.Accept},
	}}
	g.during = func(n int) {
		if n == 0 {
			if err := pub.get().Steer("and keep it short"); err != nil {
				t.Error(err)
			}
		}
	}
	if err := f.agent.SetTerminalGate(g); err != nil {
		t.Fatal(err)
	}
	evs, res, _ := runSteered(t, f, pub, f.req("fix it"))
	if res.Status != "completed" || res.Output != "changelog written" || res.Steps != 3 {
		t.Fatalf("result %+v", res)
	}
	want := "accepted,started,model_step,candidate_rejected,steering_delivered,model_step,follow_up_delivered,model_step,settled,final_result"
	if got := typesNoDeltas(evs); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if got := gateSteps(g.reviewed()); got != "answer one@1#1 answer two@2#2 changelog written@3#1" {
		t.Errorf("reviewed %s", got)
	}
	// The second request holds the rejected candidate, then the reason,
	// then the steering; the follow-up reached only the third.
	reqs := f.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[1].Messages
	n := len(msgs)
	if n < 4 || msgs[n-3].Role != "assistant" || msgs[n-3].Text != "answer one" ||
		msgs[n-2].Role != "user" || !strings.Contains(msgs[n-2].Text, "run the tests first") ||
		msgs[n-1].Text != "and keep it short" {
		t.Errorf("second request's conversation: %+v", msgs)
	}
	if u := userTexts(reqs[1]); strings.Contains(strings.Join(u, "|"), "changelog") {
		t.Errorf("the follow-up was delivered before an accepted candidate: %v", u)
	}
	if u := userTexts(reqs[2]); u[len(u)-1] != "now write the changelog" {
		t.Errorf("third request's user texts %v", u)
	}
	// The session marks the reason's message.
	sess, err := os.ReadFile(*res.SessionFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sess), `"origin":"terminal_gate"`) {
		t.Error("the session has no terminal_gate message")
	}
}

// TestGateAtTheLastStep: the last step's candidate is reviewed too; a
// rejection there leaves no step to act on it: max_steps_reached, and the
// candidate is not the output.
func TestGateAtTheLastStep(t *testing.T) {
	f := newFixture(t, text("quick answer"))
	g := &recordingGate{answers: []gate.Decision{{Verdict: gate.Reject, Reason: "check it"}}}
	if err := f.agent.SetTerminalGate(g); err != nil {
		t.Fatal(err)
	}
	one := 1
	req := f.req("fix it")
	req.MaxSteps = &one
	evs, res := f.run(req)
	if res.Status != "blocked" || res.Error == nil || res.Error.Code != protocol.CodeMaxStepsReached || res.Output != "" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if got, want := typesNoDeltas(evs), "accepted,started,model_step,candidate_rejected,settled,final_result"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestGateRejectionNeverOutput: a run that fails after a rejection does
// not report the rejected candidate as its output.
func TestGateRejectionNeverOutput(t *testing.T) {
	f := newFixture(t, text("rejected answer"))
	f.prov.errs = []error{nil, &ProviderError{Kind: "http_status", Status: 401, Message: "bad key"}}
	g := &recordingGate{answers: []gate.Decision{{Verdict: gate.Reject, Reason: "no"}}}
	if err := f.agent.SetTerminalGate(g); err != nil {
		t.Fatal(err)
	}
	_, res := f.run(f.req("fix it"))
	if res.Status != "error" || res.Output != "" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
}
