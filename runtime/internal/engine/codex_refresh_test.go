package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// codexRefreshRig is a Codex login whose access token is far from expiry,
// a loopback token endpoint that answers every refresh with fresh, and the
// fake provider's Codex backend, which accepts only accepted.
type codexRefreshRig struct {
	fake      *fakeprovider.Server
	old       string // the login's access token
	fresh     string // what the token endpoint hands out
	refreshes atomic.Int32
	bodies    []string // refresh request bodies
	mu        sync.Mutex
	log       bytes.Buffer
	agent     *Agent
	home      string
}

func newCodexRefreshRig(t *testing.T, accepted func(old, fresh string) string, turns ...fakeprovider.Turn) *codexRefreshRig {
	t.Helper()
	r := &codexRefreshRig{home: t.TempDir(), old: jwt(time.Now().Add(2*time.Hour), "acct-7"), fresh: jwt(time.Now().Add(3*time.Hour), "acct-7")}
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.refreshes.Add(1)
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"` + r.fresh + `","refresh_token":"rt-2"}`))
	}))
	t.Cleanup(tokens.Close)
	fake, err := fakeprovider.New(fakeprovider.Options{APIKey: accepted(r.old, r.fresh), Script: fakeprovider.Script{Turns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	r.fake = fake
	writeCodexLogin(t, r.home, r.old)
	r.agent, err = New(Options{Home: r.home, Getenv: func(string) string { return "" }, Logger: jsonLogger(&r.log, slog.LevelDebug),
		CodexBaseURL: fake.CodexBaseURL(), CodexTokenURL: tokens.URL,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs one codex/ request and checks that no token or refresh token
// appears in its events, its result, the session or the log.
func (r *codexRefreshRig) run(t *testing.T) ([]Event, protocol.FinalResult) {
	t.Helper()
	rc, err := r.agent.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "codex/gpt-5.3-codex", Prompt: "hi",
		SessionDir: filepath.Join(r.home, "s")})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var evs []Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	res := rc.Wait()
	all, _ := json.Marshal(evs)
	session, _ := os.ReadFile(*res.SessionFile)
	for _, secret := range []string{r.old, r.fresh, "rt-1", "rt-2"} {
		for what, text := range map[string]string{"events": string(all), "session": string(session), "log": r.log.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("a credential appears in the %s", what)
			}
		}
	}
	return evs, res
}

// keys lists the requests' paths and key fingerprints.
func keys(reqs []fakeprovider.Request) string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Path+" key "+r.KeySHA256+" "+r.Fault)
	}
	return strings.Join(out, "; ")
}

// TestCodex401RefreshesAndRetriesOnce: the backend refuses a token that is
// nowhere near its expiry (revoked); the host refreshes it once under the
// lock, sends the call again with the new token, and the run completes.
// The repeated call is neither a provider_retry nor a step, and it is
// logged at info.
func TestCodex401RefreshesAndRetriesOnce(t *testing.T) {
	r := newCodexRefreshRig(t, func(_, fresh string) string { return fresh }, fakeprovider.Turn{Text: "after the refresh"})
	evs, res := r.run(t)
	if res.Status != "completed" || res.Output != "after the refresh" || res.Steps != 1 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if n := r.refreshes.Load(); n != 1 || !strings.Contains(r.bodies[0], `"refresh_token":"rt-1"`) {
		t.Errorf("token endpoint: %d refreshes, bodies %q", n, r.bodies)
	}
	reqs := r.fake.Requests()
	if len(reqs) != 2 || reqs[0].KeySHA256 != fakeprovider.KeyFingerprint(r.old) || reqs[1].KeySHA256 != fakeprovider.KeyFingerprint(r.fresh) ||
		reqs[1].Header.Get("Chatgpt-Account-Id") != "acct-7" || reqs[1].Path != "/backend-api/codex/responses" {
		t.Fatalf("provider requests %s", keys(reqs))
	}
	if got := find[protocol.ProviderRetry](evs); len(got) != 0 {
		t.Errorf("provider_retry events %+v", got)
	}
	if log := r.log.String(); !strings.Contains(log, `"level":"INFO"`) || !strings.Contains(log, "refused the Codex credential (HTTP 401); it was refreshed") {
		t.Errorf("log %s", log)
	}
	// The refreshed tokens are the host's copy now, for every later run.
	data, _ := os.ReadFile(filepath.Join(r.home, ".octet", "credentials", "codex.json"))
	if !strings.Contains(string(data), r.fresh) {
		t.Error("codex.json does not hold the refreshed token")
	}
}

// TestCodex401AfterRefreshEndsTheRun: a refreshed token that is refused
// too ends the run with auth_failed: one refresh, two calls, no loop.
func TestCodex401AfterRefreshEndsTheRun(t *testing.T) {
	r := newCodexRefreshRig(t, func(string, string) string { return "some-other-token" }, fakeprovider.Turn{Text: "never"})
	evs, res := r.run(t)
	if res.Status != "error" || res.Error == nil || res.Error.Code != "auth_failed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if n := r.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes", n)
	}
	reqs := r.fake.Requests()
	if len(reqs) != 2 || reqs[1].KeySHA256 != fakeprovider.KeyFingerprint(r.fresh) {
		t.Fatalf("provider requests %s", keys(reqs))
	}
	if got := find[protocol.ProviderRetry](evs); len(got) != 0 {
		t.Errorf("provider_retry events %+v", got)
	}
}

// TestCodexAPIKey401IsNotRetried: an API-key login has nothing to refresh:
// the token endpoint is not called, the call is not repeated, and the
// error says why.
func TestCodexAPIKey401IsNotRetried(t *testing.T) {
	r := newCodexRefreshRig(t, func(string, string) string { return "sk-the-right-key" }, fakeprovider.Turn{Text: "never"})
	os.WriteFile(filepath.Join(r.home, ".codex", "auth.json"), []byte(`{"auth_mode":"apikey","OPENAI_API_KEY":"sk-revoked-key"}`), 0o600)
	_, res := r.run(t)
	if res.Status != "error" || res.Error == nil || res.Error.Code != "auth_failed" || !strings.Contains(res.Error.Message, "cannot be refreshed") {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if strings.Contains(res.Error.Message, "sk-revoked-key") || strings.Contains(r.log.String(), "sk-revoked-key") {
		t.Error("the API key appears in the error or the log")
	}
	if n, reqs := r.refreshes.Load(), r.fake.Requests(); n != 0 || len(reqs) != 1 {
		t.Errorf("%d refreshes, %d provider requests", n, len(reqs))
	}
}
