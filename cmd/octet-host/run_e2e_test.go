package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
	"octet.dev/host/wire"
	"octet.dev/host/wire/client"
)

// e2e is one host process driven through wire/client, with a fake
// provider on loopback and its own HOME, workspace and session dir.
type e2e struct {
	t        *testing.T
	home, ws string
	sessions string
	fake     *fakeprovider.Server
	c        *client.Client
	args     []string // host flags
}

func newE2E(t *testing.T, script fakeprovider.Script, env ...string) *e2e {
	t.Helper()
	e := &e2e{t: t, home: t.TempDir(), ws: t.TempDir()}
	e.sessions = filepath.Join(e.home, "sessions")
	fake, err := fakeprovider.New(fakeprovider.Options{Script: script, APIKey: "fake-key-123456"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	e.fake = fake
	e.c = e.start(env...)
	return e
}

func (e *e2e) start(env ...string) *client.Client {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	c, err := client.Start(ctx, client.Config{Path: hostBin, Args: e.args, Env: append(append(os.Environ(), "HOME="+e.home), env...)})
	if err != nil {
		e.t.Fatalf("starting the host: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// runReq is an inline-route run against the fake's Chat Completions.
func (e *e2e) runReq(runID, prompt string) wire.RunRequest {
	return e.modeReq(fakeprovider.ModeChat, runID, prompt)
}

// modeReq is an inline-route run against the fake in the given wire mode.
func (e *e2e) modeReq(mode fakeprovider.Mode, runID, prompt string) wire.RunRequest {
	str := func(s string) *string { return &s }
	return wire.RunRequest{RunID: runID, Workspace: e.ws, Model: "fake-model", Prompt: prompt,
		SessionDir: str(e.sessions), Provider: str("fake"), BaseURL: str(e.fake.BaseURL(mode)),
		APIKey: str("fake-key-123456"), ProviderMode: str(string(mode))}
}

// run sends req on c and returns its events (checked against the run
// lifecycle invariants) and final result.
func (e *e2e) run(c *client.Client, req wire.RunRequest) ([]client.Event, *wire.FinalResult) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	rs, err := c.Run(ctx, req)
	if err != nil {
		e.t.Fatalf("Run: %v", err)
	}
	evs, final, err := rs.Wait(ctx)
	if err != nil {
		e.t.Fatalf("run stream: %v (stderr: %s)", err, c.Stderr())
	}
	var lc []spec.RunEvent
	for _, ev := range evs {
		re := spec.RunEvent{Type: ev.Type}
		if ev.Type == "settled" || ev.Type == "final_result" {
			var s struct {
				Status string `json:"status"`
			}
			ev.Decode(&s)
			re.Status = s.Status
		}
		lc = append(lc, re)
	}
	if err := spec.RunComplete(lc); err != nil {
		e.t.Fatalf("run lifecycle: %v", err)
	}
	if err := spec.RunLifecycle(lc); err != nil {
		e.t.Fatalf("run lifecycle: %v", err)
	}
	return evs, final
}

func eventTypes(evs []client.Event) string {
	var ts []string
	for _, ev := range evs {
		ts = append(ts, ev.Type)
	}
	return strings.Join(ts, ",")
}

// collapseDeltas merges runs of model_delta in a comma-separated list.
func collapseDeltas(types string) string {
	for strings.Contains(types, "model_delta,model_delta") {
		types = strings.ReplaceAll(types, "model_delta,model_delta", "model_delta")
	}
	return types
}

func deltas(evs []client.Event, channel string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ch, text, ok := ev.Delta(); ok && ch == channel {
			b.WriteString(text)
		}
	}
	return b.String()
}

func TestRunScriptedConversation(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call-1", Name: "read", Arguments: `{"path":"hello.txt"}`}}, Usage: fakeprovider.Usage{Input: 120, Output: 8}},
		{Text: "The file says hi.", Usage: fakeprovider.Usage{Input: 150, Output: 6}},
	}})
	os.WriteFile(filepath.Join(e.ws, "hello.txt"), []byte("hi\n"), 0o644)
	evs, final := e.run(e.c, e.runReq("run-1", "What does hello.txt say?"))
	// Consecutive deltas collapse: how the fake splits text is its own.
	want := "accepted,started,model_step,tool_start,tool_policy,tool_finish,model_delta,model_step,settled,final_result"
	if got := collapseDeltas(eventTypes(evs)); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if final.Status != "completed" || final.Output != "The file says hi." || final.ToolCalls != 1 || final.Steps != 2 || final.Error != nil {
		t.Errorf("final %+v", final)
	}
	if deltas(evs, "text") != final.Output {
		t.Errorf("deltas %q differ from output %q", deltas(evs, "text"), final.Output)
	}
	if final.SessionFile == nil {
		t.Fatal("no session file")
	}
	if _, err := os.Stat(*final.SessionFile); err != nil {
		t.Errorf("session file: %v", err)
	}
	// The second model call carried the tool result.
	reqs := e.fake.Requests()
	if len(reqs) != 2 || !strings.Contains(string(mustJSON(t, reqs[1].Body)), `"tool_call_id":"call-1"`) {
		t.Errorf("second request lacks the tool result: %s", mustJSON(t, reqs[len(reqs)-1].Body))
	}
	for _, r := range reqs {
		if !r.HadKey || r.KeySHA256 != fakeprovider.KeyFingerprint("fake-key-123456") {
			t.Error("the provider did not get the key")
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunReplaysEveryFixture replays every recorded stream of every wire
// mode through the binary: each yields the run lifecycle; a streamed answer
// is the output; tool calls are executed (or denied) and answered; a
// recorded error body ends the run with provider_error.
func TestRunReplaysEveryFixture(t *testing.T) {
	for _, mode := range fakeprovider.Modes() {
		for _, name := range fakeprovider.Fixtures(mode) {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "follow-up answer"}}})
				if err := e.fake.ServeFixture(mode, name); err != nil {
					t.Fatal(err)
				}
				evs, final := e.run(e.c, e.modeReq(mode, "run-1", "replay"))
				if !noUsageFixtures[name] && strings.Contains(eventTypes(evs), "provider_usage_uncertain") {
					t.Errorf("usage marked uncertain on a stream that reports it: %s", eventTypes(evs))
				}
				var toolStarts int
				for _, ev := range evs {
					if ev.Type == "tool_start" {
						toolStarts++
					}
				}
				switch {
				case strings.HasPrefix(name, "errors/") || strings.Contains(name, "error-event"):
					// Recorded non-retryable errors end the run at once,
					// with a code that says why.
					want := "bad_request"
					if strings.Contains(name, "quota") {
						want = "quota_exhausted"
					}
					if final.Status != "error" || final.Error.Code != wire.Code(want) || strings.Contains(eventTypes(evs), "provider_retry") {
						t.Errorf("final %+v %+v, events %s", final, final.Error, eventTypes(evs))
					}
				case strings.Contains(name, "finish-length") || strings.Contains(name, "max-tokens"):
					if final.Status != "error" || final.Error.Code != "output_incomplete" || toolStarts != 0 {
						t.Errorf("final %+v, %d tool calls", final, toolStarts)
					}
				case noUsageFixtures[name]:
					// The server never said what the call cost: the step is
					// marked uncertain, durably, never reported as free.
					steps := modelSteps(t, evs)
					if final.Status != "completed" || len(steps) == 0 || !steps[0].UsageUncertain ||
						!strings.Contains(eventTypes(evs), "provider_usage_uncertain") {
						t.Errorf("final %+v, steps %+v, events %s", final, steps, eventTypes(evs))
					}
					if data, _ := os.ReadFile(*final.SessionFile); !strings.Contains(string(data), `"usage_uncertainty"`) {
						t.Error("no usage_uncertainty record in the session")
					}
				case toolStarts > 0:
					if final.Status != "completed" || final.Output != "follow-up answer" || final.ToolCalls != toolStarts || final.Steps != 2 {
						t.Errorf("final %+v after %d tool calls", final, toolStarts)
					}
				default:
					if final.Status != "completed" || final.Steps != 1 {
						t.Errorf("final %+v", final)
					}
					if text := deltas(evs, "text"); text != final.Output {
						t.Errorf("streamed %q, output %q", text, final.Output)
					}
				}
			})
		}
	}
}

