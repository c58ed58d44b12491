package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
)

// The terminal gate through the Go API against the fake provider: the run's
// model on one fake server, a ModelGate's model on another, each answering
// from its own script.

const (
	gateRunKey  = "run-key-secret-4567"
	gateGateKey = "gate-key-secret-8901"
)

type gateRig struct {
	t         *testing.T
	run, gate *fakeprovider.Server
	agent     *runtime.Agent
	home, ws  string
}

// accept, reject and stop are the gate model's answers.
func accept() fakeprovider.Turn { return fakeprovider.Turn{Text: `{"decision":"accept"}`} }
func reject(reason string) fakeprovider.Turn {
	b, _ := json.Marshal(map[string]string{"decision": "reject", "reason": reason})
	return fakeprovider.Turn{Text: "Verdict:\n" + string(b), Usage: fakeprovider.Usage{Input: 30, Output: 7}}
}

func newGateRig(t *testing.T, runTurns []fakeprovider.Turn, gateTurns ...fakeprovider.Turn) *gateRig {
	t.Helper()
	r := &gateRig{t: t, home: t.TempDir(), ws: t.TempDir()}
	var err error
	if r.run, err = fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: runTurns}, APIKey: gateRunKey}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.run.Close() })
	if r.gate, err = fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: gateTurns}, APIKey: gateGateKey}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.gate.Close() })
	r.agent, err = runtime.New(runtime.Options{Home: r.home, Getenv: func(string) string { return "" },
		Sleep:  func(context.Context, time.Duration) error { return nil },
		Jitter: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.agent.SetTerminalGate(&runtime.ModelGate{Model: "gate-model", Instructions: "The answer must name the file it changed.",
		Route: &runtime.InlineRoute{Provider: "gatefake", BaseURL: r.gate.BaseURL(fakeprovider.ModeChat), APIKey: gateGateKey}}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *gateRig) req(prompt string) runtime.RunRequest {
	return runtime.RunRequest{RunID: "run-1", Workspace: r.ws, Model: "run-model", Prompt: prompt, SessionID: "gated",
		SessionDir: filepath.Join(r.home, "sessions"), Tools: []string{"ls"},
		Route: &runtime.InlineRoute{Provider: "runfake", BaseURL: r.run.BaseURL(fakeprovider.ModeChat), APIKey: gateRunKey}}
}

// do runs req to its end, checking the lifecycle invariants of package
// spec on every event, and that neither credential leaks.
func (r *gateRig) do(req runtime.RunRequest) ([]runtime.Event, protocol.FinalResult) {
	r.t.Helper()
	rc, err := r.agent.Run(context.Background(), req)
	if err != nil {
		r.t.Fatalf("Run refused: %v", err)
	}
	evs, lc := drainChecked(r.t, rc)
	if err := spec.RunComplete(lc); err != nil {
		r.t.Fatalf("lifecycle: %v", err)
	}
	res := rc.Wait()
	all, _ := json.Marshal(evs)
	session, _ := os.ReadFile(*res.SessionFile)
	for _, k := range []string{gateRunKey, gateGateKey} {
		if strings.Contains(string(all), k) || strings.Contains(string(session), k) {
			r.t.Errorf("a credential appears in the events or the session")
		}
	}
	return evs, res
}

// gateSummary is the event types without model_delta.
func gateSummary(evs []runtime.Event) string {
	var out []string
	for _, ev := range evs {
		if ev.Type != protocol.TypeModelDelta {
			out = append(out, string(ev.Type))
		}
	}
	return strings.Join(out, ",")
}

func rejections(evs []runtime.Event) []protocol.CandidateRejected {
	var out []protocol.CandidateRejected
	for _, ev := range evs {
		if c, ok := ev.Data.(*protocol.CandidateRejected); ok {
			out = append(out, *c)
		}
	}
	return out
}

// bodyText is a request body as text, for containment checks.
func bodyText(t *testing.T, r fakeprovider.Request) string {
	t.Helper()
	b, err := json.Marshal(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGateAccepts(t *testing.T) {
	r := newGateRig(t, []fakeprovider.Turn{{Text: "Changed main.go."}}, accept())
	evs, res := r.do(r.req("fix the bug"))
	if res.Status != "completed" || res.Output != "Changed main.go." || res.Error != nil {
		t.Fatalf("result %+v", res)
	}
	if got, want := gateSummary(evs), "accepted,started,model_step,settled,final_result"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	greqs := r.gate.Requests()
	if len(greqs) != 1 {
		t.Fatalf("%d gate requests, want 1", len(greqs))
	}
	body := bodyText(t, greqs[0])
	for _, want := range []string{"The answer must name the file it changed.", "fix the bug", "Changed main.go.", "terminal gate"} {
		if !strings.Contains(body, want) {
			t.Errorf("the gate request lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, `"tools"`) {
		t.Error("the gate request offers tools")
	}
	// The gate's call is in the session's usage ledger.
	s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "gated")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Statistics(); st.ModelCalls != 2 {
		t.Errorf("statistics %+v, want the step and the gate call", st)
	}
}

// TestGateRejectsThenAccepts: the rejected candidate stays in the history as
// an assistant message followed by the reason, never as output; the next
// candidate is reviewed as attempt 2 and becomes the output.
func TestGateRejectsThenAccepts(t *testing.T) {
	r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}, {Text: "Done: changed main.go."}},
		reject("name the file you changed\x07"), accept())
	evs, res := r.do(r.req("fix the bug"))
	if res.Status != "completed" || res.Output != "Done: changed main.go." || res.Steps != 2 {
		t.Fatalf("result %+v", res)
	}
	if got, want := gateSummary(evs), "accepted,started,model_step,candidate_rejected,model_step,settled,final_result"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	// The reason is sanitized: the control character is replaced.
	want := []protocol.CandidateRejected{{Step: 1, Attempt: 1, MaxAttempts: 8, Reason: "name the file you changed"}}
	if got := rejections(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("candidate_rejected %+v, want %+v", got, want)
	}
	reqs := r.run.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d run requests", len(reqs))
	}
	msgs, _ := reqs[1].Body["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		roles = append(roles, fmt.Sprint(mm["role"])+":"+fmt.Sprint(mm["content"]))
	}
	joined := strings.Join(roles, "\n")
	if len(msgs) < 4 || !strings.HasPrefix(roles[len(roles)-2], "assistant:Done.") ||
		!strings.HasPrefix(roles[len(roles)-1], "user:") || !strings.Contains(roles[len(roles)-1], "name the file you changed") {
		t.Errorf("the next request's conversation does not end with the candidate and the reason:\n%s", joined)
	}
	// The second gate call numbers the candidate.
	if g := r.gate.Requests(); len(g) != 2 || !strings.Contains(bodyText(t, g[1]), "attempt 2") {
		t.Errorf("gate requests %d", len(g))
	}
}

func TestGateRejectsEightTimes(t *testing.T) {
	var turns, gates []fakeprovider.Turn
	for i := range 9 {
		turns = append(turns, fakeprovider.Turn{Text: fmt.Sprintf("candidate %d", i+1)})
		gates = append(gates, reject(fmt.Sprintf("not yet %d", i+1)))
	}
	r := newGateRig(t, turns, gates...)
	evs, res := r.do(r.req("fix the bug"))
	if res.Status != "blocked" || res.Error == nil || res.Error.Code != protocol.CodeTerminalGateExhausted || res.Output != "" || res.Steps != 8 {
		t.Fatalf("result %+v error %+v", res, res.Error)
	}
	if !strings.Contains(res.Error.Message, "not yet 8") {
		t.Errorf("message %q lacks the last reason", res.Error.Message)
	}
	rj := rejections(evs)
	if len(rj) != 8 {
		t.Fatalf("%d rejections, want 8", len(rj))
	}
	for i, c := range rj {
		if c.Step != i+1 || c.Attempt != i+1 || c.MaxAttempts != 8 || c.Reason != fmt.Sprintf("not yet %d", i+1) {
			t.Errorf("rejection %d: %+v", i, c)
		}
	}
	if n := len(r.run.Requests()); n != 8 {
		t.Errorf("%d model requests, want 8", n)
	}
	// The session ends with the last candidate: its reason went to no model.
	s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "gated")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ends := s.RunEnds(); len(ends) != 1 || ends[0].Code != protocol.CodeTerminalGateExhausted {
		t.Errorf("run ends %+v", ends)
	}
}

