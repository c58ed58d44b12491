package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/schematest"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

func deltaEvent(text string) runtime.Event {
	return runtime.Event{Type: protocol.TypeModelDelta, Data: &protocol.ModelDelta{Step: 2, Channel: protocol.ChannelText, Text: text}}
}

func encodeEvent(t *testing.T, ev runtime.Event) (string, map[string]any) {
	t.Helper()
	b, err := appendRPCEvent(nil, "run-1", ev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("not one line: %q", b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return string(b), m
}

func TestRPCEventForms(t *testing.T) {
	three := 3
	cases := []struct {
		ev   runtime.Event
		want string
	}{
		{deltaEvent("hé \"x\"\n<b>"), `{"type":"model_delta","runId":"run-1","step":2,"channel":"text","text":"hé \"x\"\n<b>"}`},
		{runtime.Event{Type: protocol.TypeProviderRetry, Data: &protocol.ProviderRetry{Attempt: 1, MaxAttempts: 4, DelayMS: 250, Error: "HTTP 500"}},
			`{"type":"auto_retry_start","runId":"run-1","attempt":1,"maxAttempts":4,"delayMs":250,"errorMessage":"HTTP 500"}`},
		{runtime.Event{Type: protocol.TypeProviderWaitingForNetwork, Data: &protocol.ProviderWaitingForNetwork{Attempt: 2, DelayMS: 1000, Error: "connection refused"}},
			`{"type":"provider_waiting_for_network","runId":"run-1","attempt":2,"delayMs":1000,"errorMessage":"connection refused"}`},
		{runtime.Event{Type: protocol.TypeProviderOperationRetry, Data: &protocol.ProviderOperationRetry{Operation: "local_compaction", Attempt: 1, MaxAttempts: &three, DelayMS: 5, Error: "e"}},
			`{"type":"provider_operation_retry","runId":"run-1","operation":"local_compaction","attempt":1,"maxAttempts":3,"delayMs":5,"errorMessage":"e"}`},
		{runtime.Event{Type: protocol.TypeProviderOperationRetry, Data: &protocol.ProviderOperationRetry{Operation: "terminal_gate", Attempt: 1, Error: "e"}},
			`{"type":"provider_operation_retry","runId":"run-1","operation":"terminal_gate","attempt":1,"maxAttempts":null,"delayMs":0,"errorMessage":"e"}`},
		{runtime.Event{Type: protocol.TypeProviderUsageUncertain, Data: &protocol.ProviderUsageUncertain{}},
			`{"type":"provider_usage_uncertain","runId":"run-1"}`},
		{runtime.Event{Type: protocol.TypeStarted, Data: &protocol.Started{}}, `{"type":"started","runId":"run-1"}`},
		// The media's type must not collide with the line's.
		{runtime.Event{Type: protocol.TypeOutputMedia, Data: &protocol.OutputMedia{Step: 1, Type: "image", MimeType: "image/png", Path: "/s/x.media/ab", Bytes: 9, SHA256: "ab"}},
			`{"type":"output_media","runId":"run-1","step":1,"mediaType":"image","mimeType":"image/png","path":"/s/x.media/ab","bytes":9,"sha256":"ab"}`},
		// The model's arguments keep their own member names.
		{runtime.Event{Type: protocol.TypeToolStart, Data: &protocol.ToolStart{Step: 1, CallID: "c1", Tool: "grep",
			Arguments: jsontext.Value(`{"max_count":3,"nested":{"snake_case":true}}`)}},
			`{"type":"tool_start","runId":"run-1","step":1,"callId":"c1","tool":"grep","arguments":{"max_count":3,"nested":{"snake_case":true}}}`},
		{runtime.Event{Type: protocol.TypeToolFinish, Data: &protocol.ToolFinish{CallID: "c1", Tool: "bash", Error: &protocol.ErrorData{Code: protocol.CodeTimedOut, Message: "m"}, ExitCode: new(-1), Signal: "SIGKILL"}},
			`{"type":"tool_finish","runId":"run-1","callId":"c1","tool":"bash","ok":false,"output":"","truncated":false,"error":{"code":"timed_out","message":"m"},"exitCode":-1,"signal":"SIGKILL"}`},
	}
	for _, c := range cases {
		got, _ := encodeEvent(t, c.ev)
		schematest.CheckRPCLine(t, []byte(got))
		if got != c.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", c.ev.Type, got, c.want)
		}
	}
}

// Every payload of a native run event, encoded in RPC form, has only
// camelCase member names (outside tool arguments).
func TestRPCEventNamesAreCamelCase(t *testing.T) {
	for _, info := range protocol.Events() {
		if info.Kind != protocol.KindLifecycle && info.Kind != protocol.KindStreaming {
			continue
		}
		data := protocol.PayloadFor(info.Type)
		if data == nil {
			t.Fatalf("no payload for %s", info.Type)
		}
		line, _ := encodeEvent(t, runtime.Event{Type: info.Type, Data: data})
		dec := jsontext.NewDecoder(strings.NewReader(line))
		for {
			depth := dec.StackDepth()
			k, n := dec.StackIndex(depth)
			tok, err := dec.ReadToken()
			if err != nil {
				break
			}
			if k == '{' && n%2 == 0 && tok.Kind() == '"' && strings.Contains(tok.String(), "_") {
				t.Errorf("%s: member %q in %s", info.Type, tok.String(), line)
			}
		}
	}
}