// noUsageFixtures are the recorded streams whose server reports no usage.
var noUsageFixtures = map[string]bool{"vercel_anthropic-openai-compat-tool-call": true}

type modelStep struct {
	Step           int  `json:"step"`
	UsageUncertain bool `json:"usage_uncertain"`
}

func modelSteps(t *testing.T, evs []client.Event) []modelStep {
	var out []modelStep
	for _, ev := range evs {
		if ev.Type == "model_step" {
			var m modelStep
			if err := ev.Decode(&m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestCrossModeConformance runs one scripted conversation (reasoning, text,
// a tool call, its result, a final answer) through each wire mode: the
// protocol lifecycle and the final result are the same.
func TestCrossModeConformance(t *testing.T) {
	script := fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Reasoning: "Look first.", Signature: "sig-1", Text: "Checking.", ToolCalls: []fakeprovider.ToolCall{{ID: "call-1", Name: "read", Arguments: `{"path":"hello.txt"}`}}, Usage: fakeprovider.Usage{Input: 100, Output: 20}},
		{Text: "It says hi.", Usage: fakeprovider.Usage{Input: 130, Output: 5}},
	}}
	var first string
	var firstFinal wire.FinalResult
	for _, mode := range fakeprovider.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			e := newE2E(t, script)
			os.WriteFile(filepath.Join(e.ws, "hello.txt"), []byte("hi\n"), 0o644)
			req := e.modeReq(mode, "run-1", "What does hello.txt say?")
			yes := true
			req.SupportsReasoning = &yes
			evs, final := e.run(e.c, req)
			lifecycle := collapseDeltas(eventTypes(evs))
			if final.Status != "completed" || final.Output != "It says hi." || final.ToolCalls != 1 || final.Steps != 2 {
				t.Fatalf("final %+v", final)
			}
			if got := deltas(evs, "reasoning"); got != "Look first." {
				t.Errorf("reasoning %q", got)
			}
			// The tool result reached the provider in this mode's shape.
			if body := string(mustJSON(t, e.fake.Requests()[1].Body)); !strings.Contains(body, "call-1") || !strings.Contains(body, "hi") {
				t.Errorf("second request lacks the tool result: %s", body)
			}
			final.SessionFile = nil
			if first == "" {
				first, firstFinal = lifecycle, *final
				return
			}
			if lifecycle != first {
				t.Errorf("lifecycle\n %s\ndiffers from the first mode's\n %s", lifecycle, first)
			}
			if !reflect.DeepEqual(*final, firstFinal) {
				t.Errorf("final %+v differs from %+v", *final, firstFinal)
			}
		})
	}
}

