package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toggleFixture is a steering fixture on a reasoning route of the given
// wire mode, qualified for changes during a run (reasoning_updates).
func toggleFixture(t *testing.T, mode string, hook func(rc *RunControl, n int), turns ...[]StreamEvent) (*fixture, *published, RunRequest) {
	t.Helper()
	f, pub := steeringFixture(t, hook, turns...)
	req := f.req("list the files")
	req.SessionID = "toggle"
	qualify(t, f.home, &req, mode, "http://127.0.0.1:9/v1", false)
	return f, pub, req
}

func efforts(reqs []ProviderRequest) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.ReasoningEffort
	}
	return out
}

// sessionLog summarizes a session file's records in order: user messages
// with their origin, reasoning changes with their effort (and ultra),
// reasoning updates with theirs, run ends.
func sessionLog(t *testing.T, path string) []string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Type, Origin string
			Record       struct {
				Effort string
				Ultra  bool
			}
			Effort  string
			Ultra   bool
			Message struct {
				Role            string
				ReasoningEffort string `json:"reasoning_effort"`
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Type == "message" && r.Message.Role == "user":
			out = append(out, strings.TrimSuffix("user:"+r.Origin, ":"))
		case r.Type == "message" && r.Message.Role == "developer":
			out = append(out, "update:"+r.Message.ReasoningEffort)
		case r.Type == "reasoning_change" && r.Ultra:
			out = append(out, "ultra:"+r.Effort)
		case r.Type == "reasoning_change":
			out = append(out, "reasoning:"+r.Effort)
		case r.Type == "run_end":
			out = append(out, "run_end")
		}
	}
	return out
}

// TestReasoningToggleWaitsForTheTurnOnAnthropic: on anthropic-messages,
// turning thinking on during a tool-use loop is held while the loop goes on
// (steering delivered after a tool result travels with that result, so it
// does not end the loop either), is neither persisted nor reported by
// Agent.Reasoning meanwhile, and applies, persisted and reported, at the
// first call that begins a new assistant turn: here the follow-up after the
// answer.
func TestReasoningToggleWaitsForTheTurnOnAnthropic(t *testing.T) {
	var seen []string
	var f *fixture
	f, pub, req := toggleFixture(t, "anthropic-messages", func(rc *RunControl, n int) {
		seen = append(seen, f.agent.Reasoning().Effort)
		if n == 0 {
			if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "high"}); err != nil {
				t.Error(err)
			}
			rc.Steer("look at the docs too")
			rc.FollowUp("now summarize")
		}
	},
		calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}),
		calls(ToolCall{ID: "b", Name: "ls", Arguments: `{"path":"."}`}),
		text("two listings"),
		text("summary"))
	_, res, _ := runSteered(t, f, pub, req)
	if res.Status != "completed" || res.Steps != 4 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if got, want := efforts(f.prov.requests()), []string{"", "", "", "high"}; !cmp.Equal(got, want) {
		t.Errorf("efforts per call %q, want %q", got, want)
	}
	if want := []string{"", "", "", "high"}; !cmp.Equal(seen, want) {
		t.Errorf("Agent.Reasoning() at each call %q, want %q", seen, want)
	}
	if got := f.agent.Reasoning().Effort; got != "high" {
		t.Errorf("Agent.Reasoning() after the run %q", got)
	}
	want := []string{"user", "user:steering", "user:follow_up", "reasoning:high", "run_end"}
	if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, want) {
		t.Errorf("session records %q, want %q", got, want)
	}
}

// TestReasoningToggleHeldToTheNextRun: a toggle still held when the run
// ends is recorded before run_end, so the session's next run starts with
// it; turning thinking off is held like turning it on.
func TestReasoningToggleHeldToTheNextRun(t *testing.T) {
	for _, tc := range []struct{ from, to string }{{"", "medium"}, {"high", ""}} {
		t.Run(tc.from+"→"+tc.to, func(t *testing.T) {
			f, pub, req := toggleFixture(t, "anthropic-messages", func(rc *RunControl, n int) {
				if n == 0 {
					if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: tc.to}); err != nil {
						t.Error(err)
					}
				}
			}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"), text("next"))
			req.ReasoningEffort = effort(tc.from)
			_, res, _ := runSteered(t, f, pub, req)
			if res.Status != "completed" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			if got := f.agent.Reasoning().Effort; got != tc.to {
				t.Errorf("Agent.Reasoning() after the run %q, want the recorded %q", got, tc.to)
			}
			// The next run on the session names no effort: it restores the
			// recorded one. (The hook acts at the first run's first call only.)
			next := req
			next.RunID, next.Prompt, next.ReasoningEffort = "run-2", "and then?", nil
			rc, err := f.agent.Run(context.Background(), next)
			if err != nil {
				t.Fatal(err)
			}
			for range rc.Events() {
			}
			if res := rc.Wait(); res.Status != "completed" {
				t.Fatalf("next run %+v %+v", res, res.Error)
			}
			if got, want := efforts(f.prov.requests()), []string{tc.from, tc.from, tc.to}; !cmp.Equal(got, want) {
				t.Errorf("efforts per call %q, want %q", got, want)
			}
			log := sessionLog(t, *res.SessionFile)
			want := []string{"user", "reasoning:" + tc.to, "run_end", "user", "run_end"}
			if tc.from != "" {
				want = append([]string{"reasoning:" + tc.from}, want...)
			}
			if !cmp.Equal(log, want) {
				t.Errorf("session records %q, want %q", log, want)
			}
		})
	}
}

