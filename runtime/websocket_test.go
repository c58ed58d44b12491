package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestWebSocketRoute runs a configured openai-responses provider that asks
// for the WebSocket transport (~/.octet/models.json "transport":
// "websocket") over the fake's loopback socket: a tool loop uses one
// socket and continues each response; a handshake dropped before the
// request frame is a network wait; a socket closed after the frame makes
// usage uncertain before the retry.
func TestWebSocketRoute(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     fakeprovider.Fault
		waits     int
		retries   int
		uncertain bool
	}{
		{"clean", nil, 0, 0, false},
		{"refused before the handshake", fakeprovider.FaultRefuse{For: 300 * time.Millisecond}, 1, 0, false},
		{"dropped before the frame", fakeprovider.FaultWSDropHandshake{}, 0, 1, false},
		{"closed after the frame", fakeprovider.FaultWSCloseAfterFrame{}, 0, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{ToolCalls: []fakeprovider.ToolCall{{ID: "call_a", Name: "no_such_tool", Arguments: `{}`}}},
				{Text: "done"},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := `{"providers":{"lab":{"base_url":"` + fake.BaseURL(fakeprovider.ModeResponses) + `","provider_mode":"openai-responses","transport":"websocket",` +
				`"models":[{"id":"lab-model","context_window_tokens":32768,"max_output_tokens":4096}]}}}`
			if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			if tc.fault != nil {
				fake.InjectFault(tc.fault)
			}
			rc, err := agent.Run(context.Background(), runtime.RunRequest{
				RunID: "run-1", Workspace: t.TempDir(), Model: "lab-model", Prompt: "go", Tools: []string{},
				SessionDir: filepath.Join(home, "sessions"), SessionID: "ws",
			})
			if err != nil {
				t.Fatal(err)
			}
			waits, retries, uncertain := 0, 0, false
			for ev := range rc.Events() {
				switch ev.Data.(type) {
				case *protocol.ProviderWaitingForNetwork:
					waits++
				case *protocol.ProviderRetry:
					retries++
				case *protocol.ProviderUsageUncertain:
					uncertain = true
				}
			}
			res := rc.Wait()
			if res.Status != "completed" || res.Output != "done" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			if waits != tc.waits || retries != tc.retries || uncertain != tc.uncertain {
				t.Errorf("network waits %d, retries %d, usage uncertain %v; want %d, %d, %v", waits, retries, uncertain, tc.waits, tc.retries, tc.uncertain)
			}
			sockets := map[int]bool{}
			var frames []fakeprovider.Request
			for _, r := range fake.Requests() {
				if r.Method == "POST" {
					t.Errorf("an HTTP request: %s", r.Path)
				}
				if r.Method == fakeprovider.MethodMessage {
					frames = append(frames, r)
					sockets[r.WebSocket] = true
				}
			}
			last := frames[len(frames)-1]
			if len(sockets) != 1 && tc.fault == nil {
				t.Errorf("a clean tool loop used %d sockets", len(sockets))
			}
			if tc.fault == nil {
				if _, ok := last.Body["previous_response_id"]; !ok || len(last.Body["input"].([]any)) != 1 {
					t.Errorf("the second step did not continue the first: %v", last.Body)
				}
			}
		})
	}
}
