package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/copilot"
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

type onlyHost struct {
	t    *testing.T
	host string
	base http.RoundTripper
}

func (o onlyHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != o.host {
		o.t.Errorf("a request left for %s; only %s is allowed", r.URL, o.host)
		return nil, errors.New("refused by the test")
	}
	return o.base.RoundTrip(r)
}

// TestCopilotRunOnEmbedderSeam runs "copilot/<model>" on an embedder's
// seam (Options.Copilot): the route takes the host's model and protocol,
// inference goes to the explicit loopback TLS endpoint with the host's
// session, and nothing else is contacted.
func TestCopilotRunOnEmbedderSeam(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer embedder-session-token" || r.Header.Get("Editor-Version") != "embedder/1" {
			rw.WriteHeader(http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(rw, strings.ReplaceAll(copilotChatSSE, "hello from copilot", "hello from the seam"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ep, err := copilot.ParseEndpoint(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: onlyHost{t: t, host: u.Host, base: srv.Client().Transport}}
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
