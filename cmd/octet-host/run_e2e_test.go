package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
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
func (e *e2e) runReq(runID, prompt string) protocol.RunRequest {
	return e.modeReq(fakeprovider.ModeChat, runID, prompt)
}

// modeReq is an inline-route run against the fake in the given wire mode.
func (e *e2e) modeReq(mode fakeprovider.Mode, runID, prompt string) protocol.RunRequest {
	str := func(s string) *string { return &s }
	return protocol.RunRequest{RunID: runID, Workspace: e.ws, Model: "fake-model", Prompt: prompt,
		SessionDir: str(e.sessions), Provider: str("fake"), BaseURL: str(e.fake.BaseURL(mode)),
		APIKey: str("fake-key-123456"), ProviderMode: str(string(mode))}
}

// run sends req on c and returns its events (checked against the run
// lifecycle invariants) and final result.
func (e *e2e) run(c *client.Client, req protocol.RunRequest) ([]client.Event, *protocol.FinalResult) {
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
			ev.DecodeInto(&s)
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
		ts = append(ts, string(ev.Type))
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
// mode through the binary and checks what the host reports against
// testdata/fixture_expectations.json, which is transcribed from the
// provider-level tables rather than from a run of the decoders: step 1's
// streamed text and reasoning, its tool_start calls and its model_step
// usage. A streamed answer is the output; tool calls are executed (or
// denied) and answered; a recorded error body ends the run with its code.
func TestRunReplaysEveryFixture(t *testing.T) {
	expect := loadFixtureExpectations(t)
	for _, mode := range fakeprovider.Modes() {
		for _, name := range fakeprovider.Fixtures(mode) {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				exp, ok := expect[mode][name]
				if !ok {
					t.Fatalf("no expectation for this fixture in %s", fixtureExpectationsFile)
				}
				e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "follow-up answer"}}})
				if err := e.fake.ServeFixture(mode, name); err != nil {
					t.Fatal(err)
				}
				evs, final := e.run(e.c, e.modeReq(mode, "run-1", "replay"))
				// A stream that ends in an error never reports usage, but the
				// host must not mark it uncertain either: nothing was billed.
				noUsage := exp.Usage == nil && exp.Error == nil
				if !noUsage && strings.Contains(eventTypes(evs), "provider_usage_uncertain") {
					t.Errorf("usage marked uncertain on a stream that reports it: %s", eventTypes(evs))
				}
				checkStepOne(t, evs, exp)
				toolStarts := len(toolStartsOf(t, evs))
				switch {
				case exp.Error != nil:
					// Recorded non-retryable errors end the run at once,
					// with a code that says why and the provider's message.
					if final.Status != "error" || final.Error == nil || final.Error.Code != exp.Error.Code || strings.Contains(eventTypes(evs), "provider_retry") {
						t.Fatalf("final %+v %+v, events %s", final, final.Error, eventTypes(evs))
					}
					if !strings.Contains(final.Error.Message, exp.Error.ProviderMessage) {
						t.Errorf("error message %q lacks the provider's %q", final.Error.Message, exp.Error.ProviderMessage)
					}
				case exp.Finish == "length":
					// The output cap cut the answer: it is not presented as
					// complete, and a tool call cut inside its input is
					// never executed.
					if final.Status != "error" || final.Error == nil || final.Error.Code != "output_incomplete" || toolStarts != 0 {
						t.Errorf("final %+v, %d tool calls", final, toolStarts)
					}
				case noUsage:
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
				case len(exp.ToolCalls) > 0:
					if final.Status != "completed" || final.Output != "follow-up answer" || final.ToolCalls != len(exp.ToolCalls) || final.Steps != 2 {
						t.Errorf("final %+v after %d tool calls", final, toolStarts)
					}
				default:
					if final.Status != "completed" || final.Steps != 1 || final.Output != exp.Text {
						t.Errorf("final %+v, want output %q", final, exp.Text)
					}
				}
			})
		}
	}
}

// fixtureExpectationsFile holds, per fixture folder and file name, what a
// replay through the binary must produce (its "note" says where each value
// comes from).
const fixtureExpectationsFile = "testdata/fixture_expectations.json"