func TestGateStops(t *testing.T) {
	r := newGateRig(t, []fakeprovider.Turn{{Text: "I cannot."}}, fakeprovider.Turn{Text: `{"decision":"stop","reason":"the task needs credentials"}`})
	evs, res := r.do(r.req("deploy"))
	if res.Status != "blocked" || res.Error == nil || res.Error.Code != protocol.CodeTerminalGateStopped || res.Output != "" {
		t.Fatalf("result %+v error %+v", res, res.Error)
	}
	if !strings.Contains(res.Error.Message, "the task needs credentials") {
		t.Errorf("message %q", res.Error.Message)
	}
	if got, want := gateSummary(evs), "accepted,started,model_step,settled,final_result"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestGateFailsClosed: a gate model that keeps failing is retried as the
// terminal_gate operation, then ends the run terminal_gate_failed; so does
// an answer that is no verdict.
func TestGateFailsClosed(t *testing.T) {
	t.Run("retries exhausted", func(t *testing.T) {
		r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}}, accept())
		r.agent.SetMaxRetries(2)
		for range 3 {
			r.gate.InjectFault(fakeprovider.FaultStatus{Code: 503})
		}
		evs, res := r.do(r.req("fix the bug"))
		if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeTerminalGateFailed || res.Output != "" {
			t.Fatalf("result %+v error %+v", res, res.Error)
		}
		if !strings.Contains(res.Error.Message, "retries_exhausted") {
			t.Errorf("message %q", res.Error.Message)
		}
		if got, want := gateSummary(evs), "accepted,started,model_step,provider_operation_retry,provider_operation_retry,settled,final_result"; got != want {
			t.Errorf("events %s, want %s", got, want)
		}
		for i, ev := range evs {
			if o, ok := ev.Data.(*protocol.ProviderOperationRetry); ok {
				if o.Operation != protocol.OperationTerminalGate || o.MaxAttempts == nil || *o.MaxAttempts != 2 || o.Error == "" {
					t.Errorf("event %d: %+v", i, o)
				}
			}
		}
		if n := len(r.gate.Requests()); n != 3 {
			t.Errorf("%d gate requests, want 3", n)
		}
	})
	t.Run("retried, then accepted", func(t *testing.T) {
		r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}}, accept())
		r.gate.InjectFault(fakeprovider.FaultStatus{Code: 503})
		evs, res := r.do(r.req("fix the bug"))
		if res.Status != "completed" || res.Output != "Done." {
			t.Fatalf("result %+v", res)
		}
		if got, want := gateSummary(evs), "accepted,started,model_step,provider_operation_retry,settled,final_result"; got != want {
			t.Errorf("events %s, want %s", got, want)
		}
	})
	t.Run("no verdict", func(t *testing.T) {
		r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}}, fakeprovider.Turn{Text: "Looks fine to me!"})
		_, res := r.do(r.req("fix the bug"))
		if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeTerminalGateFailed || !strings.Contains(res.Error.Message, "no JSON object") {
			t.Fatalf("result %+v error %+v", res, res.Error)
		}
	})
	t.Run("reject without a reason", func(t *testing.T) {
		r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}}, fakeprovider.Turn{Text: `{"decision":"reject","reason":"  "}`})
		_, res := r.do(r.req("fix the bug"))
		if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeTerminalGateFailed || !strings.Contains(res.Error.Message, "without a reason") {
			t.Fatalf("result %+v error %+v", res, res.Error)
		}
	})
	t.Run("a Go gate's error", func(t *testing.T) {
		r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}})
		if err := r.agent.SetTerminalGate(runtime.TerminalGateFunc(func(context.Context, runtime.GateInput) (runtime.GateDecision, error) {
			return runtime.GateDecision{}, errors.New("the reviewer is away")
		})); err != nil {
			t.Fatal(err)
		}
		_, res := r.do(r.req("fix the bug"))
		if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeTerminalGateFailed || !strings.Contains(res.Error.Message, "the reviewer is away") {
			t.Fatalf("result %+v error %+v", res, res.Error)
		}
	})
}

