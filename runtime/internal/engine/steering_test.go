package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

// hooked calls hook(n) as model call n (from 0) starts, then answers from
// the scripted turns: the test acts at a known point of the run.
type hooked struct {
	mu   sync.Mutex
	n    int
	hook func(n int)
	next *scripted
}

func (h *hooked) Stream(ctx context.Context, req ProviderRequest) (ProviderStream, error) {
	h.mu.Lock()
	n := h.n
	h.n++
	h.mu.Unlock()
	h.hook(n)
	return h.next.Stream(ctx, req)
}

// published hands the run's RunControl from the test goroutine to the
// provider's hook: Agent.Run may call the model before it returns, so the
// hook waits until the test has the control in hand.
type published struct {
	ready chan struct{}
	rc    *RunControl
}

func (p *published) set(rc *RunControl) { p.rc = rc; close(p.ready) }

func (p *published) get() *RunControl { <-p.ready; return p.rc }

// steeringFixture is a fixture whose provider runs hook at each model call;
// the hook reaches the run through the published control.
func steeringFixture(t *testing.T, hook func(rc *RunControl, n int), turns ...[]StreamEvent) (*fixture, *published) {
	t.Helper()
	f := newFixture(t, turns...)
	pub := &published{ready: make(chan struct{})}
	h := &hooked{next: f.prov, hook: func(n int) { hook(pub.get(), n) }}
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return h, nil },
		Sleep:           func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	return f, pub
}

// runSteered starts req, publishes its RunControl to the hook, and returns
// the events and result.
func runSteered(t *testing.T, f *fixture, pub *published, req RunRequest) ([]Event, protocol.FinalResult, *RunControl) {
	t.Helper()
	rc, err := f.agent.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	pub.set(rc)
	var evs []Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	return evs, rc.Wait(), rc
}

func typesNoDeltas(evs []Event) string {
	var b []string
	for _, ev := range evs {
		if ev.Type != protocol.TypeModelDelta {
			b = append(b, string(ev.Type))
		}
	}
	return strings.Join(b, ",")
}

// lastUserTexts returns the user texts of a request's conversation.
func userTexts(req ProviderRequest) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestSteerMidTurnSkipsTheRest: steering queued while the model answers
// with two tool calls is delivered after the first call; the second is not
// run, and the model is told so; the run goes on.
func TestSteerMidTurnSkipsTheRest(t *testing.T) {
	f, rcp := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			if err := rc.Steer("stop listing, read README instead"); err != nil {
				t.Error(err)
			}
		}
	},
		calls(ToolCall{ID: "a", Name: "ls", Arguments: `{}`}, ToolCall{ID: "b", Name: "ls", Arguments: `{"path":"."}`}),
		text("ok, reading README"))
	req := f.req("list the files")
	req.SessionID = "steer"
	evs, res, rc := runSteered(t, f, rcp, req)
	if res.Status != "completed" || res.Steps != 2 || res.ToolCalls != 1 {
		t.Fatalf("result %+v", res)
	}
	want := "accepted,started,model_step,tool_start,tool_policy,tool_finish,steering_delivered,model_step,settled,final_result"
	if got := typesNoDeltas(evs); got != want {
		t.Errorf("events\n %s\nwant\n %s", got, want)
	}
	second := f.prov.requests()[1]
	var results []string
	for _, m := range second.Messages {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID+":"+m.Text)
		}
	}
	if len(results) != 2 || !strings.HasPrefix(results[1], "b:Not run: the user sent a message") {
		t.Errorf("tool results sent back: %q", results)
	}
	if got := userTexts(second); !cmp.Equal(got, []string{"list the files", "stop listing, read README instead"}) {
		t.Errorf("user messages %q", got)
	}
	if u := rc.Undelivered(); len(u) != 0 {
		t.Errorf("undelivered %+v", u)
	}
	data, _ := os.ReadFile(*res.SessionFile)
	if !strings.Contains(string(data), `"origin":"steering"`) {
		t.Error("the session does not mark the steering message")
	}
	if err := rc.Steer("too late"); !errors.Is(err, ErrRunEnded) {
		t.Errorf("Steer after the end: %v", err)
	}
}

