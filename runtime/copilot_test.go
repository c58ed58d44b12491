package runtime_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"octet.dev/host/runtime"
	"octet.dev/host/runtime/copilot"
	"octet.dev/host/runtime/internal/copilot/copilottest"
)

// optionsHost is an embedder's copilot.Host: one session, one chat model.
type optionsHost struct{}

func (optionsHost) NewSession(context.Context) (copilot.Session, error) {
	return copilot.Session{Token: copilot.NewSecret("options-session"), RefreshAt: time.Now().Add(time.Hour)}, nil
}
func (optionsHost) Current(context.Context, copilot.Session) error { return nil }
func (optionsHost) Models(context.Context, copilot.Session) ([]copilot.Model, error) {
	return []copilot.Model{{ID: "emb-chat", Protocol: copilot.OpenAiChat, ContextWindowTokens: 8000, MaxOutputTokens: 1000}}, nil
}
func (optionsHost) Headers() (map[string]string, error) {
	return map[string]string{"Editor-Version": "options/1"}, nil
}

// TestOptionsCopilot runs "copilot/emb-chat" on the provider an embedder
// hands to Options.Copilot: the façade gives that provider (not the file
// host's, which has no login here) to the engine, so the run reaches the
// loopback endpoint with the host's session and headers.
func TestOptionsCopilot(t *testing.T) {
	e := copilottest.NewEndpoint(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer options-session" || r.Header.Get("Editor-Version") != "options/1" {
			rw.WriteHeader(http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(rw, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hello through the options\"}}]}\n\n"+
			"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3,\"total_tokens\":6}}\n\n"+
			"data: [DONE]\n\n")
	})
	ep, err := copilot.ParseEndpoint(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	a, err := runtime.New(runtime.Options{Home: home, HTTPClient: e.Client, Getenv: func(string) string { return "" },
		Copilot: copilot.NewProvider(ep, optionsHost{}, e.Client)})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a.Run(context.Background(), runtime.RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "copilot/emb-chat", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Status != "completed" || res.Output != "hello through the options" {
		t.Fatalf("%+v %+v", res, res.Error)
	}
}