// TestGateDelegatesToModelGate: a Go gate may wrap a ModelGate with the
// context it was given; outside a run a ModelGate refuses.
func TestGateDelegatesToModelGate(t *testing.T) {
	r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}, {Text: "Done, twice."}}, reject("say twice"), accept())
	mg := &runtime.ModelGate{Model: "gate-model", Instructions: "Say twice.",
		Route: &runtime.InlineRoute{Provider: "gatefake", BaseURL: r.gate.BaseURL(fakeprovider.ModeChat), APIKey: gateGateKey}}
	var seen []runtime.GateInput
	if err := r.agent.SetTerminalGate(runtime.TerminalGateFunc(func(ctx context.Context, in runtime.GateInput) (runtime.GateDecision, error) {
		seen = append(seen, in)
		return mg.Review(ctx, in)
	})); err != nil {
		t.Fatal(err)
	}
	_, res := r.do(r.req("say it"))
	if res.Status != "completed" || res.Output != "Done, twice." {
		t.Fatalf("result %+v", res)
	}
	want := []runtime.GateInput{{RunID: "run-1", Step: 1, CandidateText: "Done.", Attempt: 1, Prompt: "say it"},
		{RunID: "run-1", Step: 2, CandidateText: "Done, twice.", Attempt: 2, Prompt: "say it"}}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("gate inputs %+v, want %+v", seen, want)
	}
	if _, err := mg.Review(context.Background(), want[0]); !errors.Is(err, runtime.ErrGateOutsideRun) {
		t.Errorf("Review outside a run: %v", err)
	}
}

