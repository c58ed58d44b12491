package copilot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/runtime/internal/copilot/copilottest"
)

func newProvider(w *copilottest.World, h Login, c *copilottest.Clock) *Provider {
	return NewGitHubProvider(h, w.Client, c.Now)
}

func TestExchangeShortRefreshIn(t *testing.T) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "token "+canaryGitHub || r.Header.Get("Editor-Version") != testIdentity.EditorVersion || r.Header.Get("X-GitHub-Api-Version") == "" {
			rw.WriteHeader(400)
			return
		}
		tokenHandler(&n, canarySession+fmt.Sprint(n.Load()), 62, "")(rw, r)
	})
	p := newProvider(w, newMemHost(), c)
	s1, err := p.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s1.API.String() != DefaultInferenceOrigin || !s1.RefreshAt.Equal(c.Now().Add(62*time.Second)) {
		t.Fatalf("session %v %v", s1.API, s1.RefreshAt)
	}
	c.Advance(1 * time.Second) // 61 s left: still outside the 60 s skew
	if s, _ := p.Session(context.Background()); !s.Token.Equal(s1.Token) || n.Load() != 1 {
		t.Fatalf("re-exchanged too early (%d)", n.Load())
	}
	c.Advance(1 * time.Second) // at the skew: refreshed before this request
	s2, err := p.Session(context.Background())
	if err != nil || s2.Token.Equal(s1.Token) || n.Load() != 2 {
		t.Fatalf("not refreshed: %v, %d exchanges", err, n.Load())
	}
	assertNoCanary(t, "formatted session", fmt.Sprintf("%v %+v %#v %s", s2, s2, s2, s2.Token))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "session", s2.Token, "login", s2.login.Token)
	b, _ := json.Marshal(s2)
	assertNoCanary(t, "logged and marshalled session", buf.String(), string(b))
}

func TestExchangePastExpiresAtValidRefreshIn(t *testing.T) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", func(rw http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprintf(rw, `{"token":%q,"expires_at":1000,"refresh_in":1500,"sku":"x","unknown":{"a":1}}`, canarySession)
	})
	p := newProvider(w, newMemHost(), c)
	for range 3 {
		if _, err := p.Session(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 1 {
		t.Fatalf("%d exchanges: the server's clock must not decide", n.Load())
	}
}

func TestExchangeErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		header map[string]string
		reason string
		check  func(*ExchangeError) bool
	}{
		{"401", 401, `{"message":"Bad credentials ` + canaryGitHub + `"}`, nil, ReasonCredentialInvalid, nil},
		{"403 notification", 403, `{"message":"no access","error_details":{"notification_id":"no_copilot_access","message":"You have no access","url":"https://github.com/x"}}`, nil, ReasonNotEntitled,
			func(e *ExchangeError) bool { return e.NotificationID == "no_copilot_access" }},
		{"rate limit", 403, `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs"}`, map[string]string{"Retry-After": "30"}, ReasonRateLimited,
			func(e *ExchangeError) bool { return e.RetryAfter == 30*time.Second }},
		{"429", 429, `{}`, map[string]string{"Retry-After": "7"}, ReasonRateLimited, func(e *ExchangeError) bool { return e.RetryAfter == 7*time.Second }},
		{"malformed", 200, `{"token":`, nil, ReasonProtocolError, nil},
		{"no refresh_in", 200, `{"token":"t0000","expires_at":1999999999}`, nil, ReasonProtocolError, nil},
		{"no token", 200, `{"expires_at":1999999999,"refresh_in":100}`, nil, ReasonProtocolError, nil},
		{"500", 500, `oops ` + canaryGitHub, nil, ReasonHTTPStatus, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, c := copilottest.NewWorld(t), copilottest.NewClock()
			w.Handle("api.github.com", "/copilot_internal/v2/token", func(rw http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					rw.Header().Set(k, v)
				}
				rw.WriteHeader(tc.status)
				io.WriteString(rw, tc.body)
			})
			p := newProvider(w, newMemHost(), c)
			_, err := p.Session(context.Background())
			var xe *ExchangeError
			if !errors.As(err, &xe) || xe.Reason != tc.reason || (tc.check != nil && !tc.check(xe)) {
				t.Fatalf("got %#v (%v)", xe, err)
			}
			assertNoCanary(t, "error", err.Error())
			for _, frag := range []string{"Bad credentials", "You have no access", "oops", "rate limit exceeded for user"} {
				if strings.Contains(err.Error(), frag) {
					t.Errorf("the error echoes GitHub's body: %s", err)
				}
			}
			if p.sess != nil {
				t.Fatal("a failed exchange left a session")
			}
		})
	}
}

