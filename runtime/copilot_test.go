package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/runtime"
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

// loopbackOnly fails the test on any request to a host other than the
// loopback server's: the seam contacts no GitHub endpoint.
type loopbackOnly struct {
	t    *testing.T
	host string
	base http.RoundTripper
}

func (l loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != l.host {
		l.t.Errorf("a request left for %s; only the embedder's endpoint %s is allowed", r.URL, l.host)
		return nil, errors.New("refused by the test")
	}
	return l.base.RoundTrip(r)
}

// TestCopilotSeamEmbedded embeds the Copilot seam with a host of its own
// on a fixed endpoint on loopback TLS: the models come from the host's
// protocols, inference carries the host's session and headers, a 401
// takes one new session, a removed login is refused, and no request goes
// anywhere but the endpoint.
func TestCopilotSeamEmbedded(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	refuse := atomic.Bool{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Editor-Version"))
		mu.Unlock()
		if refuse.CompareAndSwap(true, false) {
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(rw).Encode(map[string]string{"model": "emb-chat"})
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ep, err := runtime.ParseCopilotEndpoint(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	host := &embedderHost{}
	p := runtime.NewCopilotProvider(ep, host, &http.Client{Transport: loopbackOnly{t: t, host: u.Host, base: srv.Client().Transport}})

	ms, err := p.RegisterModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].ID != "emb-chat" || ms[0].Name != "Embedder Chat" || ms[0].Protocol != runtime.CopilotOpenAiChat || ms[1].ID != "emb-responses" {
		t.Fatalf("routable models: %+v", ms)
	}
	post := func() int {
		req, _ := http.NewRequest(http.MethodPost, "https://api.githubcopilot.com/chat/completions", strings.NewReader(`{"model":"emb-chat"}`))
		resp, err := p.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(); st != http.StatusOK {
		t.Fatalf("inference: HTTP %d", st)
	}
	refuse.Store(true)
	if st := post(); st != http.StatusOK {
		t.Fatalf("inference after a 401: HTTP %d", st)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
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