func TestRunResumeAcrossHostProcesses(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "first answer"}, {Text: "second answer"}}})
	req := e.runReq("run-1", "first question")
	str := func(s string) *string { return &s }
	req.SessionID = str("customer-42")
	req.DisplayText = str("First question, as the user typed it")
	_, f1 := e.run(e.c, req)
	e.c.Close()

	c2 := e.start()
	req = e.runReq("run-2", "second question")
	req.SessionID = str("customer-42")
	evs, f2 := e.run(c2, req)
	if f2.Status != "completed" || *f2.SessionFile != *f1.SessionFile {
		t.Fatalf("resumed run: %+v", f2)
	}
	for _, ev := range evs {
		if ev.SessionID != "customer-42" {
			t.Fatalf("event %s without the session_id", ev.Type)
		}
	}
	body := string(mustJSON(t, e.fake.Requests()[1].Body))
	for _, want := range []string{"first question", "first answer", "second question"} {
		if !strings.Contains(body, want) {
			t.Errorf("resumed request lacks %q: %s", want, body)
		}
	}
	data, _ := os.ReadFile(*f1.SessionFile)
	if !strings.Contains(string(data), `"display_text":"First question, as the user typed it"`) {
		t.Errorf("display_text not stored in the session")
	}
	if strings.Contains(string(data), "fake-key-123456") {
		t.Error("the API key is in the session file")
	}
}

