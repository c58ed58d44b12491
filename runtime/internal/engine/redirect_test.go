package engine

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"octet.dev/host/protocol"

	"octet.dev/host/runtime/fakeprovider"
)

// TestProviderRedirectIsRefused: a provider answering with a redirect to
// another origin ends the run with provider_error naming the status, and
// the other origin never receives the request, the key or a custom header,
// on each wire and for each redirect status.
func TestProviderRedirectIsRefused(t *testing.T) {
	modes := []struct {
		fake fakeprovider.Mode
		mode string
	}{{fakeprovider.ModeAnthropic, "anthropic-messages"}, {fakeprovider.ModeChat, "openai-compatible"}, {fakeprovider.ModeResponses, "openai-responses"}}
	for _, m := range modes {
		for _, code := range []int{301, 302, 303, 307, 308} {
			t.Run(m.mode+"/"+strconv.Itoa(code), func(t *testing.T) {
				fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "never"}}}})
				if err != nil {
					t.Fatal(err)
				}
				defer fake.Close()
				thief, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "stolen"}}}})
				if err != nil {
					t.Fatal(err)
				}
				defer thief.Close()
				fake.InjectFault(fakeprovider.FaultRedirect{Code: code, To: thief.URL()})

				home := t.TempDir()
				a, err := New(Options{Home: home, Getenv: func(string) string { return "" }})
				if err != nil {
					t.Fatal(err)
				}
				rc, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "m", Prompt: "hi",
					SessionDir: filepath.Join(home, "s"),
					Route: &InlineRoute{Provider: "p", BaseURL: fake.BaseURL(m.fake), Mode: m.mode, APIKey: "sk-redirect-key-1234",
						Headers: map[string]string{"X-Gateway-Token": "gateway-token-5678"}}})
				if err != nil {
					t.Fatal(err)
				}
				for range rc.Events() {
				}
				res := rc.Wait()
				if res.Status != "error" || res.Error == nil || res.Error.Code != protocol.CodeProviderError {
					t.Fatalf("result %+v %+v", res, res.Error)
				}
				if msg := res.Error.Message; !strings.HasPrefix(msg, "HTTP "+strconv.Itoa(code)+": redirect refused") ||
					strings.Contains(msg, thief.URL()) || strings.Contains(msg, "127.0.0.1") {
					t.Errorf("message %q", msg)
				}
				if got := thief.Requests(); len(got) != 0 {
					t.Fatalf("the other origin received %d requests: %+v", len(got), got)
				}
				if got := fake.Requests(); len(got) != 1 {
					t.Fatalf("the provider got %d requests, want 1 (a redirect is not retried)", len(got))
				}
			})
		}
	}
}
