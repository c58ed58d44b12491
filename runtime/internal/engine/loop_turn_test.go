package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

// TestSteeringWaitsAtTheLastStep: at the last step max_steps allows, no
// steering boundary fires (fsm/turn): steering queued while the model
// answers with two tool calls does not cut the second, nothing is
// delivered, the run ends with max_steps_reached, and the message is
// undelivered.
func TestSteeringWaitsAtTheLastStep(t *testing.T) {
	f, rcp := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			if err := rc.Steer("stop listing"); err != nil {
				t.Error(err)
			}
		}
	}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}, ToolCall{ID: "b", Name: "ls", Arguments: `{"path":"."}`}))
	req := f.req("list the files")
	req.MaxSteps = new(1)
	evs, res, rc := runSteered(t, f, rcp, req)
	if res.Status != "blocked" || res.Error == nil || res.Error.Code != protocol.CodeMaxStepsReached || res.Steps != 1 || res.ToolCalls != 2 {
		t.Fatalf("result %+v", res)
	}
	want := "accepted,started,model_step,tool_start,tool_policy,tool_finish,tool_start,tool_policy,tool_finish,settled,final_result"
	if got := typesNoDeltas(evs); got != want {
		t.Errorf("events\n %s\nwant\n %s", got, want)
	}
	if got, want := rc.Undelivered(), []QueuedMessage{{Kind: KindSteering, Text: "stop listing"}}; !cmp.Equal(got, want) {
		t.Errorf("undelivered %+v, want %+v", got, want)
	}
}
