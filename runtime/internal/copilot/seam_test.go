package copilot

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// onlyTo fails the test on any request to a host other than allowed.
type onlyTo struct {
	t       *testing.T
	allowed string
	base    http.RoundTripper
}

func (o onlyTo) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != o.allowed {
		o.t.Errorf("a request left for %s (only %s is allowed)", r.URL, o.allowed)
		return nil, errors.New("refused by the test transport")
	}
	return o.base.RoundTrip(r)
}

// TestSeamWithEmbedderHost embeds the generic seam with a host of its own
// on a fixed loopback TLS endpoint: models are registered from the host's
// protocols, inference carries the host's session and headers, a 401
// takes a new session from the host, and no request goes anywhere else
// (no GitHub endpoint).
func TestSeamWithEmbedderHost(t *testing.T) {
	var auths []string
	var mu sync.Mutex
	fail401 := atomic.Bool{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization")+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		if r.URL.Path != "/chat/completions" {
			http.NotFound(rw, r)
			return
		}
		if fail401.CompareAndSwap(true, false) {
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(rw, `{"ok":true}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ep, err := ParseEndpoint(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: onlyTo{t: t, allowed: u.Host, base: srv.Client().Transport}}
	h := &ownHost{}
	p := &Provider{Endpoint: ep, Host: h, HTTPClient: client}

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
	// The request names the Copilot API; the seam sends it to the endpoint.
	post := func() *http.Response {
		req, _ := http.NewRequest(http.MethodPost, "https://api.githubcopilot.com/chat/completions", strings.NewReader(`{"model":"own-chat","messages":[]}`))
		resp, err := p.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := post(); resp.StatusCode != http.StatusOK {
		t.Fatalf("inference: HTTP %d", resp.StatusCode)
	}
	fail401.Store(true)
	if resp := post(); resp.StatusCode != http.StatusOK {
		t.Fatalf("inference after a 401: HTTP %d", resp.StatusCode)
	}
	mu.Lock()
	got := strings.Join(auths, "\n")
	mu.Unlock()
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
	client := &http.Client{Transport: onlyTo{t: t, allowed: "no-such-host.invalid", base: http.DefaultTransport}}
	p := &Provider{Host: &ownHost{}, HTTPClient: client}
	if _, err := p.RegisterModels(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no endpoint") {
		t.Fatalf("RegisterModels without an endpoint: %v", err)
	}
}
