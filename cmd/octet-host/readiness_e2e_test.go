package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/wire/client"
)

// provider_lifecycle through the binary: the fake provider's model-loading
// phase (llama.cpp's 503 "Loading model") against a ~/.octet/models.json
// provider with and without "lifecycle_events", and an inline route.

// labProvider configures, in e's HOME, the model "lab-model" of the
// provider "lab", served by e's fake in the chat mode; optIn nil leaves
// "lifecycle_events" out.
func labProvider(t *testing.T, e *e2e, optIn *bool) {
	t.Helper()
	prov := map[string]any{"base_url": e.fake.BaseURL(fakeprovider.ModeChat), "provider_mode": "openai-compatible", "api_key_env": "FAKE_API_KEY",
		"models": []any{map[string]any{"id": "lab-model", "context_window_tokens": 32768, "max_output_tokens": 4096}}}
	if optIn != nil {
		prov["lifecycle_events"] = *optIn
	}
	dir := filepath.Join(e.home, ".octet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), mustJSON(t, map[string]any{"providers": map[string]any{"lab": prov}}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lifecycleSummary is the event types with model_delta runs collapsed and
// each provider_lifecycle written with its state.
func lifecycleSummary(t *testing.T, evs []client.Event) (string, []protocol.ProviderLifecycle) {
	t.Helper()
	var out []string
	var lc []protocol.ProviderLifecycle
	for _, ev := range evs {
		label := string(ev.Type)
		if ev.Type == protocol.TypeProviderLifecycle {
			var d protocol.ProviderLifecycle
			// The registry's payload, strictly: the client decodes it as
			// protocol.PayloadFor says.
			v, err := ev.Decode()
			if err != nil {
				t.Fatalf("provider_lifecycle %s: %v", ev.Data, err)
			}
			d = *v.(*protocol.ProviderLifecycle)
			lc = append(lc, d)
			label += ":" + d.State
		}
		out = append(out, label)
	}
	return collapseDeltas(strings.Join(out, ",")), lc
}

// sessionHasNoTelemetry: the session file records the answer and none of
// the readiness telemetry.
func sessionHasNoTelemetry(t *testing.T, final *protocol.FinalResult, answer string) {
	t.Helper()
	data, err := os.ReadFile(*final.SessionFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), answer) {
		t.Errorf("the session lacks the answer %q", answer)
	}
	for _, bad := range []string{"provider_lifecycle", "Loading model", "unavailable_error"} {
		if strings.Contains(string(data), bad) {
			t.Errorf("the session contains %q", bad)
		}
	}
}

func TestProviderLifecycleThroughTheBinary(t *testing.T) {
	yes, no := true, false
	const tail = "model_delta,model_step,settled,final_result"
	for _, tc := range []struct {
		name   string
		optIn  *bool
		inline bool
		want   string
	}{
		// A wait for readiness: one loading event, no provider_retry, then
		// ready at the first answer.
		{name: "opted in", optIn: &yes, want: "accepted,started,provider_lifecycle:loading,provider_lifecycle:ready," + tail},
		// Without the opt-in a loading answer is an ordinary retry.
		{name: "not opted in", optIn: nil, want: "accepted,started,provider_retry,provider_retry," + tail},
		{name: "opted out", optIn: &no, want: "accepted,started,provider_retry,provider_retry," + tail},
		// An inline route never emits it, whatever models.json says.
		{name: "inline route", optIn: &yes, inline: true, want: "accepted,started,provider_retry,provider_retry," + tail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, fakeprovider.Script{Loading: 2, Turns: []fakeprovider.Turn{answer}}, "FAKE_API_KEY=fake-key-123456")
			labProvider(t, e, tc.optIn)
			req := e.runReq("run-1", "q")
			if !tc.inline {
				req.Model, req.Provider, req.BaseURL, req.APIKey, req.ProviderMode = "lab-model", nil, nil, nil, nil
			}
			sid := "readiness"
			req.SessionID = &sid
			evs, final := e.run(e.c, req)
			if final.Status != "completed" || final.Output != answer.Text {
				t.Fatalf("final %+v error %+v", final, final.Error)
			}
			got, lc := lifecycleSummary(t, evs)
			if got != tc.want {
				t.Errorf("events\n got %s\nwant %s", got, tc.want)
			}
			if len(lc) == 2 && (lc[0].Detail == nil || *lc[0].Detail != "HTTP 503: Loading model" || lc[1].Detail != nil) {
				t.Errorf("details %v %v", lc[0].Detail, lc[1].Detail)
			}
			if n := len(e.fake.Requests()); n != 3 {
				t.Errorf("%d requests, want 2 loading answers and the call", n)
			}
			sessionHasNoTelemetry(t, final, answer.Text)
		})
	}
}

// TestProviderLifecycleNoRetrySpent: more loading answers than the retry
// budget (the default 4 replacements) still complete when opted in, the
// waits spending none, and exhaust the budget when not. The answers carry
// retry-after-ms 10, which both the readiness wait and recovery honour, so
// the test waits milliseconds.
func TestProviderLifecycleNoRetrySpent(t *testing.T) {
	for _, optIn := range []bool{true, false} {
		t.Run(map[bool]string{true: "opted in", false: "not opted in"}[optIn], func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{answer}}, "FAKE_API_KEY=fake-key-123456")
			labProvider(t, e, &optIn)
			for range 5 {
				e.fake.InjectFault(fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "10", Body: fakeprovider.LoadingBody})
			}
			req := e.runReq("run-1", "q")
			req.Model, req.Provider, req.BaseURL, req.APIKey, req.ProviderMode = "lab-model", nil, nil, nil, nil
			evs, final := e.run(e.c, req)
			got, _ := lifecycleSummary(t, evs)
			if optIn {
				if final.Status != "completed" || got != "accepted,started,provider_lifecycle:loading,provider_lifecycle:ready,"+okTail {
					t.Errorf("final %+v, events %s", final, got)
				}
				return
			}
			if final.Status != "error" || final.Error == nil || final.Error.Code != protocol.CodeRetriesExhausted ||
				got != "accepted,started,provider_retry,provider_retry,provider_retry,provider_retry,settled,final_result" {
				t.Errorf("final %+v %+v, events %s", final, final.Error, got)
			}
		})
	}
}

// TestProviderLifecycleNotARunField: a run request cannot opt in; the
// member is refused as unknown (the opt-in belongs to models.json).
func TestProviderLifecycleNotARunField(t *testing.T) {
	p := start(t, hostBin)
	line, _ := json.Marshal(map[string]any{"protocol_version": 1, "request_id": "r1", "command": "run", "run_id": "run-1",
		"workspace": t.TempDir(), "model": "m", "prompt": "p", "provider": "lab", "base_url": "http://127.0.0.1:9/v1", "lifecycle_events": true})
	p.send(t, string(line))
	ev := p.next(t)
	var d protocol.ErrorData
	if err := json.Unmarshal(ev.Data, &d); err != nil || ev.Type != "protocol_error" || d.Code != "unknown_field" || !strings.Contains(d.Message, "lifecycle_events") {
		t.Errorf("%s %s", ev.Type, ev.Data)
	}
}
