package copilot_test

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

	"octet.dev/host/runtime/copilot"
	internal "octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/copilot/copilottest"
)

// embedderHost is an embedder's Host: its own sessions and
// protocols, no GitHub login behind them.
type embedderHost struct {
	sessions atomic.Int64
	gone     atomic.Bool
}

func (h *embedderHost) NewSession(context.Context) (copilot.Session, error) {
	n := h.sessions.Add(1)
	return copilot.Session{Token: copilot.NewSecret(fmt.Sprintf("embedder-session-%d", n)), RefreshAt: time.Now().Add(time.Hour)}, nil
}

func (h *embedderHost) Current(context.Context, copilot.Session) error {
	if h.gone.Load() {
		return errors.New("the embedder's login was removed")
	}
	return nil
}

func (h *embedderHost) Models(context.Context, copilot.Session) ([]copilot.Model, error) {
	return []copilot.Model{
		{ID: "emb-responses", Protocol: copilot.OpenAiResponses, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
		{ID: "emb-chat", Name: "Embedder Chat", Protocol: copilot.OpenAiChat, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
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
	ep, err := copilot.ParseEndpoint(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	host := &embedderHost{}
	p := copilot.NewProvider(ep, host, e.Client)

	ms, err := p.RegisterModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].ID != "emb-chat" || ms[0].Name != "Embedder Chat" || ms[0].Protocol != copilot.OpenAiChat || ms[1].ID != "emb-responses" {
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

// TestUnwrap checks the one way into a public Provider: the seam of a
// built one, nil for a nil one or any other value.
func TestUnwrap(t *testing.T) {
	ep, err := copilot.ParseEndpoint("http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	p := copilot.NewProvider(ep, &embedderHost{}, nil)
	if in := internal.Unwrap(p); in == nil || in.Endpoint.String() != ep.String() {
		t.Fatalf("Unwrap(provider) = %v", in)
	}
	for _, v := range []any{nil, (*copilot.Provider)(nil), copilot.Provider{}, "provider"} {
		if in := internal.Unwrap(v); in != nil {
			t.Errorf("Unwrap(%#v) = %v, want nil", v, in)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a second SetUnwrap did not panic")
		}
	}()
	internal.SetUnwrap(func(any) *internal.Provider { return nil })
}