// TestFollowUpContinuesTheRun: a follow-up waits for the answer, then the
// run goes on with it; steering queued with it is delivered first.
func TestFollowUpContinuesTheRun(t *testing.T) {
	f, rcp := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			rc.FollowUp("now summarize")
			rc.Steer("answer in French")
		}
	}, text("first answer"), text("réponse"), text("résumé"))
	evs, res, _ := runSteered(t, f, rcp, f.req("question"))
	if res.Status != "completed" || res.Output != "résumé" || res.Steps != 3 {
		t.Fatalf("result %+v", res)
	}
	want := "accepted,started,model_step,steering_delivered,model_step,follow_up_delivered,model_step,settled,final_result"
	if got := typesNoDeltas(evs); got != want {
		t.Errorf("events\n %s\nwant\n %s", got, want)
	}
	reqs := f.prov.requests()
	if got := userTexts(reqs[2]); !cmp.Equal(got, []string{"question", "answer in French", "now summarize"}) {
		t.Errorf("third request's user messages %q", got)
	}
	var d *protocol.FollowUpDelivered
	for _, ev := range evs {
		if ev.Type == protocol.TypeFollowUpDelivered {
			d = ev.Data.(*protocol.FollowUpDelivered)
		}
	}
	if d == nil || d.Step != 3 || d.Text != "now summarize" {
		t.Errorf("follow_up_delivered %+v", d)
	}
}

// TestQueuedMessagesDroppedWhenTheRunEnds: a run that fails, or reaches
// its last step, drops what is queued; Undelivered lists it in order.
func TestQueuedMessagesDroppedWhenTheRunEnds(t *testing.T) {
	f, rcp := steeringFixture(t, func(rc *RunControl, n int) {
		rc.FollowUp("f1")
		rc.Steer("s1")
	}, text("only answer"))
	req := f.req("q")
	req.MaxSteps = new(1)
	evs, res, rc := runSteered(t, f, rcp, req)
	if res.Status != "completed" || res.Output != "only answer" || strings.Contains(typesNoDeltas(evs), "delivered") {
		t.Fatalf("last step: %s %+v", typesNoDeltas(evs), res)
	}
	want := []QueuedMessage{{Kind: KindSteering, Text: "s1"}, {Kind: KindFollowUp, Text: "f1"}}
	if got := rc.Undelivered(); !cmp.Equal(got, want) {
		t.Errorf("undelivered %+v, want %+v", got, want)
	}

	// A provider failure: the run ends in error, the queue is dropped.
	f2, rcp2 := steeringFixture(t, func(rc *RunControl, n int) {
		if n == 0 {
			rc.Steer("s")
		}
	})
	_, res, rc = runSteered(t, f2, rcp2, f2.req("q"))
	if res.Status != "error" || !cmp.Equal(rc.Undelivered(), []QueuedMessage{{Kind: KindSteering, Text: "s"}}) {
		t.Errorf("failed run: %+v, undelivered %+v", res, rc.Undelivered())
	}
}

func TestSteerRefusesBadText(t *testing.T) {
	f, rcp := steeringFixture(t, func(rc *RunControl, n int) {
		for _, s := range []string{"", "\xff", strings.Repeat("x", MaxPromptBytes+1)} {
			if err := rc.Steer(s); !errors.Is(err, ErrMessageInvalid) {
				t.Errorf("Steer(%.10q): %v", s, err)
			}
			if err := rc.FollowUp(s); !errors.Is(err, ErrMessageInvalid) {
				t.Errorf("FollowUp(%.10q): %v", s, err)
			}
		}
	}, text("ok"))
	if _, res, _ := runSteered(t, f, rcp, f.req("q")); res.Status != "completed" || res.Steps != 1 {
		t.Errorf("result %+v", res)
	}
}