func TestRunSessionLockedByAnotherHost(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "slow answer"}, {Text: "x"}}})
	e.fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 1, For: time.Minute})
	str := func(s string) *string { return &s }
	req := e.runReq("run-1", "hold the session")
	req.SessionID = str("shared")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs, err := e.c.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the first host is streaming (the session is open).
	for {
		ev, err := rs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "started" {
			break
		}
	}
	c2 := e.start()
	req2 := e.runReq("run-2", "me too")
	req2.SessionID = str("shared")
	_, final := e.run(c2, req2)
	if final.Status != "error" || final.Error == nil || final.Error.Code != "session_locked" {
		t.Fatalf("second host: %+v", final)
	}
}

func TestRunTornTailIsIgnoredOnResume(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "one"}, {Text: "two"}}})
	str := func(s string) *string { return &s }
	req := e.runReq("run-1", "q1")
	req.SessionID = str("torn")
	_, f1 := e.run(e.c, req)
	// A crash in the middle of an append leaves half a line.
	fh, err := os.OpenFile(*f1.SessionFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"type":"message","ts":"2026-01-01T00:00:00Z","message":{"role":"user","te`)
	fh.Close()
	req = e.runReq("run-2", "q2")
	req.SessionID = str("torn")
	_, f2 := e.run(e.c, req)
	if f2.Status != "completed" || f2.Output != "two" {
		t.Fatalf("resume after a torn tail: %+v", f2)
	}
	data, _ := os.ReadFile(*f1.SessionFile)
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("line %d is not JSON after resume: %q", i+1, line)
		}
	}
}

func TestRunFileMutationPolicy(t *testing.T) {
	write := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{ID: "w1", Name: "write", Arguments: `{"path":"out.txt","content":"data"}`}}}
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{write, {Text: "tried"}, write, {Text: "wrote"}}})
	evs, final := e.run(e.c, e.runReq("run-1", "write it"))
	if final.Status != "completed" || len(final.FilesChanged) != 0 {
		t.Fatalf("denied run: %+v", final)
	}
	var pol struct {
		Decision struct {
			Allowed    bool   `json:"allowed"`
			DenialCode string `json:"denial_code"`
		} `json:"decision"`
	}
	for _, ev := range evs {
		if ev.Type == "tool_policy" {
			ev.Decode(&pol)
		}
	}
	if pol.Decision.Allowed || pol.Decision.DenialCode != "mutation_not_authorized" {
		t.Errorf("decision %+v", pol)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a denied write created the file")
	}
	req := e.runReq("run-2", "write it")
	yes := true
	req.AllowFileMutation = &yes
	_, final = e.run(e.c, req)
	if final.Status != "completed" || strings.Join(final.FilesChanged, ",") != "out.txt" {
		t.Fatalf("authorized run: %+v", final)
	}
	if data, _ := os.ReadFile(filepath.Join(e.ws, "out.txt")); string(data) != "data" {
		t.Errorf("file content %q", data)
	}
}

