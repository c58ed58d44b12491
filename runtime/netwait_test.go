package runtime_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestMaxNetworkWaitAgainstARefusingServer drives the Go API's network-wait
// ceiling (CONTRACT §12, §15) over real loopback HTTP: the fake provider
// refuses connections (a real ECONNREFUSED before any request byte), the
// run waits for the network, and the ceiling ends recovery with
// network_wait_exceeded instead of retrying early; zero disables waiting.
// The ceiling is a Go API setter only: the source text rules out a CLI
// flag or a protocol field for it, so this is its end-to-end test.
func TestMaxNetworkWaitAgainstARefusingServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ceiling time.Duration
		waits   int
	}{
		// One wait of at most 1 s (the first network delay, jittered in
		// [0.5 s, 1 s]); the next could start no sooner than 1 s later,
		// past the 1.2 s ceiling, so recovery stops.
		{"ceiling reached", 1200 * time.Millisecond, 1},
		{"waiting disabled", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "never"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			fake.InjectFault(fakeprovider.FaultRefuse{}) // until Reopen: the whole test
			home := t.TempDir()
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			ceiling := tc.ceiling
			agent.SetMaxNetworkWait(&ceiling)
			rc, err := agent.Run(context.Background(), runtime.RunRequest{
				RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "p", Tools: []string{},
				SessionDir: filepath.Join(home, "sessions"), SessionID: "netwait",
				Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeChat)},
			})
			if err != nil {
				t.Fatal(err)
			}
			waits, retries := 0, 0
			for ev := range rc.Events() {
				switch d := ev.Data.(type) {
				case *protocol.ProviderWaitingForNetwork:
					waits++
					if d.Attempt != waits || d.DelayMS < 500 || d.DelayMS > 1000 || d.Error == "" {
						t.Errorf("provider_waiting_for_network %+v", d)
					}
				case *protocol.ProviderRetry:
					retries++
				}
			}
			res := rc.Wait()
			if res.Status != "error" || res.Error == nil || res.Error.Code != "network_wait_exceeded" {
				t.Fatalf("result %+v", res)
			}
			if waits != tc.waits || retries != 0 {
				t.Errorf("%d network waits and %d retries, want %d and 0", waits, retries, tc.waits)
			}
			if n := len(fake.Requests()); n != 0 {
				t.Errorf("the refusing server recorded %d requests", n)
			}
		})
	}
}
