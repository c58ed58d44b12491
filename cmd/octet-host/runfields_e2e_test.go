package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// The optional run fields hello advertises beyond the source's list
// (features max_steps and reasoning), proved through the binary.

// TestRunMaxSteps: max_steps bounds the model steps. A run whose model
// keeps calling tools ends blocked with max_steps_reached after exactly
// that many model calls (no step past the limit reaches the provider), a
// run that finishes within the limit completes, and an out-of-range value
// is refused before any provider I/O.
func TestRunMaxSteps(t *testing.T) {
	call := fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}}}
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{call, call, call, {Text: "done"}}})
	os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("a\n"), 0o644)
	i64 := func(v int64) *int64 { return &v }

	req := e.runReq("run-capped", "read a.txt until told to stop")
	req.MaxSteps = i64(2)
	_, final := e.run(e.c, req)
	if final.Status != "blocked" || final.Error == nil || final.Error.Code != protocol.CodeMaxStepsReached || final.Steps != 2 {
		t.Fatalf("final %+v; want blocked, max_steps_reached, 2 steps", final)
	}
	if n := len(e.fake.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (the limit)", n)
	}

	for i, bad := range []int64{0, -1, 1001} {
		req := e.runReq(fmt.Sprintf("run-bad-%d", i), "p")
		req.MaxSteps = i64(bad)
		evs, final := e.run(e.c, req)
		if len(evs) != 1 || final.Status != "error" || final.Error == nil || final.Error.Code != protocol.CodeInvalidValue {
			t.Fatalf("max_steps %d: events %s, final %+v; want only final_result with invalid_value", bad, eventTypes(evs), final)
		}
	}
	if n := len(e.fake.Requests()); n != 2 {
		t.Fatalf("a refused run reached the provider (%d calls)", n)
	}

	e2 := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{call, {Text: "done"}}})
	os.WriteFile(filepath.Join(e2.ws, "a.txt"), []byte("a\n"), 0o644)
	req = e2.runReq("run-within", "read a.txt once")
	req.MaxSteps = i64(2)
	if _, final := e2.run(e2.c, req); final.Status != "completed" || final.Steps != 2 || final.Output != "done" {
		t.Fatalf("final %+v; want completed in 2 steps", final)
	}
}

// TestRunReasoningEffort: reasoning.effort reaches the request body of
// every wire in that wire's own form, on a route that supports reasoning;
// on one that does not it is refused before any provider I/O.
func TestRunReasoningEffort(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		mode fakeprovider.Mode
		got  func(body map[string]any) any
		want any
	}{
		{fakeprovider.ModeChat, func(b map[string]any) any { return b["reasoning_effort"] }, "high"},
		{fakeprovider.ModeResponses, func(b map[string]any) any { r, _ := b["reasoning"].(map[string]any); return r["effort"] }, "high"},
		{fakeprovider.ModeAnthropic, func(b map[string]any) any { th, _ := b["thinking"].(map[string]any); return th["type"] }, "enabled"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "thought about it"}}})
			req := e.modeReq(tc.mode, "run-effort", "think hard")
			req.SupportsReasoning = &yes
			req.MaxOutputTokens = func(v int64) *int64 { return &v }(32000)
			req.Reasoning = &protocol.Reasoning{Effort: "high"}
			if _, final := e.run(e.c, req); final.Status != "completed" {
				t.Fatalf("final %+v", final)
			}
			var body map[string]any
			if err := json.Unmarshal(mustJSON(t, e.fake.Requests()[0].Body), &body); err != nil {
				t.Fatal(err)
			}
			if got := tc.got(body); got != tc.want {
				t.Errorf("request body carries %v, want %v: %s", got, tc.want, mustJSON(t, e.fake.Requests()[0].Body))
			}

			no := false
			req = e.modeReq(tc.mode, "run-unsupported", "think hard")
			req.SupportsReasoning = &no
			req.Reasoning = &protocol.Reasoning{Effort: "high"}
			evs, final := e.run(e.c, req)
			if len(evs) != 1 || final.Error == nil || final.Error.Code != protocol.CodeReasoningUnsupported {
				t.Fatalf("events %s, final %+v; want only final_result with reasoning_unsupported", eventTypes(evs), final)
			}
			if n := len(e.fake.Requests()); n != 1 {
				t.Fatalf("a refused run reached the provider (%d calls)", n)
			}
		})
	}
}
