package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/spec"
)

// scripted is an in-memory Provider: each call answers with the next turn
// and records the request it got.
type scripted struct {
	mu    sync.Mutex
	turns [][]StreamEvent
	errs  []error // per call: Stream fails with it; nil means use the turn
	cuts  []error // per call: the turn's events, then the stream fails with it
	reqs  []ProviderRequest
	used  int // turns consumed
	// before, when set, is called with the call's index before the call
	// is answered (a test holds a call back with it).
	before func(n int)
}

func (s *scripted) Stream(ctx context.Context, req ProviderRequest) (ProviderStream, error) {
	if s.before != nil {
		s.mu.Lock()
		n := len(s.reqs)
		s.mu.Unlock()
		s.before(n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, req)
	if n < len(s.errs) && s.errs[n] != nil {
		return nil, s.errs[n]
	}
	if s.used >= len(s.turns) {
		return nil, &ProviderError{Kind: "http_status", Status: 500, Message: "script exhausted"}
	}
	st := &sliceStream{ctx: ctx, evs: s.turns[s.used]}
	if n < len(s.cuts) && s.cuts[n] != nil {
		st.fail = s.cuts[n] // a failed attempt does not consume the turn
	} else {
		s.used++
	}
	return st, nil
}

func (s *scripted) requests() []ProviderRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

type sliceStream struct {
	ctx  context.Context
	evs  []StreamEvent
	i    int
	err  error
	fail error // after the events up to the finish, fail with this
}

func (s *sliceStream) Next() bool {
	if s.ctx.Err() != nil {
		s.err = s.ctx.Err()
		return false
	}
	if s.fail != nil && s.i < len(s.evs) && (s.evs[s.i].Kind == StreamFinish || s.evs[s.i].Kind == StreamUsage) {
		s.err = s.fail
		return false
	}
	if s.i >= len(s.evs) {
		return false
	}
	s.i++
	return true
}
func (s *sliceStream) Event() StreamEvent { return s.evs[s.i-1] }
func (s *sliceStream) Err() error         { return s.err }
func (s *sliceStream) Close() error       { return nil }

func text(parts ...string) []StreamEvent {
	var evs []StreamEvent
	for _, p := range parts {
		evs = append(evs, StreamEvent{Kind: StreamText, Text: p})
	}
	return append(evs,
		StreamEvent{Kind: StreamUsage, Usage: ProviderUsage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 40}},
		StreamEvent{Kind: StreamFinish, FinishReason: FinishStop})
}

func calls(cs ...ToolCall) []StreamEvent {
	var evs []StreamEvent
	for _, c := range cs {
		evs = append(evs, StreamEvent{Kind: StreamToolCall, ToolCall: c})
	}
	return append(evs, StreamEvent{Kind: StreamUsage, Usage: ProviderUsage{InputTokens: 50, OutputTokens: 5}},
		StreamEvent{Kind: StreamFinish, FinishReason: FinishToolCalls})
}

type fixture struct {
	t         *testing.T
	home, ws  string
	sessions  string
	agent     *Agent
	prov      *scripted
	lastRoute Route
	slept     []time.Duration
}

func newFixture(t *testing.T, turns ...[]StreamEvent) *fixture {
	t.Helper()
	f := &fixture{t: t, home: t.TempDir(), ws: t.TempDir(), prov: &scripted{turns: turns}}
	f.sessions = filepath.Join(f.home, "sessions")
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		ProviderFactory: func(r Route) (Provider, error) { f.lastRoute = r; return f.prov, nil },
		// Recovery waits are recorded, not slept: tests assert delays, not time.
		Sleep:  func(_ context.Context, d time.Duration) error { f.slept = append(f.slept, d); return nil },
		Jitter: func() float64 { return 0 }, RecoveredOutput: testRecoveredOutput})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	return f
}