// TestRunBadInputs sends each kind of bad run input through the binary:
// each gets a final_result error with its code and no accepted, and the
// host keeps serving.
func TestRunBadInputs(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{})
	file := filepath.Join(e.ws, "plain-file")
	os.WriteFile(file, []byte("x"), 0o644)
	str := func(s string) *string { return &s }
	i64 := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		edit func(*wire.RunRequest)
		code string
	}{
		{"relative workspace", func(r *wire.RunRequest) { r.Workspace = "ws" }, "workspace_invalid"},
		{"missing workspace", func(r *wire.RunRequest) { r.Workspace = filepath.Join(e.ws, "nope") }, "workspace_invalid"},
		{"workspace is a file", func(r *wire.RunRequest) { r.Workspace = file }, "workspace_invalid"},
		{"unknown model", func(r *wire.RunRequest) {
			r.Model, r.Provider, r.BaseURL, r.APIKey, r.ProviderMode = "no-such-model", nil, nil, nil, nil
		}, "model_not_found"},
		{"missing key", func(r *wire.RunRequest) {
			r.Model, r.Provider, r.BaseURL, r.APIKey, r.ProviderMode = "gpt-5.1", nil, nil, nil, nil
		}, "credentials_missing"},
		{"bad url", func(r *wire.RunRequest) { r.BaseURL = str("http://") }, "route_invalid"},
		{"url with fragment", func(r *wire.RunRequest) { r.BaseURL = str(e.fake.BaseURL(fakeprovider.ModeChat) + "#x") }, "route_invalid"},
		{"forbidden header", func(r *wire.RunRequest) { r.CustomHeaders = map[string]string{"Transfer-Encoding": "chunked"} }, "headers_rejected"},
		{"oversized prompt", func(r *wire.RunRequest) { r.Prompt = strings.Repeat("p", 600<<10) }, "prompt_too_large"},
		{"control characters in display text", func(r *wire.RunRequest) { r.DisplayText = str("a\x1b[31mred") }, "display_text_invalid"},
		{"zero context window", func(r *wire.RunRequest) { r.ContextWindowTokens = i64(0) }, "route_invalid"},
		{"zero output cap", func(r *wire.RunRequest) { r.MaxOutputTokens = i64(0) }, "route_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub := *e
			sub.t = t
			req := sub.runReq("run-"+strings.ReplaceAll(c.name, " ", "-"), "p")
			c.edit(&req)
			evs, final := sub.run(sub.c, req)
			if len(evs) != 1 || final.Status != "error" || final.Error == nil || string(final.Error.Code) != c.code {
				t.Fatalf("events %s, final %+v; want only final_result with %s", eventTypes(evs), final, c.code)
			}
		})
	}
	if len(e.fake.Requests()) != 0 {
		t.Error("a refused run reached the provider")
	}
}