// TestReasoningChangeInsideTheLoop: on a qualified route, what may change
// inside an assistant turn applies at the next boundary, tool-use loop or
// not. A change between two efforts is a reasoning update on every wire:
// the request keeps its effort, and the conversation gets the update
// message, recorded in the session. A change to or from the route's
// default changes the baseline, at once on the wires other than
// anthropic-messages.
func TestReasoningChangeInsideTheLoop(t *testing.T) {
	for _, tc := range []struct {
		mode, from, to string
		update         bool
	}{
		{"anthropic-messages", "low", "high", true},
		{"anthropic-messages", "high", "medium", true},
		{"openai-responses", "high", "low", true},
		{"openai-compatible", "low", "high", true},
		{"openai-responses", "", "high", false},
		{"openai-responses", "high", "", false},
		{"openai-compatible", "", "low", false},
	} {
		t.Run(tc.mode+":"+tc.from+"→"+tc.to, func(t *testing.T) {
			f, pub, req := toggleFixture(t, tc.mode, func(rc *RunControl, n int) {
				if n == 0 {
					if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: tc.to}); err != nil {
						t.Error(err)
					}
				}
			}, calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}), text("done"))
			req.ReasoningEffort = effort(tc.from)
			_, res, _ := runSteered(t, f, pub, req)
			if res.Status != "completed" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			reqs := f.prov.requests()
			wantEfforts, change := []string{tc.from, tc.to}, "reasoning:"+tc.to
			if tc.update {
				wantEfforts, change = []string{tc.from, tc.from}, "update:"+tc.to
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Role != "developer" || last.ReasoningEffort != tc.to || last.Text != "Reasoning effort is now "+tc.to+"." {
					t.Errorf("the second call's last message %+v, want the reasoning update", last)
				}
			}
			if got := efforts(reqs); !cmp.Equal(got, wantEfforts) {
				t.Errorf("efforts per call %q, want %q", got, wantEfforts)
			}
			if got := f.agent.Reasoning().Effort; got != tc.to {
				t.Errorf("Agent.Reasoning() %q", got)
			}
			want := []string{"user", change, "run_end"}
			if tc.from != "" {
				want = append([]string{"reasoning:" + tc.from}, want...)
			}
			if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, want) {
				t.Errorf("session records %q, want %q", got, want)
			}
		})
	}
}

// TestReasoningSetAfterTheLastBoundary: a change made during the last model
// call, which no boundary follows, is recorded for the next run instead of
// being lost (here a reasoning update), and SetReasoning is refused once
// the run is ending.
func TestReasoningSetAfterTheLastBoundary(t *testing.T) {
	f, pub, req := toggleFixture(t, "openai-responses", func(rc *RunControl, n int) {
		if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"}); err != nil {
			t.Error(err)
		}
	}, text("done"))
	req.ReasoningEffort = new("high")
	_, res, rc := runSteered(t, f, pub, req)
	if res.Status != "completed" || f.agent.Reasoning().Effort != "low" {
		t.Fatalf("result %+v, Agent.Reasoning() %+v", res, f.agent.Reasoning())
	}
	if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "medium"}); !errors.Is(err, ErrRunEnded) {
		t.Errorf("SetReasoning after the end: %v", err)
	}
	want := []string{"reasoning:high", "user", "update:low", "run_end"}
	if got := sessionLog(t, *res.SessionFile); !cmp.Equal(got, want) {
		t.Errorf("session records %q, want %q", got, want)
	}
}

// effort is a request's reasoning effort: "" asks for none.
func effort(e string) *string {
	if e == "" {
		return nil
	}
	return &e
}