func (f *fixture) req(prompt string) RunRequest {
	return RunRequest{RunID: "run-1", Workspace: f.ws, Model: "local-model", Prompt: prompt, SessionDir: f.sessions,
		Route: &InlineRoute{Provider: "local", BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-test-secret-value"}}
}

// run executes req and returns its events and result, checking the run
// lifecycle invariants on the event sequence.
func (f *fixture) run(req RunRequest) ([]Event, protocol.FinalResult) {
	f.t.Helper()
	rc, err := f.agent.Run(context.Background(), req)
	if err != nil {
		f.t.Fatalf("Run refused: %v", err)
	}
	var evs []Event
	var lifecycle []spec.RunEvent
	for ev := range rc.Events() {
		evs = append(evs, ev)
		if ev.Type == typeRecoveredOutput {
			continue // Go API only: not part of the protocol's lifecycle
		}
		re := spec.RunEvent{Type: ev.Type}
		switch d := ev.Data.(type) {
		case *protocol.Settled:
			re.Status = d.Status
		case *protocol.FinalResult:
			re.Status = d.Status
		}
		lifecycle = append(lifecycle, re)
		if err := spec.RunLifecycle(lifecycle); err != nil {
			f.t.Fatalf("lifecycle: %v", err)
		}
	}
	if err := spec.RunComplete(lifecycle); err != nil {
		f.t.Fatalf("lifecycle: %v", err)
	}
	res := rc.Wait()
	if last := evs[len(evs)-1].Data.(*protocol.FinalResult); !cmp.Equal(*last, res) {
		f.t.Fatalf("final event %+v differs from Wait() %+v", *last, res)
	}
	// The credential never appears in events or in the session file.
	all, _ := json.Marshal(evs)
	if strings.Contains(string(all), "sk-test-secret-value") {
		f.t.Fatal("the API key appears in an event")
	}
	if res.SessionFile != nil {
		data, _ := os.ReadFile(*res.SessionFile)
		if strings.Contains(string(data), "sk-test-secret-value") {
			f.t.Fatal("the API key appears in the session file")
		}
	}
	return evs, res
}

func types(evs []Event) []protocol.EventType {
	var out []protocol.EventType
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func find[T any](evs []Event) []*T {
	var out []*T
	for _, e := range evs {
		if d, ok := any(e.Data).(*T); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestRunTextAnswer(t *testing.T) {
	f := newFixture(t, text("Hel", "lo"))
	evs, res := f.run(f.req("say hello"))
	want := []protocol.EventType{"accepted", "started", "model_delta", "model_delta", "model_step", "settled", "final_result"}
	if diff := cmp.Diff(want, types(evs)); diff != "" {
		t.Fatalf("event types (-want +got):\n%s", diff)
	}
	if res.Status != "completed" || res.Output != "Hello" || res.Steps != 1 || res.ToolCalls != 0 || res.Error != nil {
		t.Errorf("result %+v", res)
	}
	acc := find[protocol.Accepted](evs)[0]
	if acc.Model.Provider != "local" || !strings.HasPrefix(acc.Model.ID, "inline-") || acc.SessionFile != *res.SessionFile ||
		len(acc.Tools) != 7 || acc.EffectiveToolPolicy.EffectPolicy.Value != "controlled" {
		t.Errorf("accepted %+v", acc)
	}
	if f.lastRoute.APIModel != "local-model" || f.lastRoute.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("route %+v", f.lastRoute)
	}
	step := find[protocol.ModelStep](evs)[0]
	if step.Usage.InputTokens != 100 || step.Usage.TotalTokens != 110 || step.Cumulative.Usage.OutputTokens != 10 || step.UsageUncertain {
		t.Errorf("model_step %+v", step)
	}
	reqs := f.prov.requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 || reqs[0].Messages[0].Text != "say hello" || !strings.Contains(reqs[0].System, "coding agent") {
		t.Errorf("provider request %+v", reqs)
	}
}

func TestRunToolLoopAndPolicy(t *testing.T) {
	f := newFixture(t,
		calls(ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"notes.txt"}`},
			ToolCall{ID: "c2", Name: "write", Arguments: `{"path":"out.txt","content":"x"}`},
			ToolCall{ID: "c3", Name: "launch_missiles", Arguments: `{}`},
			ToolCall{ID: "c4", Name: "read", Arguments: `not json`},
			ToolCall{ID: "c5", Name: "bash", Arguments: `{"command":"echo hi"}`},
			ToolCall{ID: "c6", Name: "read", Arguments: `{"path":"../outside"}`},
			ToolCall{ID: "c7", Name: "read", Arguments: `{"file":"notes.txt"}`}),
		text("done"))
	if err := os.WriteFile(filepath.Join(f.ws, "notes.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, res := f.run(f.req("look around"))
	if res.Status != "completed" || res.Output != "done" || res.ToolCalls != 7 || res.Steps != 2 || len(res.FilesChanged) != 0 {
		t.Fatalf("result %+v", res)
	}
	fin := find[protocol.ToolFinish](evs)
	pol := find[protocol.ToolPolicy](evs)
	got := map[string]string{}
	for _, fe := range fin {
		if fe.OK {
			got[fe.CallID] = "ok"
		} else {
			got[fe.CallID] = string(fe.Error.Code)
		}
	}
	want := map[string]string{"c1": "ok", "c2": "mutation_not_authorized", "c3": "unknown_tool", "c4": "invalid_arguments", "c5": "process_not_enabled", "c6": "path_outside_workspace", "c7": "invalid_arguments"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool outcomes (-want +got):\n%s", diff)
	}
	// Allowed evidence goes out only after every gate: malformed arguments
	// end a call before any allowed decision is announced.
	for _, p := range pol {
		if (p.CallID == "c4" || p.CallID == "c7") && p.Decision.Allowed {
			t.Errorf("allowed tool_policy for %s, whose arguments are malformed", p.CallID)
		}
	}
	if !strings.Contains(fin[0].Output, "alpha") {
		t.Errorf("read output %q", fin[0].Output)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a denied write created the file")
	}
	for _, p := range pol {
		raw, _ := json.Marshal(p)
		if strings.Contains(string(raw), f.ws) || strings.Contains(string(raw), "echo hi") || strings.Contains(string(raw), "/bin/") {
			t.Errorf("tool_policy carries a path or command: %s", raw)
		}
	}
	// The model got every result, errors marked, in call order.
	reqs := f.prov.requests()
	msgs := reqs[1].Messages
	var results []string
	for _, m := range msgs {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID)
			if (m.ToolCallID != "c1") != m.IsError {
				t.Errorf("result %s IsError=%v", m.ToolCallID, m.IsError)
			}
		}
	}
	if diff := cmp.Diff([]string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"}, results); diff != "" {
		t.Errorf("tool results sent back (-want +got):\n%s", diff)
	}
}

func TestRunFileMutationAuthorized(t *testing.T) {
	f := newFixture(t,
		calls(ToolCall{ID: "w", Name: "write", Arguments: `{"path":"dir/new.txt","content":"one\n"}`}),
		calls(ToolCall{ID: "e", Name: "edit", Arguments: `{"path":"dir/new.txt","old_text":"one","new_text":"two"}`}),
		text("ok"))
	req := f.req("write a file")
	req.AllowFileMutation = true
	evs, res := f.run(req)
	if res.Status != "completed" || !cmp.Equal(res.FilesChanged, []string{"dir/new.txt"}) {
		t.Fatalf("result %+v", res)
	}
	data, err := os.ReadFile(filepath.Join(f.ws, "dir", "new.txt"))
	if err != nil || string(data) != "two\n" {
		t.Fatalf("file: %q %v", data, err)
	}
	for _, p := range find[protocol.ToolPolicy](evs) {
		if !p.Decision.Allowed || p.Decision.Authorization != "host_request" || p.Decision.Policy.AllowWrite.Source != "host_request" {
			t.Errorf("decision %+v", p.Decision)
		}
	}
}

func TestRunMaxStepsBlocked(t *testing.T) {
	loop := calls(ToolCall{ID: "x", Name: "ls", Arguments: `{}`})
	f := newFixture(t, loop, loop, loop)
	req := f.req("loop")
	req.MaxSteps = new(2)
	_, res := f.run(req)
	if res.Status != "blocked" || res.Error == nil || res.Error.Code != protocol.CodeMaxStepsReached || res.Steps != 2 {
		t.Fatalf("result %+v", res)
	}
}

func TestRunProviderErrorIsError(t *testing.T) {
	f := newFixture(t)
	f.prov.errs = []error{&ProviderError{Kind: "http_status", Status: 401, Message: "bad key sk-test-secret-value"}}
	_, res := f.run(f.req("hi"))
	if res.Status != "error" || res.Error.Code != "auth_failed" || strings.Contains(res.Error.Message, "sk-test") {
		t.Fatalf("result %+v", res.Error)
	}
}

func TestRunLengthCutIsNotSuccess(t *testing.T) {
	cut := []StreamEvent{{Kind: StreamText, Text: "partial"}, {Kind: StreamFinish, FinishReason: FinishLength}}
	f := newFixture(t, cut)
	_, res := f.run(f.req("long"))
	if res.Status != "error" || res.Error.Code != protocol.CodeOutputIncomplete || res.Output != "partial" {
		t.Fatalf("result %+v", res)
	}
}

func TestRunResumeSendsPriorConversation(t *testing.T) {
	f := newFixture(t, text("first answer"), text("second answer"))
	req := f.req("first question")
	req.SessionID = "customer-42"
	req.History = []protocol.HistoryMessage{{Role: "user", Content: "seed q"}, {Role: "assistant", Content: "seed a"}}
	_, res1 := f.run(req)
	req = f.req("second question")
	req.RunID, req.SessionID = "run-2", "customer-42"
	_, res2 := f.run(req)
	if *res1.SessionFile != *res2.SessionFile {
		t.Fatalf("session files differ: %s %s", *res1.SessionFile, *res2.SessionFile)
	}
	var got []string
	for _, m := range f.prov.requests()[1].Messages {
		got = append(got, string(m.Role)+":"+m.Text)
	}
	want := []string{"user:seed q", "assistant:seed a", "user:first question", "assistant:first answer", "user:second question"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resumed conversation (-want +got):\n%s", diff)
	}
	// History seeds only a new session.
	req.RunID, req.History = "run-3", []protocol.HistoryMessage{{Role: "user", Content: "late"}}
	if _, err := f.agent.Run(context.Background(), req); !isCode(err, protocol.CodeHistoryInvalid) {
		t.Errorf("history on an existing session: %v", err)
	}
}

func isCode(err error, code protocol.Code) bool {
	var re *RunError
	return errors.As(err, &re) && re.Code == code
}

func TestRunSessionLocked(t *testing.T) {
	f := newFixture(t, text("x"))
	s, err := store.Open(f.sessions, "busy", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := f.req("hi")
	req.SessionID = "busy"
	if _, err := f.agent.Run(context.Background(), req); !isCode(err, protocol.CodeSessionLocked) {
		t.Fatalf("Run on a locked session: %v", err)
	}
	if len(f.prov.requests()) != 0 {
		t.Error("a refused run called the provider")
	}
}

func TestRunCancel(t *testing.T) {
	f := newFixture(t, text("never"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rc, err := f.agent.Run(ctx, f.req("hi"))
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Status != "error" || res.Error.Code != protocol.CodeCanceled {
		t.Fatalf("result %+v", res)
	}
}

func TestRunAbandonDoesNotBlock(t *testing.T) {
	f := newFixture(t, text(strings.Split(strings.Repeat("x", 500), "")...))
	rc, err := f.agent.Run(context.Background(), f.req("hi"))
	if err != nil {
		t.Fatal(err)
	}
	<-rc.Events()
	rc.Abandon()
	rc.Wait() // returns although nobody reads the remaining events
}

func TestSessionAPI(t *testing.T) {
	f := newFixture(t, text("a"))
	req := f.req("q")
	req.SessionID = "api"
	f.run(req)
	s, err := f.agent.OpenSession(f.sessions, "api")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Messages()); got != 2 || s.HasUncertainUsage() {
		t.Fatalf("messages %d, uncertain %v", got, s.HasUncertainUsage())
	}
	if err := s.RecordUsageUncertainty("chat", "local-model", "assistant_turn"); err != nil {
		t.Fatal(err)
	}
	// The session is locked while open.
	if _, err := f.agent.Run(context.Background(), req); !isCode(err, protocol.CodeSessionLocked) {
		t.Fatalf("run on an open session: %v", err)
	}
	s.Close()
	s, err = f.agent.OpenSession(f.sessions, "api")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []UsageUncertainty{{Endpoint: "chat", Model: "local-model", Operation: "assistant_turn"}}
	if !s.HasUncertainUsage() || !cmp.Equal(want, s.UsageUncertaintyRecords()) {
		t.Errorf("after reopen: %v %+v", s.HasUncertainUsage(), s.UsageUncertaintyRecords())
	}
}

// TestRunConfiguredProvider resolves a model from ~/.octet/models.json with
// its key from ~/.octet/credentials/.
func TestRunConfiguredProvider(t *testing.T) {
	f := newFixture(t, text("ok"))
	os.MkdirAll(filepath.Join(f.home, ".octet", "credentials"), 0o700)
	os.WriteFile(filepath.Join(f.home, ".octet", "models.json"), []byte(`{"providers":{"lab":{"base_url":"http://127.0.0.1:7/v1","provider_mode":"openai-compatible","models":[{"id":"lab-model","name":"Lab Model","context_window_tokens":32768,"max_output_tokens":4096}]}}}`), 0o600)
	os.WriteFile(filepath.Join(f.home, ".octet", "credentials", "lab.json"), []byte(`{"api_key":"lab-key"}`), 0o600)
	req := f.req("q")
	req.Route, req.Model = nil, "lab-model"
	_, res := f.run(req)
	if res.Status != "completed" || f.lastRoute.APIKey != "lab-key" || f.lastRoute.BaseURL != "http://127.0.0.1:7/v1" || f.lastRoute.Provider != "lab" {
		t.Fatalf("result %+v route %+v", res, f.lastRoute)
	}
}

// TestReasoningSelection covers the run field, persistence and restore on
// resume, the agent setter, and a change admitted at a step boundary (on a
// route qualified for it: a reasoning update, the requests' effort stays).
func TestReasoningSelection(t *testing.T) {
	f := newFixture(t, calls(ToolCall{ID: "x", Name: "ls", Arguments: `{}`}), text("a"), text("b"), text("c"))
	req := f.req("q")
	req.SessionID = "r"
	qualify(t, f.home, &req, "openai-compatible", "http://127.0.0.1:9/v1", false)
	req.ReasoningEffort = new("high")
	// The first model call is held open while the test changes the
	// effort: the first step's boundary is then behind the run and the
	// second's ahead of it, whatever the scheduling.
	entered, changed := make(chan struct{}), make(chan struct{})
	f.prov.before = func(n int) {
		if n == 0 {
			close(entered)
			<-changed
		}
	}
	rc, err := f.agent.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Change the effort during the first step: it applies from step 2.
	<-entered
	if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"}); err != nil {
		t.Fatal(err)
	}
	close(changed)
	for range rc.Events() {
	}
	f.prov.before = nil
	rc.Wait()
	if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"}); !errors.Is(err, ErrRunEnded) {
		t.Errorf("SetReasoning after the end: %v", err)
	}
	reqs := f.prov.requests()
	if reqs[0].ReasoningEffort != "high" || reqs[1].ReasoningEffort != "high" {
		t.Fatalf("efforts %q %q, want the pinned high", reqs[0].ReasoningEffort, reqs[1].ReasoningEffort)
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.ReasoningEffort != "low" {
		t.Fatalf("the second call's last message %+v, want the reasoning update", last)
	}
	if got := f.agent.Reasoning(); got.Effort != "low" {
		t.Errorf("Agent.Reasoning() = %+v", got)
	}
	// A resumed run without reasoning restores the session's selection
	// (the baseline high and the update to low), even after the agent's
	// default changes.
	f.agent.SetReasoning(ReasoningConfig{Effort: "medium"})
	req.Prompt, req.RunID, req.SessionID, req.ReasoningEffort = "q2", "run-2", "r", nil
	f.run(req)
	if e := f.prov.requests()[2].ReasoningEffort; e != "high" {
		t.Errorf("resumed effort %q, want the restored baseline high", e)
	}
	if got := f.agent.Reasoning(); got.Effort != "low" {
		t.Errorf("Agent.Reasoning() after the resume = %+v, want the restored update low", got)
	}
	// A new session takes the agent's selection.
	req.Prompt, req.RunID, req.SessionID = "q3", "run-3", ""
	f.run(req)
	if e := f.prov.requests()[3].ReasoningEffort; e != "low" {
		t.Errorf("new-session effort %q (the agent's effective selection is low after the restore)", e)
	}
	if err := f.agent.SetReasoning(ReasoningConfig{Effort: "max"}); !errors.Is(err, ErrReasoningInvalid) {
		t.Errorf("invalid effort: %v", err)
	}
}

func TestSetReasoningRefusedWithoutSupport(t *testing.T) {
	f := newFixture(t, text("a"))
	rc, err := f.agent.Run(context.Background(), f.req("q"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.SetReasoning(context.Background(), ReasoningConfig{Effort: "low"}); !errors.Is(err, ErrReasoningUnsupported) {
		t.Errorf("SetReasoning on a route without reasoning: %v", err)
	}
	for range rc.Events() {
	}
	if e := f.prov.requests()[0].ReasoningEffort; e != "" {
		t.Errorf("effort %q sent to a route without reasoning", e)
	}
}

// TestModelsDiscovery lists a configured endpoint's live models unless
// offline, reports a failing endpoint without failing, and runs a
// discovered model through its provider's route.
func TestModelsDiscovery(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"lab-model","object":"model"},{"id":"qwen-coder","object":"model","max_model_len":65536}]}`)
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	f := newFixture(t, text("ok"))
	os.MkdirAll(filepath.Join(f.home, ".octet"), 0o700)
	os.WriteFile(filepath.Join(f.home, ".octet", "models.json"), []byte(`{"providers":{
		"lab":{"base_url":"`+srv.URL+`/v1","provider_mode":"openai-compatible","models":[{"id":"lab-model","name":"Lab","context_window_tokens":32768,"max_output_tokens":4096}]},
		"gone":{"base_url":"`+dead.URL+`/v1","provider_mode":"openai-compatible","models":[{"id":"m","name":"M","context_window_tokens":8192,"max_output_tokens":1024}]}}}`), 0o600)

	ms, issues, err := f.agent.Models(context.Background(), true)
	if err != nil || hits.Load() != 0 || len(issues) != 0 {
		t.Fatalf("offline: %v, %d requests, %v", err, hits.Load(), issues)
	}
	n := len(ms)
	ms, issues, err = f.agent.Models(context.Background(), false)
	if err != nil || hits.Load() != 1 {
		t.Fatalf("online: %v, %d requests", err, hits.Load())
	}
	if len(ms) != n+1 || ms[len(ms)-1].ID != "lab/qwen-coder" || ms[len(ms)-1].ContextWindowTokens != 65536 {
		t.Errorf("discovered %+v", ms[n:])
	}
	if len(issues) != 1 || issues[0].Provider != "gone" || issues[0].Code != "discovery_failed" {
		t.Errorf("issues %+v", issues)
	}
	req := f.req("q")
	req.Route, req.Model = nil, "lab/qwen-coder"
	if _, res := f.run(req); res.Status != "completed" || f.lastRoute.APIModel != "qwen-coder" || f.lastRoute.BaseURL != srv.URL+"/v1" {
		t.Errorf("run on a discovered model: %+v, route %+v", res, f.lastRoute)
	}
}

// panicky panics on its first call (a bug in a decoder, say), then
// delegates.
type panicky struct {
	panicked bool
	next     Provider
}

func (p *panicky) Stream(ctx context.Context, req ProviderRequest) (ProviderStream, error) {
	if !p.panicked {
		p.panicked = true
		panic("decoder index out of range")
	}
	return p.next.Stream(ctx, req)
}

// TestPanicEndsTheRunNotTheHost: a panic inside a run becomes that run's
// internal_error final_result (after settled, with the session released),
// and the agent serves the next run on the same session.
func TestPanicEndsTheRunNotTheHost(t *testing.T) {
	f := newFixture(t, text("after the panic"))
	var logs strings.Builder
	p := &panicky{next: f.prov}
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" }, Logger: jsonLogger(&logs, slog.LevelInfo),
		ProviderFactory: func(Route) (Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	req := f.req("q")
	req.SessionID = "s"
	evs, res := f.run(req)
	if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeInternalError ||
		!strings.Contains(res.Error.Message, "decoder index out of range") {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if got := evs[len(evs)-2].Type; got != protocol.TypeSettled {
		t.Errorf("event before final_result is %s", got)
	}
	if !strings.Contains(logs.String(), "internal error") || !strings.Contains(logs.String(), "goroutine") {
		t.Errorf("no stack in the log: %s", logs.String())
	}
	req.RunID = "run-2"
	if _, res := f.run(req); res.Status != "completed" || res.Output != "after the panic" {
		t.Fatalf("next run on the same session: %+v", res)
	}
}

// TestToolSchemaBudget: a tool array over the budget refuses the run before
// any provider I/O, whole (nothing is dropped to fit); zero permits only no
// tools.
func TestToolSchemaBudget(t *testing.T) {
	f := newFixture(t, text("no tools needed"), text("one tool"))
	f.agent.SetToolSchemaBudgetBytes(200)
	_, err := f.agent.Run(context.Background(), f.req("q"))
	var re *RunError
	if !errors.As(err, &re) || re.Code != protocol.CodeToolSchemaTooLarge || !strings.Contains(re.Message, "the budget is 200") {
		t.Fatalf("all tools under a 200-byte budget: %v", err)
	}
	f.agent.SetToolSchemaBudgetBytes(0)
	req := f.req("q")
	req.Tools = []string{}
	if _, res := f.run(req); res.Status != "completed" {
		t.Fatalf("no tools, budget 0: %+v", res)
	}
	req.RunID, req.Tools = "run-2", []string{"ls"}
	if _, err := f.agent.Run(context.Background(), req); !errors.As(err, &re) || re.Code != protocol.CodeToolSchemaTooLarge {
		t.Fatalf("one tool, budget 0: %v", err)
	}
	if n := len(f.prov.requests()); n != 1 {
		t.Errorf("%d provider requests, want 1 (refused runs send none)", n)
	}
	f.agent.SetToolSchemaBudgetBytes(DefaultToolSchemaBudgetBytes)
	req.RunID = "run-3"
	if _, res := f.run(req); res.Status != "completed" {
		t.Fatalf("default budget: %+v", res)
	}
}

// TestRunSystemPromptAndDisplayText: the request's system prompt is added
// after the host's default, and display_text (which may hold any text,
// U+FFFD included) is stored in the session as presentation metadata and
// never reaches the model.
func TestRunSystemPromptAndDisplayText(t *testing.T) {
	f := newFixture(t, text("ok"))
	req := f.req("the prompt the model sees")
	req.SystemPrompt = "Answer as the support desk of Example Corp."
	req.DisplayText = "What the user typed \ufffd, with a tab\tand\na newline"
	_, res := f.run(req)
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	reqs := f.prov.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests", len(reqs))
	}
	sys := reqs[0].System
	if i, j := strings.Index(sys, "coding agent"), strings.Index(sys, req.SystemPrompt); i < 0 || j <= i {
		t.Errorf("system prompt %q: want the default, then the request's", sys)
	}
	body, _ := json.Marshal(reqs[0])
	if strings.Contains(string(body), "What the user typed") {
		t.Errorf("display_text reached the model: %s", body)
	}
	data, err := os.ReadFile(*res.SessionFile)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(req.DisplayText)
	if !strings.Contains(string(data), `"display_text":`+string(want)) {
		t.Errorf("display_text not stored in the session:\n%s", data)
	}
}

// TestRunDisplayTextRefusals: over the cap, bytes that are not UTF-8, and
// control characters other than newline and tab are refused before the run
// is accepted.
func TestRunDisplayTextRefusals(t *testing.T) {
	f := newFixture(t)
	for name, text := range map[string]string{
		"over the cap":  strings.Repeat("d", MaxDisplayTextBytes+1),
		"invalid UTF-8": "ok \xff",
		"escape":        "red \x1b[31m",
		"NUL":           "a\x00b",
		"C1 control":    "a\u0085b",
	} {
		req := f.req("p")
		req.DisplayText = text
		_, err := f.agent.Run(context.Background(), req)
		var re *RunError
		if !errors.As(err, &re) || re.Code != protocol.CodeDisplayTextInvalid {
			t.Errorf("%s: %v, want %s", name, err, protocol.CodeDisplayTextInvalid)
		}
	}
	req := f.req("p")
	req.DisplayText = strings.Repeat("d", MaxDisplayTextBytes)
	rc, err := f.agent.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("display_text at the cap refused: %v", err)
	}
	for range rc.Events() {
	}
	rc.Wait()
}

// TestRunHeaderRefusals: custom_headers are checked whole before the route
// is built, every failure headers_rejected: a value with any control
// character but tab (which the provider edge would refuse as
// route_invalid), a credential, hop-by-hop or malformed name, a name
// given twice in another letter case, too many entries or bytes.
func TestRunHeaderRefusals(t *testing.T) {
	f := newFixture(t, text("ok"))
	many := map[string]string{}
	for i := range MaxHeaderEntries + 1 {
		many["X-H"+strconv.Itoa(i)] = "v"
	}
	for name, h := range map[string]map[string]string{
		"escape in value": {"X-Tenant": "a\x1b[31m"},
		"CR LF in value":  {"X-Tenant": "a\r\nX-Evil: 1"},
		"NUL in value":    {"X-Tenant": "a\x00"},
		"DEL in value":    {"X-Tenant": "a\x7f"},
		"BEL in value":    {"X-Tenant": "\x07"},
		"authorization":   {"authorization": "Bearer x"},
		"cookie":          {"Cookie": "a=b"},
		"proxy header":    {"Proxy-Authorization": "x"},
		"hop-by-hop":      {"Connection": "close"},
		"bad name":        {"X Tenant": "v"},
		"twice":           {"X-A": "1", "x-a": "2"},
		"too many":        many,
		"too large":       {"X-Big": strings.Repeat("v", MaxHeaderBytes)},
	} {
		req := f.req("p")
		req.Route.Headers = h
		rc, err := f.agent.Run(context.Background(), req)
		var re *RunError
		if !errors.As(err, &re) || re.Code != protocol.CodeHeadersRejected {
			t.Errorf("%s: %v, want %s", name, err, protocol.CodeHeadersRejected)
		}
		if rc != nil {
			for range rc.Events() {
			}
			rc.Wait()
		}
	}
	req := f.req("p")
	req.Route.Headers = map[string]string{"X-Tenant": "tab\tand ünïcode", "X-Empty": ""}
	evs, res := f.run(req)
	if res.Status != "completed" {
		t.Fatalf("headers with a tab and UTF-8 refused: %+v %v", res, evs)
	}
}

// TestAcceptedModelIsRouteEffective: accepted reports the route-effective
// modalities and reasoning support, as models does: audio only where the
// wire takes native audio (OpenAI Chat), vision exactly when image is among
// the modalities.
func TestAcceptedModelIsRouteEffective(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		mode       string
		modalities []string
		want       protocol.ModelInfo
	}{
		{"openai-compatible", []string{"image", "audio"}, protocol.ModelInfo{InputModalities: []string{"text", "image", "audio"}, Vision: true, Audio: true, SupportsReasoning: true}},
		{"openai-responses", []string{"image", "audio"}, protocol.ModelInfo{InputModalities: []string{"text", "image"}, Vision: true, SupportsReasoning: true}},
		{"anthropic-messages", []string{"audio"}, protocol.ModelInfo{InputModalities: []string{"text"}, SupportsReasoning: true}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFixture(t, text("ok"))
			req := f.req("q")
			req.Route.Mode = tc.mode
			req.Route.InputModalities = tc.modalities
			req.Route.ContextWindowTokens, req.Route.MaxOutputTokens = new(64000), new(8000)
			req.Route.SupportsReasoning = &yes
			evs, res := f.run(req)
			if res.Status != "completed" {
				t.Fatalf("result %+v", res)
			}
			got := find[protocol.Accepted](evs)[0].Model
			want := tc.want
			want.ID, want.Provider, want.Name, want.ProviderMode = got.ID, "local", got.Name, tc.mode
			want.ContextWindowTokens, want.MaxOutputTokens = 64000, 8000
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("accepted model (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOptionsSessionDir: Options.SessionDir is the store of runs that name
// no session_dir and of OpenSession; a relative one is refused by New.
func TestOptionsSessionDir(t *testing.T) {
	f := newFixture(t, text("ok"))
	store := filepath.Join(t.TempDir(), "store")
	a, err := New(Options{Home: f.home, SessionDir: store, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	req := f.req("q")
	req.SessionDir, req.SessionID = "", "kept"
	_, res := f.run(req)
	if res.Status != "completed" || res.SessionFile == nil || filepath.Dir(*res.SessionFile) != store {
		t.Fatalf("session file %v, want one in %s", res.SessionFile, store)
	}
	s, err := a.OpenSession("", "kept")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := New(Options{Home: f.home, SessionDir: "relative/store"}); err == nil {
		t.Error("a relative SessionDir was accepted")
	}
}