func TestSetTerminalGateChecksModelGate(t *testing.T) {
	a, err := runtime.New(runtime.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*runtime.ModelGate{{Instructions: "x"}, {Model: "m"}, {Model: "m", Instructions: " \n"}} {
		if err := a.SetTerminalGate(g); err == nil {
			t.Errorf("%+v accepted", g)
		}
	}
	if err := a.SetTerminalGate((*runtime.ModelGate)(nil)); err != nil {
		t.Errorf("a nil ModelGate: %v", err)
	}
}

// TestGateModelMissingRefusesTheRun: a gate whose model the catalog does not
// have refuses the run before anything ran.
func TestGateModelMissingRefusesTheRun(t *testing.T) {
	r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}})
	if err := r.agent.SetTerminalGate(&runtime.ModelGate{Model: "no-such-model", Instructions: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err := r.agent.Run(context.Background(), r.req("fix"))
	var re *runtime.RunError
	if !errors.As(err, &re) || re.Code != protocol.CodeModelNotFound || !strings.Contains(re.Message, "terminal gate") {
		t.Fatalf("Run: %v", err)
	}
	if n := len(r.run.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// ExampleAgent_SetTerminalGate makes every answer pass a model's check
// before it ends the run: the gate's model (a second fake provider here)
// rejects the first answer, the run goes on with its reason, and the second
// answer is accepted.
func ExampleAgent_SetTerminalGate() {
	model, _ := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "Fixed."}, {Text: "Fixed the off-by-one in main.go; go test passes."},
	}}})
	defer model.Close()
	judge, _ := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: `{"decision":"reject","reason":"Say what you changed and whether the tests pass."}`},
		{Text: `{"decision":"accept"}`},
	}}})
	defer judge.Close()
	home, _ := os.MkdirTemp("", "octet-example")
	defer os.RemoveAll(home)

	agent, _ := runtime.New(runtime.Options{Home: home})
	err := agent.SetTerminalGate(&runtime.ModelGate{
		Model:        "judge-model",
		Route:        &runtime.InlineRoute{Provider: "judge", BaseURL: judge.BaseURL(fakeprovider.ModeChat)},
		Instructions: "The answer must name the change and say whether the tests pass.",
	})
	if err != nil {
		panic(err)
	}
	rc, err := agent.Run(context.Background(), runtime.RunRequest{
		RunID: "run-1", Workspace: home, Model: "local-model", Prompt: "Fix the failing test.",
		SessionDir: filepath.Join(home, "sessions"),
		Route:      &runtime.InlineRoute{Provider: "local", BaseURL: model.BaseURL(fakeprovider.ModeChat)},
	})
	if err != nil {
		panic(err)
	}
	for ev := range rc.Events() {
		if c, ok := ev.Data.(*protocol.CandidateRejected); ok {
			fmt.Printf("rejected (%d of %d): %s\n", c.Attempt, c.MaxAttempts, c.Reason)
		}
	}
	res := rc.Wait()
	fmt.Println(res.Status+":", res.Output)
	// Output:
	// rejected (1 of 8): Say what you changed and whether the tests pass.
	// completed: Fixed the off-by-one in main.go; go test passes.
}

// TestGateReasonSanitized: a reason that quotes a credential, carries
// control characters or runs long is redacted, cleaned and cut before
// candidate_rejected, the model and the session see it.
func TestGateReasonSanitized(t *testing.T) {
	long := "bad\x00 answer, key " + gateRunKey + " and " + gateGateKey + " " + strings.Repeat("é", 3000)
	r := newGateRig(t, []fakeprovider.Turn{{Text: "Done."}, {Text: "Done again."}}, reject(long), accept())
	evs, res := r.do(r.req("fix the bug")) // do checks that no credential leaks
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	rj := rejections(evs)
	if len(rj) != 1 {
		t.Fatalf("%d rejections", len(rj))
	}
	reason := rj[0].Reason
	if len(reason) > runtime.MaxGateReasonBytes || !utf8.ValidString(reason) || !strings.HasPrefix(reason, "bad  answer, key [redacted] and [redacted] é") ||
		!strings.HasSuffix(reason, "…") {
		t.Errorf("reason %d bytes: %.80q…", len(reason), reason)
	}
	if body := bodyText(t, r.run.Requests()[1]); !strings.Contains(body, reason[:40]) || strings.Contains(body, gateRunKey) {
		t.Error("the model did not get the sanitized reason")
	}
}
