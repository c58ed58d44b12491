package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
)

// The provider_lifecycle tests drive real loopback HTTP through the Go API:
// the fake provider's model-loading phase (llama.cpp's 503 "Loading
// model"), busy answers, and a ~/.octet/models.json provider with and
// without "lifecycle_events".

// lifecycleRig is an Agent whose home configures the provider "lab" on a
// fake provider; recovery waits are recorded, not slept.
type lifecycleRig struct {
	t     *testing.T
	home  string
	fake  *fakeprovider.Server
	agent *runtime.Agent

	mu    sync.Mutex
	slept []time.Duration
	sleep func(ctx context.Context, d time.Duration) error // nil: return at once
}

const labKey = "lab-secret-key-0123456789"

func newLifecycleRig(t *testing.T, mode fakeprovider.Mode, optIn *bool, sc fakeprovider.Script) *lifecycleRig {
	t.Helper()
	r := &lifecycleRig{t: t, home: t.TempDir()}
	fake, err := fakeprovider.New(fakeprovider.Options{Script: sc, APIKey: labKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	r.fake = fake
	prov := map[string]any{"base_url": fake.BaseURL(mode), "provider_mode": string(mode), "api_key_env": "LAB_KEY",
		"models": []any{map[string]any{"id": "lab-model", "context_window_tokens": 32768, "max_output_tokens": 4096}}}
	if optIn != nil {
		prov["lifecycle_events"] = *optIn
	}
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"lab": prov}})
	if err := os.MkdirAll(filepath.Join(r.home, ".octet"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.home, ".octet", "models.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	r.agent, err = runtime.New(runtime.Options{Home: r.home,
		Getenv: func(k string) string {
			if k == "LAB_KEY" {
				return labKey
			}
			return ""
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.mu.Lock()
			r.slept = append(r.slept, d)
			sleep := r.sleep
			r.mu.Unlock()
			if sleep != nil {
				return sleep(ctx, d)
			}
			return nil
		},
		Jitter: func() float64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *lifecycleRig) req() runtime.RunRequest {
	return runtime.RunRequest{RunID: "run-1", Workspace: r.t.TempDir(), Model: "lab-model", Prompt: "p",
		SessionDir: filepath.Join(r.home, "sessions"), SessionID: "telemetry-test"}
}

// run runs req to its end, checking the run lifecycle invariants.
func (r *lifecycleRig) run(ctx context.Context, req runtime.RunRequest) ([]runtime.Event, protocol.FinalResult) {
	r.t.Helper()
	rc, err := r.agent.Run(ctx, req)
	if err != nil {
		r.t.Fatalf("Run refused: %v", err)
	}
	evs, _ := drainChecked(r.t, rc)
	return evs, rc.Wait()
}

// drainChecked reads rc's events to the end, checking the run
// lifecycle invariants of package spec (RunLifecycle) on every event but
// the Go API's recovered_output, and returns the events and the lifecycle
// sequence checked.
func drainChecked(t *testing.T, rc *runtime.RunControl) ([]runtime.Event, []spec.RunEvent) {
	t.Helper()
	var evs []runtime.Event
	var lc []spec.RunEvent
	for ev := range rc.Events() {
		evs = append(evs, ev)
		if ev.Type == runtime.TypeRecoveredOutput {
			continue
		}
		re := spec.RunEvent{Type: ev.Type}
		switch d := ev.Data.(type) {
		case *protocol.Settled:
			re.Status = d.Status
		case *protocol.FinalResult:
			re.Status = d.Status
		}
		lc = append(lc, re)
		if err := spec.RunLifecycle(lc); err != nil {
			t.Fatalf("run lifecycle: %v", err)
		}
	}
	return evs, lc
}

// summary lists the event types, model_delta runs collapsed and each
// provider_lifecycle written with its state ("provider_lifecycle:loading").
func summary(evs []runtime.Event) string {
	var out []string
	for _, ev := range evs {
		label := string(ev.Type)
		if d, ok := ev.Data.(*protocol.ProviderLifecycle); ok {
			label += ":" + d.State
		}
		if ev.Type == protocol.TypeModelDelta && len(out) > 0 && out[len(out)-1] == label {
			continue
		}
		out = append(out, label)
	}
	return strings.Join(out, ",")
}

func lifecycleEvents(evs []runtime.Event) []*protocol.ProviderLifecycle {
	var out []*protocol.ProviderLifecycle
	for _, ev := range evs {
		if d, ok := ev.Data.(*protocol.ProviderLifecycle); ok {
			out = append(out, d)
		}
	}
	return out
}

// checkSessionClean: the session records the answer and no lifecycle
// telemetry (it is never durable content).
func checkSessionClean(t *testing.T, res protocol.FinalResult, answer string) {
	t.Helper()
	if res.SessionFile == nil {
		t.Fatal("no session file")
	}
	data, err := os.ReadFile(*res.SessionFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if answer != "" && !strings.Contains(s, answer) {
		t.Errorf("the session lacks the answer %q", answer)
	}
	for _, bad := range []string{"provider_lifecycle", "lifecycle", "Loading model", "busy", "usage_uncertainty"} {
		if strings.Contains(s, bad) {
			t.Errorf("the session contains %q:\n%s", bad, s)
		}
	}
}

var yes, no = true, false

const okTail = "model_delta,model_step,settled,final_result"

// TestLifecycleLoadingPhase: with the opt-in, the fake's loading phase is
// one loading event, a readiness wait of 250, 500 and 1000 ms without any
// provider_retry, and ready at the first answer; a retry budget of zero
// proves the loading answers spent none. In every wire mode.
func TestLifecycleLoadingPhase(t *testing.T) {
	for _, mode := range fakeprovider.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			r := newLifecycleRig(t, mode, &yes, fakeprovider.Script{Loading: 3, Turns: []fakeprovider.Turn{{Text: "loaded and answering"}}})
			r.agent.SetMaxRetries(0)
			evs, res := r.run(context.Background(), r.req())
			if res.Status != "completed" || res.Output != "loaded and answering" {
				t.Fatalf("result %+v error %+v", res, res.Error)
			}
			if got, want := summary(evs), "accepted,started,provider_lifecycle:loading,provider_lifecycle:ready,"+okTail; got != want {
				t.Errorf("events\n got %s\nwant %s", got, want)
			}
			lc := lifecycleEvents(evs)
			if lc[0].Detail == nil || *lc[0].Detail != "HTTP 503: Loading model" || lc[1].Detail != nil {
				t.Errorf("details %v, %v", lc[0].Detail, lc[1].Detail)
			}
			want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}
			if len(r.slept) != len(want) || r.slept[0] != want[0] || r.slept[1] != want[1] || r.slept[2] != want[2] {
				t.Errorf("waits %v, want %v", r.slept, want)
			}
			if n := len(r.fake.Requests()); n != 4 || r.fake.LoadingLeft() != 0 {
				t.Errorf("%d requests, %d loading answers left", n, r.fake.LoadingLeft())
			}
			checkSessionClean(t, res, "loaded and answering")
		})
	}
}

