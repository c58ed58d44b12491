package engine

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// jwt builds an unsigned token with the claims a ChatGPT login carries.
func jwt(exp time.Time, account string) string {
	enc := base64.RawURLEncoding.EncodeToString
	payload := `{"exp":` + itoa(exp.Unix()) + `,"https://api.openai.com/auth":{"chatgpt_account_id":"` + account + `"}}`
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(payload)) + ".sig"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func writeCodexLogin(t *testing.T, home, access string) (path string, sum [32]byte) {
	t.Helper()
	dir := filepath.Join(home, ".codex")
	os.MkdirAll(dir, 0o700)
	path = filepath.Join(dir, "auth.json")
	data := `{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"id_token":"` + jwt(time.Now().Add(time.Hour), "acct-7") + `","access_token":"` + access + `","refresh_token":"rt-1","account_id":"acct-7"},"last_refresh":"2026-11-01T00:00:00Z"}`
	if err := os.WriteFile(path, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
	return path, sha256.Sum256([]byte(data))
}

// TestCodexRouteThroughResponses imports a Codex login on first use and
// runs codex/<model> on the Responses wire against the fake's Codex
// backend: the access token is the bearer, the account header is sent, no
// max_output_tokens is (the backend rejects it with a 400), our copy is
// 0600 and the source is untouched.
func TestCodexRouteThroughResponses(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "from codex"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	home, ws := t.TempDir(), t.TempDir()
	access := jwt(time.Now().Add(time.Hour), "acct-7")
	src, sum := writeCodexLogin(t, home, access)
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" }, CodexBaseURL: fake.CodexBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: ws, Model: "codex/gpt-5.3-codex", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for range rc.Events() {
	}
	if res := rc.Wait(); res.Status != "completed" || res.Output != "from codex" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Mode != fakeprovider.ModeResponses || reqs[0].KeySHA256 != fakeprovider.KeyFingerprint(access) ||
		reqs[0].Header.Get("Chatgpt-Account-Id") != "acct-7" || reqs[0].Model() != "gpt-5.3-codex" {
		t.Fatalf("request %+v", reqs)
	}
	if _, ok := reqs[0].Body["max_output_tokens"]; ok || reqs[0].Path != "/backend-api/codex/responses" {
		t.Errorf("the Codex backend got %s with max_output_tokens %v", reqs[0].Path, reqs[0].Body["max_output_tokens"])
	}
	st, err := os.Stat(filepath.Join(home, ".octet", "credentials", "codex.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("our copy: %v %v", st, err)
	}
	data, _ := os.ReadFile(src)
	if sha256.Sum256(data) != sum {
		t.Error("the Codex CLI's auth.json was modified")
	}
	if fi, _ := os.Stat(src); fi.Mode().Perm() != 0o640 {
		t.Error("the source's mode changed")
	}
	// The models command lists the Codex routes once a login exists.
	ms, _, _ := a.Models(context.Background(), true)
	found := false
	for _, m := range ms {
		found = found || (m.Provider == "codex" && strings.HasPrefix(m.ID, "codex/") && m.ProviderMode == "openai-responses")
	}
	if !found {
		t.Error("no codex/ model listed")
	}
}

// TestOutputCapOffTheCodexBackend: an API-key Codex login goes to the
// platform API, which takes max_output_tokens, and so does an ordinary
// Responses route; only the ChatGPT Codex backend goes without it.
func TestOutputCapOffTheCodexBackend(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "one"}, {Text: "two"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".codex", "auth.json"), []byte(`{"auth_mode":"apikey","OPENAI_API_KEY":"sk-codex-key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" }, CodexBaseURL: fake.BaseURL(fakeprovider.ModeResponses)})
	if err != nil {
		t.Fatal(err)
	}
	run := func(req RunRequest) {
		t.Helper()
		rc, err := a.Run(context.Background(), req)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		for range rc.Events() {
		}
		if res := rc.Wait(); res.Status != "completed" {
			t.Fatalf("result %+v %+v", res, res.Error)
		}
	}
	run(RunRequest{RunID: "r1", Workspace: t.TempDir(), Model: "codex/gpt-5.3-codex", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	run(RunRequest{RunID: "r2", Workspace: t.TempDir(), Model: "gpt-5", Prompt: "hi", SessionDir: filepath.Join(home, "s"),
		Route: &InlineRoute{Provider: "local", BaseURL: fake.BaseURL(fakeprovider.ModeResponses), Mode: "openai-responses", MaxOutputTokens: new(4096)}})
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].KeySHA256 != fakeprovider.KeyFingerprint("sk-codex-key") {
		t.Fatalf("requests %+v", reqs)
	}
	for i, r := range reqs {
		if v, ok := r.Body["max_output_tokens"].(float64); !ok || v <= 0 {
			t.Errorf("request %d (%s): max_output_tokens %v", i, r.Path, r.Body["max_output_tokens"])
		}
	}
	if v := reqs[1].Body["max_output_tokens"]; v != float64(4096) {
		t.Errorf("the inline route's cap: %v", v)
	}
}

// TestCodexRefreshesExpiredToken refreshes an expired access token at a
// loopback fake of the token endpoint before the run.
func TestCodexRefreshesExpiredToken(t *testing.T) {
	var refreshes atomic.Int32
	fresh := jwt(time.Now().Add(time.Hour), "acct-7")
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refreshes.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"` + fresh + `","refresh_token":"rt-2","id_token":"` + fresh + `"}`))
	}))
	defer tokens.Close()
	home := t.TempDir()
	writeCodexLogin(t, home, jwt(time.Now().Add(-time.Hour), "acct-7"))
	var got Route
	a, _ := New(Options{Home: home, Getenv: func(string) string { return "" }, CodexTokenURL: tokens.URL,
		ProviderFactory: func(r Route) (Provider, error) { got = r; return &scripted{turns: [][]StreamEvent{text("ok")}}, nil }})
	rc, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "codex/gpt-5.3-codex", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	rc.Wait()
	if refreshes.Load() != 1 || got.APIKey != fresh || got.Mode != "openai-responses" || got.Provider != "codex" {
		t.Fatalf("refreshes %d, route %+v", refreshes.Load(), got)
	}
}

func TestCodexWithoutLogin(t *testing.T) {
	f := newFixture(t)
	req := f.req("q")
	req.Route, req.Model = nil, "codex/gpt-5.3-codex"
	if _, err := f.agent.Run(context.Background(), req); !isCode(err, protocol.CodeCredentialsMissing) {
		t.Fatalf("Run without a Codex login: %v", err)
	}
}