// fixtureExpectation is one fixture's entry. Usage is nil when the server
// reports none; Error is set for a stream or body that ends in an error.
type fixtureExpectation struct {
	Text      string         `json:"text"`
	Reasoning string         `json:"reasoning"`
	ToolCalls []expectedCall `json:"tool_calls"`
	Usage     *stepUsage     `json:"usage"`
	Finish    string         `json:"finish"`
	Error     *struct {
		Code            protocol.Code `json:"code"`
		ProviderMessage string        `json:"provider_message"`
	} `json:"error"`
}

type expectedCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// stepUsage is model_step.usage as the protocol spells it; the test keeps
// its own copy so that a renamed field in the host fails here.
type stepUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// loadFixtureExpectations reads the expectations keyed by mode and fixture
// name (as fakeprovider.Fixtures spells it), failing when a fixture has no
// entry or an entry names no fixture file, so that coverage cannot shrink
// silently.
func loadFixtureExpectations(t *testing.T) map[fakeprovider.Mode]map[string]fixtureExpectation {
	t.Helper()
	data, err := os.ReadFile(fixtureExpectationsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Note  string                                   `json:"note"`
		Modes map[string]map[string]fixtureExpectation `json:"modes"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field would otherwise expect nothing
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", fixtureExpectationsFile, err)
	}
	out := map[fakeprovider.Mode]map[string]fixtureExpectation{}
	for folder, entries := range doc.Modes {
		// ParseMode also takes mode names; the file checks below then
		// find no such folder.
		mode, err := fakeprovider.ParseMode(folder)
		if err != nil {
			t.Fatalf("%s: %q is not a fixture folder", fixtureExpectationsFile, folder)
		}
		byName := map[string]fixtureExpectation{}
		for file, exp := range entries {
			// The entry names the file exactly, extension included, so
			// that it is the file the provider-level table tested.
			if st, err := os.Stat(filepath.Join("..", "..", "runtime", "fakeprovider", "fixtures", folder, file)); err != nil || !st.Mode().IsRegular() {
				t.Errorf("%s: %s/%s names no fixture file", fixtureExpectationsFile, folder, file)
			}
			name := file
			for _, ext := range []string{".sse", ".chunks.jsonl", ".json"} {
				name = strings.TrimSuffix(name, ext)
			}
			byName[name] = exp
		}
		out[mode] = byName
	}
	for _, mode := range fakeprovider.Modes() {
		names := fakeprovider.Fixtures(mode)
		for _, name := range names {
			if _, ok := out[mode][name]; !ok {
				t.Errorf("%s: fixture %s/%s has no expectation", fixtureExpectationsFile, mode, name)
			}
		}
		for name := range out[mode] {
			if !slices.Contains(names, name) {
				t.Errorf("%s: expectation %s/%s has no fixture the fake serves", fixtureExpectationsFile, mode, name)
			}
		}
	}
	if len(out) != len(fakeprovider.Modes()) {
		t.Errorf("%s covers %d modes, the fake has %d", fixtureExpectationsFile, len(out), len(fakeprovider.Modes()))
	}
	return out
}

// checkStepOne compares what the host reported for the fixture's model call
// (step 1) with the expectation: the text and reasoning streamed, the tool
// calls announced, and the usage of its model_step (none for an error).
func checkStepOne(t *testing.T, evs []client.Event, exp fixtureExpectation) {
	t.Helper()
	if got := stepDeltas(t, evs, 1, "text"); got != exp.Text {
		t.Errorf("step 1 text\n got %q\nwant %q", got, exp.Text)
	}
	if got := stepDeltas(t, evs, 1, "reasoning"); got != exp.Reasoning {
		t.Errorf("step 1 reasoning\n got %q\nwant %q", got, exp.Reasoning)
	}
	type call struct {
		ID, Name  string
		Arguments any
	}
	var got, want []call
	for _, ts := range toolStartsOf(t, evs) {
		if ts.Step == 1 {
			got = append(got, call{ts.CallID, ts.Tool, parseJSON(t, ts.Arguments)})
		}
	}
	for _, c := range exp.ToolCalls {
		want = append(want, call{c.ID, c.Name, parseJSON(t, c.Arguments)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step 1 tool calls (-want +got):\n%s", diff)
	}
	steps := modelSteps(t, evs)
	if exp.Error != nil {
		if len(steps) != 0 {
			t.Errorf("model_step %+v for a call that failed", steps)
		}
		return
	}
	if len(steps) == 0 || steps[0].Step != 1 {
		t.Fatalf("model steps %+v, want step 1 first", steps)
	}
	// A server that reports no usage leaves zeros, marked uncertain (the
	// caller checks the mark).
	var wantUsage stepUsage
	if exp.Usage != nil {
		wantUsage = *exp.Usage
	}
	if diff := cmp.Diff(wantUsage, steps[0].Usage); diff != "" {
		t.Errorf("step 1 usage (-want +got):\n%s", diff)
	}
}

func parseJSON(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("JSON %s: %v", raw, err)
	}
	return v
}

// stepDeltas joins the model_delta texts of one step on one channel.
func stepDeltas(t *testing.T, evs []client.Event, step int, channel string) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type != "model_delta" {
			continue
		}
		var d struct {
			Step    int    `json:"step"`
			Channel string `json:"channel"`
			Text    string `json:"text"`
		}
		if err := ev.DecodeInto(&d); err != nil {
			t.Fatal(err)
		}
		if d.Step == step && d.Channel == channel {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

type toolStart struct {
	Step      int             `json:"step"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

func toolStartsOf(t *testing.T, evs []client.Event) []toolStart {
	t.Helper()
	var out []toolStart
	for _, ev := range evs {
		if ev.Type == "tool_start" {
			var ts toolStart
			if err := ev.DecodeInto(&ts); err != nil {
				t.Fatal(err)
			}
			out = append(out, ts)
		}
	}
	return out
}

// modelStep is model_step's data as the protocol spells it.
type modelStep struct {
	Step       int       `json:"step"`
	Model      string    `json:"model"`
	Usage      stepUsage `json:"usage"`
	Cost       stepCost  `json:"cost"`
	Cumulative struct {
		Usage stepUsage `json:"usage"`
		Cost  stepCost  `json:"cost"`
	} `json:"cumulative"`
	UsageUncertain bool `json:"usage_uncertain"`
}

type stepCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	Total      float64 `json:"total"`
	Currency   string  `json:"currency"`
}

func modelSteps(t *testing.T, evs []client.Event) []modelStep {
	var out []modelStep
	for _, ev := range evs {
		if ev.Type == "model_step" {
			var m modelStep
			if err := ev.DecodeInto(&m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestCrossModeConformance runs one scripted conversation (reasoning, text,
// a tool call, its result, a final answer) through each wire mode on a
// priced model: the event sequence, with the channel of each run of deltas
// so that reasoning before text shows, the final result, and each step's
// model_step (usage, cost, cumulative totals) are the same.
func TestCrossModeConformance(t *testing.T) {
	// Step 1 reads 100 prompt tokens, 30 of them from the cache, and
	// writes 20, 12 of them reasoning. The fake writes Usage into each
	// wire's own fields unconverted, and Anthropic's input_tokens leaves
	// out the cached tokens that OpenAI's include, so the same call is
	// Input 70 on Anthropic. Cache writes stay zero: Chat Completions has
	// no field for them, so they cannot be the same across modes.
	script := func(mode fakeprovider.Mode) fakeprovider.Script {
		input := 100
		if mode == fakeprovider.ModeAnthropic {
			input -= 30
		}
		return fakeprovider.Script{Turns: []fakeprovider.Turn{
			{Reasoning: "Look first.", Signature: "sig-1", Text: "Checking.", ToolCalls: []fakeprovider.ToolCall{{ID: "call-1", Name: "read", Arguments: `{"path":"hello.txt"}`}},
				Usage: fakeprovider.Usage{Input: input, Output: 20, CacheRead: 30, Reasoning: 12}},
			{Text: "It says hi.", Usage: fakeprovider.Usage{Input: 130, Output: 5}},
		}}
	}
	// The host reports input with the cached tokens on every wire.
	wantUsage := []stepUsage{
		{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 30, ReasoningTokens: 12, TotalTokens: 120},
		{InputTokens: 130, OutputTokens: 5, TotalTokens: 135},
	}
	// Prices per million tokens; cached input is priced at its own rate.
	const priceIn, priceOut, priceCacheRead = 2.0, 8.0, 0.5
	wantCost := []stepCost{
		{Input: 70 * priceIn / 1e6, Output: 20 * priceOut / 1e6, CacheRead: 30 * priceCacheRead / 1e6, Currency: "USD"},
		{Input: 130 * priceIn / 1e6, Output: 5 * priceOut / 1e6, Currency: "USD"},
	}
	for i := range wantCost {
		c := &wantCost[i]
		c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	}
	const wantLifecycle = "accepted,started,model_delta:reasoning,model_delta:text,model_step,tool_start,tool_policy,tool_finish," +
		"model_delta:text,model_step,settled,final_result"
	var firstSteps []modelStep
	var firstFinal protocol.FinalResult
	for i, mode := range fakeprovider.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			e := newE2E(t, script(mode), "FAKE_API_KEY=fake-key-123456")
			os.WriteFile(filepath.Join(e.ws, "hello.txt"), []byte("hi\n"), 0o644)
			// A configured model rather than an inline route, because only
			// the catalog carries prices: without them every cost is zero
			// and comparing costs would prove nothing.
			pricedModel(t, e, mode, priceIn, priceOut, priceCacheRead)
			str := func(s string) *string { return &s }
			req := protocol.RunRequest{RunID: "run-1", Workspace: e.ws, Model: "priced-model", Prompt: "What does hello.txt say?", SessionDir: str(e.sessions)}
			evs, final := e.run(e.c, req)
			if final.Status != "completed" || final.Output != "It says hi." || final.ToolCalls != 1 || final.Steps != 2 {
				t.Fatalf("final %+v %+v", final, final.Error)
			}
			if got := collapseChannels(t, evs); got != wantLifecycle {
				t.Errorf("events\n got %s\nwant %s", got, wantLifecycle)
			}
			if got := deltas(evs, "reasoning"); got != "Look first." {
				t.Errorf("reasoning %q", got)
			}
			// The tool result reached the provider in this mode's shape.
			if body := string(mustJSON(t, e.fake.Requests()[1].Body)); !strings.Contains(body, "call-1") || !strings.Contains(body, "hi") {
				t.Errorf("second request lacks the tool result: %s", body)
			}
			steps := modelSteps(t, evs)
			if len(steps) != len(wantUsage) {
				t.Fatalf("model steps %+v", steps)
			}
			var total stepUsage
			var totalCost float64
			for j, st := range steps {
				if st.Step != j+1 || st.Model != "priced-model" || st.UsageUncertain {
					t.Errorf("step %d: %+v", j+1, st)
				}
				if diff := cmp.Diff(wantUsage[j], st.Usage); diff != "" {
					t.Errorf("step %d usage (-want +got):\n%s", j+1, diff)
				}
				if diff := cmp.Diff(wantCost[j], st.Cost, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
					t.Errorf("step %d cost (-want +got):\n%s", j+1, diff)
				}
				total = addUsage(total, st.Usage)
				totalCost += st.Cost.Total
				if diff := cmp.Diff(total, st.Cumulative.Usage); diff != "" {
					t.Errorf("step %d cumulative usage (-sum of steps +got):\n%s", j+1, diff)
				}
				if diff := cmp.Diff(totalCost, st.Cumulative.Cost.Total, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
					t.Errorf("step %d cumulative cost (-sum of steps +got):\n%s", j+1, diff)
				}
			}
			final.SessionFile = nil
			if i == 0 {
				firstSteps, firstFinal = steps, *final
				return
			}
			if firstSteps == nil {
				t.Skipf("%s failed: nothing to compare with", fakeprovider.Modes()[0])
			}
			// The figures are computed the same way from the same numbers:
			// they must be equal exactly, not merely close.
			if diff := cmp.Diff(firstSteps, steps); diff != "" {
				t.Errorf("model steps differ from %s's (-%s +%s):\n%s", fakeprovider.Modes()[0], fakeprovider.Modes()[0], mode, diff)
			}
			if !reflect.DeepEqual(*final, firstFinal) {
				t.Errorf("final %+v differs from %+v", *final, firstFinal)
			}
		})
	}
}

// pricedModel configures, in e's HOME, the model "priced-model" of a
// provider served by e's fake in mode, with prices per million tokens.
func pricedModel(t *testing.T, e *e2e, mode fakeprovider.Mode, in, out, cacheRead float64) {
	t.Helper()
	cfg := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"base_url": e.fake.BaseURL(mode), "provider_mode": string(mode), "api_key_env": "FAKE_API_KEY",
		"models": []any{map[string]any{"id": "priced-model", "context_window_tokens": 128000, "max_output_tokens": 16384, "supports_reasoning": true,
			"cost": map[string]any{"input": in, "output": out, "cache_read": cacheRead, "currency": "USD"}}},
	}}}
	dir := filepath.Join(e.home, ".octet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), mustJSON(t, cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func addUsage(a, b stepUsage) stepUsage {
	return stepUsage{
		InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		CacheReadTokens: a.CacheReadTokens + b.CacheReadTokens, CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens,
		ReasoningTokens: a.ReasoningTokens + b.ReasoningTokens, TotalTokens: a.TotalTokens + b.TotalTokens,
	}
}

// collapseChannels is the comma-separated event types with each
// model_delta named with its channel ("model_delta:text") and consecutive
// deltas of one channel merged: how the wire splits text is its own, but
// the order of reasoning and text is the host's.
func collapseChannels(t *testing.T, evs []client.Event) string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		label := string(ev.Type)
		if ev.Type == "model_delta" {
			ch, _, ok := ev.Delta()
			if !ok {
				t.Fatalf("model_delta without a channel: %s", ev.Data)
			}
			label += ":" + ch
			if n := len(out); n > 0 && out[n-1] == label {
				continue
			}
		}
		out = append(out, label)
	}
	return strings.Join(out, ",")
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
			ev.DecodeInto(&pol)
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
		edit func(*protocol.RunRequest)
		code string
	}{
		{"relative workspace", func(r *protocol.RunRequest) { r.Workspace = "ws" }, "workspace_invalid"},
		{"missing workspace", func(r *protocol.RunRequest) { r.Workspace = filepath.Join(e.ws, "nope") }, "workspace_invalid"},
		{"workspace is a file", func(r *protocol.RunRequest) { r.Workspace = file }, "workspace_invalid"},
		{"unknown model", func(r *protocol.RunRequest) {
			r.Model, r.Provider, r.BaseURL, r.APIKey, r.ProviderMode = "no-such-model", nil, nil, nil, nil
		}, "model_not_found"},
		{"missing key", func(r *protocol.RunRequest) {
			r.Model, r.Provider, r.BaseURL, r.APIKey, r.ProviderMode = "gpt-5.1", nil, nil, nil, nil
		}, "credentials_missing"},
		{"bad url", func(r *protocol.RunRequest) { r.BaseURL = str("http://") }, "route_invalid"},
		{"url with fragment", func(r *protocol.RunRequest) { r.BaseURL = str(e.fake.BaseURL(fakeprovider.ModeChat) + "#x") }, "route_invalid"},
		{"forbidden header", func(r *protocol.RunRequest) { r.CustomHeaders = map[string]string{"Transfer-Encoding": "chunked"} }, "headers_rejected"},
		{"oversized prompt", func(r *protocol.RunRequest) { r.Prompt = strings.Repeat("p", 600<<10) }, "prompt_too_large"},
		{"control characters in display text", func(r *protocol.RunRequest) { r.DisplayText = str("a\x1b[31mred") }, "display_text_invalid"},
		{"zero context window", func(r *protocol.RunRequest) { r.ContextWindowTokens = i64(0) }, "route_invalid"},
		{"zero output cap", func(r *protocol.RunRequest) { r.MaxOutputTokens = i64(0) }, "route_invalid"},
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
// workspace ("..", absolute, a symlink out, a symlink in) and for the
// protected .octet directory: each call is denied by policy (tool_policy
// with its denial_code, never an allowed decision), fails in tool_finish
// with the same code, nothing outside is read or written, and the run
// goes on. Malformed arguments fail without any tool_policy.
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
		{ID: "i", Name: "write", Arguments: `{"path":".octet/settings.json","content":"{}"}`},
		{ID: "j", Name: "read", Arguments: `{"path":"inner-link"}`},
		{ID: "k", Name: "read", Arguments: `{"path":"../../etc/passwd"}`},
	}
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{ToolCalls: calls}, {Text: "gave up"}}})
	if err := os.Symlink(outside, filepath.Join(e.ws, "link")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.ws, "inner.txt"), []byte("in"), 0o644)
	if err := os.Symlink("inner.txt", filepath.Join(e.ws, "inner-link")); err != nil {
		t.Fatal(err)
	}
	req := e.runReq("run-1", "exfiltrate")
	yes := true
	req.AllowFileMutation = &yes
	evs, final := e.run(e.c, req)
	if final.Status != "completed" || len(final.FilesChanged) != 0 {
		t.Fatalf("final %+v", final)
	}
	codes, denials := map[string]string{}, map[string]string{}
	var order []string // tool event types per call, in order
	for _, ev := range evs {
		if ev.Type == "tool_policy" {
			var p struct {
				CallID   string `json:"call_id"`
				Decision struct {
					Allowed       bool   `json:"allowed"`
					Authorization string `json:"authorization"`
					DenialCode    string `json:"denial_code"`
				} `json:"decision"`
			}
			ev.DecodeInto(&p)
			if p.Decision.Allowed || p.Decision.Authorization != "" {
				t.Errorf("call %s announced as allowed: %s", p.CallID, ev.Data)
			}
			denials[p.CallID] = p.Decision.DenialCode
		}
		if strings.HasPrefix(string(ev.Type), "tool_") {
			var id struct {
				CallID string `json:"call_id"`
			}
			ev.DecodeInto(&id)
			order = append(order, id.CallID+":"+string(ev.Type))
		}
		if ev.Type == "tool_finish" {
			var f struct {
				CallID string              `json:"call_id"`
				OK     bool                `json:"ok"`
				Output string              `json:"output"`
				Error  *protocol.ErrorData `json:"error"`
			}
			ev.DecodeInto(&f)
			if f.OK || strings.Contains(f.Output, "TOP-SECRET") || strings.Contains(string(ev.Data), "TOP-SECRET") {
				t.Errorf("call %s succeeded or leaked: %s", f.CallID, ev.Data)
			}
			if f.Error != nil {
				codes[f.CallID] = string(f.Error.Code)
			}
		}
	}
	want := map[string]string{"a": "path_outside_workspace", "b": "path_outside_workspace", "c": "symlink_refused", "d": "symlink_refused",
		"e": "path_outside_workspace", "f": "invalid_arguments", "g": "invalid_arguments", "h": "invalid_arguments",
		"i": "protected_path", "j": "symlink_refused", "k": "path_outside_workspace"}
	for id, code := range want {
		if codes[id] != code {
			t.Errorf("call %s: code %q, want %q", id, codes[id], code)
		}
		wantDenial := code
		if code == "invalid_arguments" {
			wantDenial = "" // malformed: no decision at all
		}
		if denials[id] != wantDenial {
			t.Errorf("call %s: tool_policy denial_code %q, want %q", id, denials[id], wantDenial)
		}
	}
	var wantOrder []string
	for _, c := range calls {
		wantOrder = append(wantOrder, c.ID+":tool_start")
		if want[c.ID] != "invalid_arguments" {
			wantOrder = append(wantOrder, c.ID+":tool_policy")
		}
		wantOrder = append(wantOrder, c.ID+":tool_finish")
	}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
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
	req.History = []protocol.HistoryMessage{{Role: "user", Content: "seeded question"}, {Role: "assistant", Content: "seeded answer"}}
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
	want := protocol.Features{Streaming: true, PersistentSessions: true, SeedHistory: true, PromptDisplayText: true,
		InlineModels: true, Tools: true, ProcessGroupAbort: true, TypedMediaInput: true, TypedImageInput: true, TypedAudioInput: true,
		Skills: true, Extensions: true, // resources_e2e_test.go, extensions_e2e_test.go
		MaxSteps: true, Reasoning: true} // runfields_e2e_test.go
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
			req.Model, req.SupportsReasoning, req.Reasoning = model, &yes, &protocol.Reasoning{Effort: "medium"}
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