func TestOffListOriginGetsNothing(t *testing.T) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", tokenHandler(&n, canarySession, 1500, `,"endpoints":{"api":"https://evil.example"}`))
	w.Handle("evil.example", "/models", func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, `{"data":[]}`) })
	p := newProvider(w, newMemHost(), c)
	_, err := p.RegisterModels(context.Background(), nil)
	if !errors.Is(err, ErrOriginNotAllowed) {
		t.Fatalf("got %v", err)
	}
	// Inference too: the synthetic refusal, no request.
	resp, err := p.Client().Post("https://api.githubcopilot.com/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || w.Hits("evil.example") != 0 || w.Hits("api.githubcopilot.com") != 0 {
		t.Fatalf("status %d, evil hits %d", resp.StatusCode, w.Hits("evil.example"))
	}
	for _, e := range []string{"https://evil.example", "http://api.githubcopilot.com", "https://api.githubcopilot.com/v1", "https://u@api.githubcopilot.com", "https://api.githubcopilot.com?x=1", "https://x.githubcopilot.com"} {
		if _, err := inferenceEndpoint(e); err == nil {
			t.Errorf("%s accepted", e)
		}
	}
	for _, e := range InferenceOrigins {
		if _, err := inferenceEndpoint(e + "/"); err != nil {
			t.Errorf("%s refused: %v", e, err)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://api.githubcopilot.com": true, "https://api.githubcopilot.com/": true, "http://127.0.0.1:8080": true, "http://[::1]:1": true,
		"http://localhost:80": false, "http://api.githubcopilot.com": false, "https://a.b/path": false, "https://a.b?q": false,
		"https://u:p@a.b": false, "https://a.b#f": false, "ftp://a.b": false, "api.githubcopilot.com": false,
	} {
		if _, err := ParseEndpoint(raw); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestConcurrentCallersShareOneExchange(t *testing.T) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var n atomic.Int64
	release := make(chan struct{})
	w.Handle("api.github.com", "/copilot_internal/v2/token", func(rw http.ResponseWriter, r *http.Request) {
		<-release
		tokenHandler(&n, canarySession, 1500, "")(rw, r)
	})
	p := newProvider(w, newMemHost(), c)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Session(context.Background())
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 1 {
		t.Fatalf("%d exchanges for 50 callers", n.Load())
	}
}

func TestReplacedOrDeletedLoginRejected(t *testing.T) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", tokenHandler(&n, canarySession, 1500, ""))
	h := newMemHost()
	p := newProvider(w, h, c)
	if _, err := p.Session(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.SaveCredential(context.Background(), Credential{Token: NewSecret("gho_other0000"), ID: "login2"})
	s, err := p.Session(context.Background())
	if err != nil || n.Load() != 2 || s.login.ID != "login2" {
		t.Fatalf("the cached session of a replaced login was used: %v, %d", err, n.Load())
	}
	h.mu.Lock()
	h.cred = nil
	h.mu.Unlock()
	if _, err := p.Session(context.Background()); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("a deleted login still served: %v", err)
	}
}

func TestCanceledExchangeDiscardsSession(t *testing.T) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", tokenHandler(&n, canarySession, 100, ""))
	p := newProvider(w, newMemHost(), c)
	if _, err := p.Session(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Advance(50 * time.Second) // due
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Session(ctx); err == nil {
		t.Fatal("a canceled refresh succeeded")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess != nil {
		t.Fatal("the old session survived a canceled refresh")
	}
}
