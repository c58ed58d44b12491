package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// The terminal gate through the binary: an operator's terminal_gate in
// ~/.octet/settings.json (and a trusted workspace's over it) names a
// catalog model of ~/.octet/models.json, served by a second fake; the
// protocol request carries nothing about it.

const judgeKey = "judge-key-98765432"

// judge configures the catalog model "judge-model" of the provider
// "judge", served by a fake answering gateTurns in the chat mode, and
// returns that fake.
func judge(t *testing.T, e *e2e, gateTurns ...fakeprovider.Turn) *fakeprovider.Server {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: gateTurns}, APIKey: judgeKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	prov := map[string]any{"base_url": fake.BaseURL(fakeprovider.ModeChat), "provider_mode": "openai-compatible", "api_key_env": "JUDGE_KEY",
		"models": []any{map[string]any{"id": "judge-model", "context_window_tokens": 32768, "max_output_tokens": 1024}}}
	writeLayerFile(t, filepath.Join(e.home, ".octet", "models.json"), string(mustJSON(t, map[string]any{"providers": map[string]any{"judge": prov}})))
	return fake
}

func TestTerminalGateThroughTheBinary(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "Done."}, {Text: "Done: main.go changed, tests pass."}}}, "JUDGE_KEY="+judgeKey)
	gate := judge(t, e,
		fakeprovider.Turn{Text: `{"decision":"reject","reason":"say whether the tests pass"}`},
		fakeprovider.Turn{Text: `{"decision":"accept"}`})
	// One transient failure of the gate's call: recovered, announced as the
	// terminal_gate operation.
	gate.InjectFault(fakeprovider.FaultStatus{Code: 503})
	writeLayerFile(t, filepath.Join(e.home, ".octet", "settings.json"),
		`{"trusted_workspaces":[`+string(mustJSON(t, e.ws))+`],"terminal_gate":{"model":"judge-model","instructions":"user file instructions"}}`)
	writeLayerFile(t, filepath.Join(e.ws, ".octet", "settings.json"),
		`{"terminal_gate":{"model":"judge-model","instructions":"The answer must say whether the tests pass."}}`)

	evs, final := e.run(e.c, e.runReq("run-1", "fix the bug"))
	if final.Status != "completed" || final.Output != "Done: main.go changed, tests pass." || final.Steps != 2 {
		t.Fatalf("final %+v error %+v", final, final.Error)
	}
	want := "accepted,started,model_delta,model_step,provider_operation_retry,candidate_rejected,model_delta,model_step,settled,final_result"
	if got := collapseDeltas(eventTypes(evs)); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	for _, ev := range evs {
		v, err := ev.Decode() // strictly, as the registry's payload
		if err != nil {
			t.Fatalf("%s %s: %v", ev.Type, ev.Data, err)
		}
		switch d := v.(type) {
		case *protocol.CandidateRejected:
			if *d != (protocol.CandidateRejected{Step: 1, Attempt: 1, MaxAttempts: 8, Reason: "say whether the tests pass"}) {
				t.Errorf("candidate_rejected %+v", d)
			}
		case *protocol.ProviderOperationRetry:
			if d.Operation != "terminal_gate" || d.Attempt != 1 || d.MaxAttempts == nil || *d.MaxAttempts != 4 {
				t.Errorf("provider_operation_retry %+v", d)
			}
		}
	}
	// The workspace's gate replaced the user file's.
	greqs := gate.Requests()
	if len(greqs) != 3 {
		t.Fatalf("%d gate requests, want 3", len(greqs))
	}
	body := string(mustJSON(t, greqs[2].Body))
	if !strings.Contains(body, "The answer must say whether the tests pass.") || strings.Contains(body, "user file instructions") {
		t.Errorf("the gate request has the wrong instructions: %s", body)
	}
	for _, r := range greqs {
		if r.KeySHA256 != fakeprovider.KeyFingerprint(judgeKey) {
			t.Error("the gate's provider did not get its key")
		}
	}
	// The run's second request holds the rejected candidate and the reason.
	reqs := e.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d run requests", len(reqs))
	}
	second := string(mustJSON(t, reqs[1].Body))
	if !strings.Contains(second, `"content":"Done."`) || !strings.Contains(second, "say whether the tests pass") {
		t.Errorf("the second request lacks the candidate or the reason: %s", second)
	}
	session, err := os.ReadFile(*final.SessionFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(session), `"operation":"terminal_gate"`) || strings.Contains(string(session), judgeKey) {
		t.Error("the session lacks the gate's usage record, or holds its key")
	}
}

// TestTerminalGateSettingsRefusals: a malformed terminal_gate, or one whose
// model is not in the catalog, refuses every run before anything ran.
func TestTerminalGateSettingsRefusals(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "Done."}}})
	for _, tc := range []struct {
		settings string
		code     protocol.Code
		msg      string
	}{
		{`{"terminal_gate":{"model":"judge-model"}}`, protocol.CodeConfigInvalid, "terminal_gate.instructions is required"},
		{`{"terminal_gate":{"model":"nowhere","instructions":"x"}}`, protocol.CodeModelNotFound, "terminal gate"},
	} {
		writeLayerFile(t, filepath.Join(e.home, ".octet", "settings.json"), tc.settings)
		evs, final := e.run(e.c, e.runReq("run-"+string(tc.code), "fix the bug"))
		if final.Status != "error" || final.Error == nil || final.Error.Code != tc.code || !strings.Contains(final.Error.Message, tc.msg) {
			t.Errorf("%s: final %+v error %+v", tc.settings, final, final.Error)
		}
		if got := eventTypes(evs); got != "final_result" {
			t.Errorf("%s: events %s", tc.settings, got)
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("%d provider requests", n)
	}
}