// TestRunToolPathsStayInWorkspace asks the tools for paths outside the
// workspace ("..", absolute, a symlink): each call fails with its code,
// nothing outside is read or written, and the run goes on.
func TestRunToolPathsStayInWorkspace(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("TOP-SECRET"), 0o600)
	calls := []fakeprovider.ToolCall{
		{ID: "a", Name: "read", Arguments: `{"path":"../` + filepath.Base(outside) + `/secret.txt"}`},
		{ID: "b", Name: "read", Arguments: `{"path":"` + secret + `"}`},
		{ID: "c", Name: "read", Arguments: `{"path":"link/secret.txt"}`},
		{ID: "d", Name: "write", Arguments: `{"path":"link/new.txt","content":"x"}`},
		{ID: "e", Name: "write", Arguments: `{"path":"../escape.txt","content":"x"}`},
		{ID: "f", Name: "read", Arguments: `{"nopath":1}`},
		{ID: "g", Name: "edit", Arguments: `"just a string"`},
		{ID: "h", Name: "read", Arguments: `{"path":`},
	}
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{ToolCalls: calls}, {Text: "gave up"}}})
	if err := os.Symlink(outside, filepath.Join(e.ws, "link")); err != nil {
		t.Fatal(err)
	}
	req := e.runReq("run-1", "exfiltrate")
	yes := true
	req.AllowFileMutation = &yes
	evs, final := e.run(e.c, req)
	if final.Status != "completed" || len(final.FilesChanged) != 0 {
		t.Fatalf("final %+v", final)
	}
	codes := map[string]string{}
	for _, ev := range evs {
		if ev.Type == "tool_finish" {
			var f struct {
				CallID string          `json:"call_id"`
				OK     bool            `json:"ok"`
				Output string          `json:"output"`
				Error  *wire.ErrorData `json:"error"`
			}
			ev.Decode(&f)
			if f.OK || strings.Contains(f.Output, "TOP-SECRET") || strings.Contains(string(ev.Data), "TOP-SECRET") {
				t.Errorf("call %s succeeded or leaked: %s", f.CallID, ev.Data)
			}
			if f.Error != nil {
				codes[f.CallID] = string(f.Error.Code)
			}
		}
	}
	want := map[string]string{"a": "path_outside_workspace", "b": "path_outside_workspace", "c": "symlink_refused", "d": "symlink_refused", "e": "path_outside_workspace", "f": "invalid_arguments", "g": "invalid_arguments", "h": "invalid_arguments"}
	for id, code := range want {
		if codes[id] != code {
			t.Errorf("call %s: code %q, want %q", id, codes[id], code)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("the outside directory changed: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.ws), "escape.txt")); err == nil {
		t.Error("a write escaped the workspace")
	}
}

// TestRunSeedHistory starts a session from the application's prior
// messages: the provider receives them before the prompt.
func TestRunSeedHistory(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "ok"}}})
	req := e.runReq("run-1", "and now?")
	req.History = []wire.HistoryMessage{{Role: "user", Content: "seeded question"}, {Role: "assistant", Content: "seeded answer"}}
	if _, final := e.run(e.c, req); final.Status != "completed" {
		t.Fatalf("final %+v", final)
	}
	body := string(mustJSON(t, e.fake.Requests()[0].Body))
	i, j, k := strings.Index(body, "seeded question"), strings.Index(body, "seeded answer"), strings.Index(body, "and now?")
	if i < 0 || j < i || k < j {
		t.Errorf("history not sent in order before the prompt: %s", body)
	}
}

// TestHelloAdvertisesRunFeatures pins the feature flags to what the tests
// in this file prove end to end.
func TestHelloAdvertisesRunFeatures(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{})
	f := e.c.Hello().Features
	want := wire.Features{Streaming: true, PersistentSessions: true, SeedHistory: true, PromptDisplayText: true,
		InlineModels: true, Tools: true, ProcessGroupAbort: true, TypedMediaInput: true, TypedImageInput: true, TypedAudioInput: true}
	if f != want {
		t.Errorf("features %+v, want %+v", f, want)
	}
}

// TestAnthropicThinkingGoesBackUnchanged: the thinking and redacted_thinking
// blocks of a tool-use turn are sent back exactly, in order, on the next
// step and again after the session resumes in another host process (the
// Messages API rejects a tool-use turn whose thinking was dropped).
func TestAnthropicThinkingGoesBackUnchanged(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Reasoning: "Look first.", Signature: "sig-1", RedactedReasoning: "opaque-1",
			ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"path":"hello.txt"}`}}},
		{Text: "It says hi."},
		{Text: "Still hi."},
	}})
	os.WriteFile(filepath.Join(e.ws, "hello.txt"), []byte("hi\n"), 0o644)
	str := func(s string) *string { return &s }
	yes := true
	req := e.modeReq(fakeprovider.ModeAnthropic, "run-1", "What does hello.txt say?")
	req.SessionID, req.SupportsReasoning = str("s-thinking"), &yes
	if _, final := e.run(e.c, req); final.Status != "completed" {
		t.Fatalf("first run: %+v", final)
	}
	e.c.Close()
	c2 := e.start()
	req = e.modeReq(fakeprovider.ModeAnthropic, "run-2", "And now?")
	req.SessionID, req.SupportsReasoning = str("s-thinking"), &yes
	if _, final := e.run(c2, req); final.Status != "completed" {
		t.Fatalf("resumed run: %+v", final)
	}

	want := []any{
		map[string]any{"type": "thinking", "thinking": "Look first.", "signature": "sig-1"},
		map[string]any{"type": "redacted_thinking", "data": "opaque-1"},
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "read", "input": map[string]any{"path": "hello.txt"}},
	}
	reqs := e.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d provider requests, want 3", len(reqs))
	}
	for i, r := range reqs[1:] {
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []any  `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(mustJSON(t, r.Body), &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Messages) < 2 || body.Messages[1].Role != "assistant" {
			t.Fatalf("request %d: messages %+v", i+2, body.Messages)
		}
		if diff := cmp.Diff(want, body.Messages[1].Content); diff != "" {
			t.Errorf("request %d: the tool-use turn went back changed (-want +got):\n%s", i+2, diff)
		}
	}
}

