package engine

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/copilot/copilottest"
)

// seamHost is an embedder's Copilot host: a fixed session and protocols.
type seamHost struct{}

func (seamHost) NewSession(context.Context) (copilot.Session, error) {
	return copilot.Session{Token: copilot.NewSecret("embedder-session-token"), RefreshAt: time.Now().Add(time.Hour)}, nil
}
func (seamHost) Current(context.Context, copilot.Session) error { return nil }
func (seamHost) Models(context.Context, copilot.Session) ([]copilot.Model, error) {
	return []copilot.Model{{ID: "emb-chat", Protocol: copilot.ProtocolOpenAiChat, ContextWindowTokens: 8000, MaxOutputTokens: 1000}}, nil
}
func (seamHost) Headers() (map[string]string, error) {
	return map[string]string{"Editor-Version": "embedder/1"}, nil
}

// TestCopilotRunOnEmbedderSeam runs "copilot/<model>" on an embedder's
// seam (Options.Copilot): the route takes the host's model and protocol,
// inference goes to the explicit loopback TLS endpoint with the host's
// session, and nothing else is contacted.
func TestCopilotRunOnEmbedderSeam(t *testing.T) {
	e := copilottest.NewEndpoint(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer embedder-session-token" || r.Header.Get("Editor-Version") != "embedder/1" {
			rw.WriteHeader(http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(rw, strings.ReplaceAll(copilotChatSSE, "hello from copilot", "hello from the seam"))
	})
	ep, err := copilot.ParseEndpoint(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := e.Client
	home := t.TempDir()
	a, err := New(Options{Home: home, HTTPClient: client, Getenv: func(string) string { return "" },
		Copilot: &copilot.Provider{Endpoint: ep, Host: seamHost{}, HTTPClient: client}})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "copilot/emb-chat", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Status != "completed" || res.Output != "hello from the seam" {
		t.Fatalf("%+v %+v", res, res.Error)
	}
}
