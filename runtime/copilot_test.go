package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/runtime"
	"octet.dev/host/runtime/internal/copilot/copilottest"
)

// embedderHost is an embedder's CopilotHost: its own sessions and
// protocols, no GitHub login behind them.
type embedderHost struct {
	sessions atomic.Int64
	gone     atomic.Bool
}

func (h *embedderHost) NewSession(context.Context) (runtime.CopilotSession, error) {
	n := h.sessions.Add(1)
	return runtime.CopilotSession{Token: runtime.NewCopilotSecret(fmt.Sprintf("embedder-session-%d", n)), RefreshAt: time.Now().Add(time.Hour)}, nil
}

func (h *embedderHost) Current(context.Context, runtime.CopilotSession) error {
	if h.gone.Load() {
		return errors.New("the embedder's login was removed")
	}
	return nil
}

func (h *embedderHost) Models(context.Context, runtime.CopilotSession) ([]runtime.CopilotModel, error) {
	return []runtime.CopilotModel{
		{ID: "emb-responses", Protocol: runtime.CopilotOpenAiResponses, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
		{ID: "emb-chat", Name: "Embedder Chat", Protocol: runtime.CopilotOpenAiChat, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
		{ID: "emb-other", Protocol: "anthropic-messages", ContextWindowTokens: 8000, MaxOutputTokens: 1000},
	}, nil
}

func (h *embedderHost) Headers() (map[string]string, error) {
	return map[string]string{"Editor-Version": "embedder/1.0"}, nil
}

// TestCopilotSeamEmbedded embeds the Copilot seam with a host of its own
// on a fixed endpoint on loopback TLS: the models come from the host's
// protocols, inference carries the host's session and headers, a 401
// takes one new session, a removed login is refused, and no request goes
// anywhere but the endpoint.
func TestCopilotSeamEmbedded(t *testing.T) {
	e := copilottest.NewEndpoint(t, func(rw http.ResponseWriter, r *http.Request) {
		json.NewEncoder(rw).Encode(map[string]string{"model": "emb-chat"})
	})
	ep, err := runtime.ParseCopilotEndpoint(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	host := &embedderHost{}
	p := runtime.NewCopilotProvider(ep, host, e.Client)

	ms, err := p.RegisterModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].ID != "emb-chat" || ms[0].Name != "Embedder Chat" || ms[0].Protocol != runtime.CopilotOpenAiChat || ms[1].ID != "emb-responses" {
		t.Fatalf("routable models: %+v", ms)
	}
	// The requests name the Copilot API; the seam sends them to the
	// endpoint, and takes a new session after a 401.
	e.Inference(t, p.Client(), `{"model":"emb-chat"}`)
	got := e.Seen(func(r copilottest.Request) string {
		return r.Method + " " + r.Path + " " + r.Header.Get("Authorization") + " " + r.Header.Get("Editor-Version")
	})
	want := strings.Join([]string{
		"POST /chat/completions Bearer embedder-session-1 embedder/1.0",
		"POST /chat/completions Bearer embedder-session-1 embedder/1.0",
		"POST /chat/completions Bearer embedder-session-2 embedder/1.0",
	}, "\n")
	if got != want {
		t.Fatalf("the endpoint saw:\n%s\nwant:\n%s", got, want)
	}
	s, err := p.Session(context.Background())
	if err != nil || s.API.String() != ep.String() || strings.Contains(fmt.Sprint(s), "embedder-session") {
		t.Fatalf("session %v (%v): want the endpoint's origin and no token in its text", s, err)
	}
	host.gone.Store(true)
	if _, err := p.Session(context.Background()); err == nil {
		t.Fatal("a removed login still has a session")
	}
}
