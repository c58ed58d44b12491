package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetReasoningNeedsModelAndEndpoint: a change during a run is admitted
// only where both the model and its endpoint (the models.json provider)
// declare reasoning_updates. Where one is missing, SetReasoning returns
// ErrReasoningNotQualified naming it and nothing changes: not the
// requests' effort, not the session, not Agent.Reasoning. With both, the
// change is a reasoning update.
func TestSetReasoningNeedsModelAndEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name            string
		model, endpoint bool
		missing         string // "" both declare
	}{
		{"both", true, true, ""},
		{"the model's missing", false, true, `the model "lab-model" does not declare reasoning_updates`},
		{"the endpoint's missing", true, false, `the endpoint "lab" does not declare reasoning_updates`},
		{"both missing", false, false, `neither the model "lab-model" nor the endpoint "lab" declares reasoning_updates`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got error
			f, pub := steeringFixture(t, func(rc *RunControl, n int) {
				if n == 0 {
					got = rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"})
				}
			}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"))
			req := f.req("list the files")
			req.SessionID = "endpoint"
			declare(t, f.home, &req, "openai-responses", "http://127.0.0.1:9/v1", tc.model, tc.endpoint, false)
			req.ReasoningEffort = new("high")
			_, res, _ := runSteered(t, f, pub, req)
			if res.Status != "completed" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			wantEfforts, wantLog, wantAgent := []string{"high", "high"}, []string{"reasoning:high", "user", "update:low", "run_end"}, "low"
			if tc.missing != "" {
				if !errors.Is(got, ErrReasoningNotQualified) || !strings.HasSuffix(got.Error(), ": "+tc.missing) {
					t.Fatalf("SetReasoning: %v, want ErrReasoningNotQualified ending with %q", got, tc.missing)
				}
				wantLog, wantAgent = []string{"reasoning:high", "user", "run_end"}, "high"
			} else if got != nil {
				t.Fatalf("SetReasoning on a qualified route: %v", got)
			}
			if got := efforts(f.prov.requests()); !cmp.Equal(got, wantEfforts) {
				t.Errorf("efforts per call %q, want %q", got, wantEfforts)
			}
			if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, wantLog) {
				t.Errorf("session records %q, want %q", got, wantLog)
			}
			if got := f.agent.Reasoning().Effort; got != wantAgent {
				t.Errorf("Agent.Reasoning() %q, want %q", got, wantAgent)
			}
		})
	}
}

// TestSetReasoningBuiltinRoute: a built-in route's endpoint declares
// reasoning updates but no built-in model does, so a change during a run
// is refused naming the model, as before endpoints declared anything.
func TestSetReasoningBuiltinRoute(t *testing.T) {
	var got error
	f, pub := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			got = rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"})
		}
	}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"))
	if err := os.MkdirAll(filepath.Join(f.home, ".octet", "credentials"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.home, ".octet", "credentials", "openai.json"), []byte(`{"api_key":"sk-builtin-key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	req := f.req("list the files")
	req.Route, req.Model, req.ReasoningEffort = nil, "gpt-5.6", new("high")
	_, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if want := `the model "gpt-5.6" does not declare reasoning_updates`; !errors.Is(got, ErrReasoningNotQualified) || !strings.HasSuffix(got.Error(), ": "+want) {
		t.Fatalf("SetReasoning on a built-in route: %v, want one ending with %q", got, want)
	}
	if got, want := efforts(f.prov.requests()), []string{"high", "high"}; !cmp.Equal(got, want) {
		t.Errorf("efforts per call %q, want %q", got, want)
	}
}