// TestLifecycleNotOptedIn: without "lifecycle_events" (absent or false)
// no provider_lifecycle is emitted, and a loading answer is an ordinary
// 503 retry that spends the budget.
func TestLifecycleNotOptedIn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		optIn *bool
	}{{"absent", nil}, {"false", &no}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLifecycleRig(t, fakeprovider.ModeChat, tc.optIn, fakeprovider.Script{Loading: 2, Turns: []fakeprovider.Turn{{Text: "ok"}}})
			evs, res := r.run(context.Background(), r.req())
			if got, want := summary(evs), "accepted,started,provider_retry,provider_retry,"+okTail; res.Status != "completed" || got != want {
				t.Errorf("status %s, events\n got %s\nwant %s", res.Status, got, want)
			}
			r2 := newLifecycleRig(t, fakeprovider.ModeChat, tc.optIn, fakeprovider.Script{Loading: 2, Turns: []fakeprovider.Turn{{Text: "ok"}}})
			r2.agent.SetMaxRetries(1)
			evs, res = r2.run(context.Background(), r2.req())
			if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeRetriesExhausted || len(lifecycleEvents(evs)) != 0 {
				t.Errorf("budget 1: %+v %+v, events %s", res, res.Error, summary(evs))
			}
		})
	}
}

// TestLifecycleNeverInline: an inline route cannot opt in: the loading
// phase is ordinary retries there, even when a models.json provider of the
// same name opted in.
func TestLifecycleNeverInline(t *testing.T) {
	r := newLifecycleRig(t, fakeprovider.ModeChat, &yes, fakeprovider.Script{Loading: 2, Turns: []fakeprovider.Turn{{Text: "ok"}}})
	req := r.req()
	req.Route = &runtime.InlineRoute{Provider: "lab", BaseURL: r.fake.BaseURL(fakeprovider.ModeChat), APIKey: labKey}
	evs, res := r.run(context.Background(), req)
	if got, want := summary(evs), "accepted,started,provider_retry,provider_retry,"+okTail; res.Status != "completed" || got != want {
		t.Errorf("status %s, events\n got %s\nwant %s", res.Status, got, want)
	}
}

