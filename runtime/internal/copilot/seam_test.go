package copilot

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/copilot/copilottest"
)

// ownHost is an embedder's Host: its own sessions and protocols, no
// GitHub login behind them.
type ownHost struct {
	mu       sync.Mutex
	sessions atomic.Int64
	gone     bool // the embedder's login was removed
}

func (h *ownHost) NewSession(context.Context) (Session, error) {
	n := h.sessions.Add(1)
	return Session{Token: NewSecret("own-session-" + itoa(int(n))), RefreshAt: time.Now().Add(time.Hour)}, nil
}

func (h *ownHost) Current(context.Context, Session) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone {
		return ErrNotLoggedIn
	}
	return nil
}

func (h *ownHost) Models(context.Context, Session) ([]Model, error) {
	return []Model{
		{ID: "own-chat", Protocol: ProtocolOpenAiChat, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
		{ID: "own-responses", Name: "Own Responses", Protocol: ProtocolOpenAiResponses, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
		{ID: "own-messages", Protocol: ProtocolAnthropicMessages, ContextWindowTokens: 8000, MaxOutputTokens: 1000},
	}, nil
}

func (h *ownHost) Headers() (map[string]string, error) {
	return map[string]string{"User-Agent": "own-embedder/1.0"}, nil
}

// TestSeamWithEmbedderHost embeds the generic seam with a host of its own
// on a fixed loopback TLS endpoint: models are registered from the host's
// protocols, inference carries the host's session and headers, a 401
// takes a new session from the host, and no request goes anywhere else
// (no GitHub endpoint).
func TestSeamWithEmbedderHost(t *testing.T) {
	e := copilottest.NewEndpoint(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" {
			http.NotFound(rw, r)
			return
		}
		io.WriteString(rw, `{"ok":true}`)
	})
	ep, err := ParseEndpoint(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := &ownHost{}
	p := &Provider{Endpoint: ep, Host: h, HTTPClient: e.Client}

	tab, err := p.RegisterModels(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Models) != 2 || tab.Models[0].ID != "own-chat" || tab.Models[1].Name != "Own Responses" || tab.Models[0].Name != "own-chat" {
		t.Fatalf("routable models: %+v", tab.Models)
	}
	if len(tab.Unroutable) != 1 || tab.Unroutable[0].ID != "own-messages" || tab.Unroutable[0].Unroutable == "" {
		t.Fatalf("unroutable models: %+v", tab.Unroutable)
	}
	// The requests name the Copilot API; the seam sends them to the
	// endpoint, and takes a new session after a 401.
	e.Inference(t, p.Client(), `{"model":"own-chat","messages":[]}`)
	got := e.Seen(func(r copilottest.Request) string {
		return r.Header.Get("Authorization") + " " + r.Header.Get("User-Agent")
	})
	want := "Bearer own-session-1 own-embedder/1.0\nBearer own-session-1 own-embedder/1.0\nBearer own-session-2 own-embedder/1.0"
	if got != want {
		t.Fatalf("the endpoint saw:\n%s\nwant:\n%s", got, want)
	}
	if n := h.sessions.Load(); n != 2 {
		t.Fatalf("%d sessions asked of the host, want 2", n)
	}
	// A login the host no longer has is refused, cached session or not.
	h.mu.Lock()
	h.gone = true
	h.mu.Unlock()
	if _, err := p.Session(context.Background()); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("Session after the host's logout: %v", err)
	}
}

// TestSeamNeedsEndpoint: without an explicit endpoint, and a session with
// none of its own, nothing is sent anywhere.
func TestSeamNeedsEndpoint(t *testing.T) {
	client := &http.Client{Transport: copilottest.OnlyHost(t, "no-such-host.invalid", http.DefaultTransport)}
	p := &Provider{Host: &ownHost{}, HTTPClient: client}
	if _, err := p.RegisterModels(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no endpoint") {
		t.Fatalf("RegisterModels without an endpoint: %v", err)
	}
}