// TestAnthropicThinkingFormFollowsModel: Claude models from 4.6 on are asked
// for adaptive thinking with the effort in output_config (the newest reject
// budget_tokens); older ones get a budget below max_tokens.
func TestAnthropicThinkingFormFollowsModel(t *testing.T) {
	for model, want := range map[string]string{
		"claude-opus-4-8":  `{"thinking":{"type":"adaptive"},"output_config":{"effort":"medium"}}`,
		"claude-sonnet-5":  `{"thinking":{"type":"adaptive"},"output_config":{"effort":"medium"}}`,
		"claude-haiku-4-5": `{"thinking":{"budget_tokens":8192,"type":"enabled"}}`,
	} {
		t.Run(model, func(t *testing.T) {
			e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "ok"}}})
			req := e.modeReq(fakeprovider.ModeAnthropic, "run-1", "think")
			yes := true
			req.Model, req.SupportsReasoning, req.Reasoning = model, &yes, &wire.Reasoning{Effort: "medium"}
			if _, final := e.run(e.c, req); final.Status != "completed" {
				t.Fatalf("final %+v", final)
			}
			var got struct {
				Thinking     any `json:"thinking,omitempty"`
				OutputConfig any `json:"output_config,omitempty"`
			}
			if err := json.Unmarshal(mustJSON(t, e.fake.Requests()[0].Body), &got); err != nil {
				t.Fatal(err)
			}
			if b := string(mustJSON(t, got)); b != want {
				t.Errorf("thinking request %s, want %s", b, want)
			}
		})
	}
}

// TestResponsesReasoningGoesBack: on a reasoning Responses route the
// encrypted reasoning item comes back on the next step with its item id, and
// earlier answers go back as input messages (store:false keeps nothing).
func TestResponsesReasoningGoesBack(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Reasoning: "Look first.", Signature: "enc-1", Text: "Checking.",
			ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"hello.txt"}`}}},
		{Text: "It says hi."},
	}})
	os.WriteFile(filepath.Join(e.ws, "hello.txt"), []byte("hi\n"), 0o644)
	yes := true
	req := e.modeReq(fakeprovider.ModeResponses, "run-1", "What does hello.txt say?")
	req.SupportsReasoning = &yes
	if _, final := e.run(e.c, req); final.Status != "completed" {
		t.Fatalf("final %+v", final)
	}
	var body struct {
		Input   []map[string]any `json:"input"`
		Include []string         `json:"include"`
		Store   bool             `json:"store"`
	}
	if err := json.Unmarshal(mustJSON(t, e.fake.Requests()[1].Body), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Input) < 3 || body.Store || !reflect.DeepEqual(body.Include, []string{"reasoning.encrypted_content"}) {
		t.Fatalf("second request: %+v", body)
	}
	r, m := body.Input[1], body.Input[2]
	if r["type"] != "reasoning" || r["encrypted_content"] != "enc-1" || !strings.HasPrefix(fmt.Sprint(r["id"]), "rs_") {
		t.Errorf("reasoning item %v", r)
	}
	if m["type"] != "message" || m["role"] != "assistant" || m["content"] != "Checking." {
		t.Errorf("assistant item %v", m)
	}
}