// TestLifecycleQueuedAndReadyPerCall: a busy answer (Ollama's full queue)
// is announced as queued and retried as usual; every answered model call
// of the run is ready once.
func TestLifecycleQueuedAndReadyPerCall(t *testing.T) {
	r := newLifecycleRig(t, fakeprovider.ModeChat, &yes, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{Name: "ls", Arguments: `{}`}}},
		{Text: "two calls"},
	}})
	r.fake.InjectFault(fakeprovider.FaultStatus{Code: 503,
		Body: `{"error":{"message":"server busy, please try again.  maximum pending requests exceeded","type":"api_error","param":null,"code":null}}`})
	req := r.req()
	req.Tools = []string{"ls"}
	evs, res := r.run(context.Background(), req)
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	want := "accepted,started,provider_lifecycle:queued,provider_retry,provider_lifecycle:ready,model_step,tool_start,tool_policy,tool_finish," +
		"provider_lifecycle:ready," + okTail
	if got := summary(evs); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if d := lifecycleEvents(evs)[0].Detail; d == nil || *d != "HTTP 503: server busy, please try again.  maximum pending requests exceeded" {
		t.Errorf("queued detail %v", d)
	}
	checkSessionClean(t, res, "two calls")
}

// TestLifecycleDetailSanitized: a loading message that echoes the key,
// carries control characters and runs long becomes a detail of at most
// 256 bytes without them.
func TestLifecycleDetailSanitized(t *testing.T) {
	r := newLifecycleRig(t, fakeprovider.ModeChat, &yes, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "ok"}}})
	msg := "model is loading for key " + labKey + "\u0007\u001b[2J " + strings.Repeat("слой ", 100)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "unavailable_error", "code": 503}})
	r.fake.InjectFault(fakeprovider.FaultStatus{Code: 503, Body: string(body)})
	evs, res := r.run(context.Background(), r.req())
	lc := lifecycleEvents(evs)
	if res.Status != "completed" || len(lc) != 2 || lc[0].State != protocol.LifecycleLoading || lc[0].Detail == nil {
		t.Fatalf("result %s, events %s", res.Status, summary(evs))
	}
	d := *lc[0].Detail
	if len(d) > 256 || strings.Contains(d, labKey) || strings.ContainsAny(d, "\u0007\u001b") || !strings.HasPrefix(d, "HTTP 503: model is loading for key [redacted]") {
		t.Errorf("detail of %d bytes: %q", len(d), d)
	}
}

// TestLifecycleReadinessCeiling: a server that never finishes loading is
// waited for at most 10 minutes of summed waits; then the loading answer
// is an ordinary failure, and with no retry budget the run ends
// retries_exhausted, announced once as loading and never as a retry.
func TestLifecycleReadinessCeiling(t *testing.T) {
	r := newLifecycleRig(t, fakeprovider.ModeChat, &yes, fakeprovider.Script{Loading: 1000, Turns: []fakeprovider.Turn{{Text: "never"}}})
	r.agent.SetMaxRetries(0)
	evs, res := r.run(context.Background(), r.req())
	if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeRetriesExhausted || !strings.Contains(res.Error.Message, "Loading model") {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if got, want := summary(evs), "accepted,started,provider_lifecycle:loading,settled,final_result"; got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	var sum time.Duration
	for _, d := range r.slept {
		sum += d
	}
	if sum > 10*time.Minute || sum < 10*time.Minute-5*time.Second {
		t.Errorf("waited %v in all", sum)
	}
	if n := len(r.fake.Requests()); n != len(r.slept)+1 {
		t.Errorf("%d requests for %d waits", n, len(r.slept))
	}
}

// TestLifecycleCancelDuringLoadingWait: a cancel while waiting for
// readiness ends the run canceled, and Ollama's loading 500 (a status
// that otherwise marks usage uncertain) leaves the session certain: the
// model never ran.
func TestLifecycleCancelDuringLoadingWait(t *testing.T) {
	r := newLifecycleRig(t, fakeprovider.ModeChat, &yes, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "never"}}})
	r.fake.InjectFault(fakeprovider.FaultStatus{Code: 500,
		Body: `{"error":{"message":"unexpected server status: llm server loading model","type":"api_error","param":null,"code":null}}`})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.sleep = func(wctx context.Context, _ time.Duration) error {
		cancel()
		<-wctx.Done()
		return wctx.Err()
	}
	evs, res := r.run(ctx, r.req())
	if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeCanceled {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if got, want := summary(evs), "accepted,started,provider_lifecycle:loading,settled,final_result"; got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	checkSessionClean(t, res, "")
}

// TestLifecycleDiscoveredModel: a model the opted-in provider serves but
// models.json does not list ("lab/<name>", found by discovery) runs on
// the provider's route and inherits its opt-in.
func TestLifecycleDiscoveredModel(t *testing.T) {
	r := newLifecycleRig(t, fakeprovider.ModeChat, &yes, fakeprovider.Script{Loading: 1, Turns: []fakeprovider.Turn{{Text: "ok"}}})
	req := r.req()
	req.Model = "lab/other-model"
	evs, res := r.run(context.Background(), req)
	if got, want := summary(evs), "accepted,started,provider_lifecycle:loading,provider_lifecycle:ready,"+okTail; res.Status != "completed" || got != want {
		t.Errorf("status %s, events\n got %s\nwant %s", res.Status, got, want)
	}
	if m := r.fake.Requests()[1].Model(); m != "other-model" {
		t.Errorf("the call named model %q", m)
	}
}
