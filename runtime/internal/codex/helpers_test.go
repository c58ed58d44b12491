package codex

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}

// makeJWT builds an unsigned-looking compact JWS with the given claims; the
// package never verifies signatures.
func makeJWT(claims map[string]any) string {
	enc := base64.RawURLEncoding
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	return enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString(payload) + "." + enc.EncodeToString([]byte("signature-not-checked"))
}

// accessJWT is an access token that expires at exp, for account acct (none
// when empty), marked with tag so tokens differ.
func accessJWT(exp time.Time, acct, tag string) string {
	c := map[string]any{"exp": exp.Unix(), "iat": exp.Add(-time.Hour).Unix(), "jti": tag}
	if acct != "" {
		c["https://api.openai.com/auth"] = map[string]any{"chatgpt_account_id": acct}
	}
	return makeJWT(c)
}

// writeSource writes ~/.codex/auth.json with content and returns its path.
func writeSource(t *testing.T, home, content string) string {
	t.Helper()
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// chatgptSource is a realistic auth.json of a ChatGPT login.
func chatgptSource(access, refresh, idToken, acct string) string {
	tokens := map[string]any{"id_token": idToken, "access_token": access, "refresh_token": refresh}
	if acct != "" {
		tokens["account_id"] = acct
	}
	b, err := json.MarshalIndent(map[string]any{
		"OPENAI_API_KEY": nil,
		"tokens":         tokens,
		"last_refresh":   "2026-01-01T00:00:00.123456Z",
	}, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fileState is everything about a file that must not change.
type fileState struct {
	sum   [32]byte
	mode  os.FileMode
	size  int64
	mtime time.Time
	ctime syscall.Timespec
	ino   uint64
	uid   uint32
}

func statFile(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fileState{
		sum: sha256.Sum256(data), mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime(),
		ctime: st.Ctim, ino: st.Ino, uid: st.Uid,
	}
}

func sha(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// ourFile returns the parsed codex.json of home.
func ourFile(t *testing.T, home string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(newPaths(home).file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("codex.json does not parse: %v", err)
	}
	return m
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// noSecrets fails when any secret occurs in s.
func noSecrets(t *testing.T, what, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			t.Errorf("%s contains a secret: %q", what, s)
		}
	}
}

// fixedClock returns a clock stopped at now.
func fixedClock(now time.Time) func() time.Time { return func() time.Time { return now } }

// fakeToken is a loopback OAuth token endpoint that rotates refresh tokens
// like the real one: a refresh token works once; a reused one is answered
// 400 refresh_token_reused.
type fakeToken struct {
	srv      *httptest.Server
	requests atomic.Int32

	mu      sync.Mutex
	current string // the one valid refresh token
	issued  int
	delay   time.Duration
	// fail, when non-zero, is the status of every answer, with failBody.
	fail     int
	failBody string
	// raw, when set, is the body of a 200 answer.
	raw string
	// lastBody and lastHeader are the latest request's.
	lastBody   map[string]any
	lastHeader http.Header
	// accessExp is the lifetime of issued access tokens (default 1h).
	accessExp time.Duration
}

func newFakeToken(t *testing.T, current string) *fakeToken {
	t.Helper()
	f := &fakeToken{current: current}
	mux := http.NewServeMux()
	mux.HandleFunc("/oauth/token", f.serve)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		http.Redirect(w, r, "/oauth/token", http.StatusTemporaryRedirect)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeToken) url() string { return f.srv.URL + "/oauth/token" }

// last returns the valid refresh token and the latest request's body and
// header, under the lock (the race detector does not see the socket as
// synchronization).
func (f *fakeToken) last() (current string, body map[string]any, header http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current, f.lastBody, f.lastHeader
}

// set changes the fake's behaviour under its lock.
func (f *fakeToken) set(fn func(f *fakeToken)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeToken) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		// Widen any race between refreshers; give up with the client.
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	f.lastBody, f.lastHeader = m, r.Header.Clone()
	w.Header().Set("Content-Type", "application/json")
	if f.fail != 0 {
		w.WriteHeader(f.fail)
		io.WriteString(w, f.failBody)
		return
	}
	if f.raw != "" {
		io.WriteString(w, f.raw)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
		m["grant_type"] != "refresh_token" || m["client_id"] != DefaultClientID {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_request"}`)
		return
	}
	if m["refresh_token"] != f.current {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Your refresh token has already been used","type":"invalid_request_error","code":"refresh_token_reused"}}`)
		return
	}
	f.issued++
	life := f.accessExp
	if life == 0 {
		life = time.Hour
	}
	tag := fmt.Sprintf("new-%d", f.issued)
	access := accessJWT(time.Now().Add(life), "acct-from-refresh", tag)
	f.current = "rt-" + tag + "-" + strings.Repeat("r", 20)
	json.NewEncoder(w).Encode(map[string]any{
		"access_token":  access,
		"refresh_token": f.current,
		"id_token":      makeJWT(map[string]any{"email": "user@example.com", "jti": tag}),
		"token_type":    "Bearer",
		"expires_in":    3600,
	})
}

// newStore returns a Store on home with its own transport, closed at the
// end of the test (goleak).
func newStore(t *testing.T, home, tokenURL string) *Store {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &Store{Home: home, HTTPClient: &http.Client{Transport: tr}, TokenURL: tokenURL}
}
