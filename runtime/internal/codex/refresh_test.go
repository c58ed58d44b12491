package codex

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// expiredSetup writes a source whose access token expired an hour ago and
// returns the fake endpoint that accepts its refresh token.
func expiredSetup(t *testing.T, home string) (fake *fakeToken, oldAccess, oldRefresh string) {
	t.Helper()
	oldAccess = accessJWT(time.Now().Add(-time.Hour), "acct-1", "old")
	oldRefresh = "rt-old-0123456789abcdefghij"
	writeSource(t, home, chatgptSource(oldAccess, oldRefresh, makeJWT(map[string]any{"jti": "old-id"}), "acct-1"))
	return newFakeToken(t, oldRefresh), oldAccess, oldRefresh
}

func TestRefreshExpired(t *testing.T) {
	home := t.TempDir()
	fake, oldAccess, oldRefresh := expiredSetup(t, home)
	src := newPaths(home).source
	before := statFile(t, src)
	s := newStore(t, home, fake.url())

	cred, err := s.Credential(context.Background())
	if err != nil {
		t.Fatalf("Credential: %v", err)
	}
	if n := fake.requests.Load(); n != 1 {
		t.Fatalf("%d refresh requests, want 1", n)
	}
	current, body, header := fake.last()
	if body["grant_type"] != "refresh_token" || body["refresh_token"] != oldRefresh ||
		body["client_id"] != DefaultClientID || len(body) != 3 {
		t.Errorf("request body = %v", redactMap(body))
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cred.AccessToken == oldAccess || !strings.Contains(cred.AccessToken, ".") {
		t.Error("the old access token came back")
	}
	if cred.AccountID != "acct-1" {
		t.Errorf("AccountID = %q, want the imported acct-1 kept", cred.AccountID)
	}
	if until := time.Until(cred.ExpiresAt); until < 50*time.Minute || until > 61*time.Minute {
		t.Errorf("ExpiresAt in %v, want about 1h (from the new JWT)", until)
	}

	got := ourFile(t, home)
	if got["access_token"] != cred.AccessToken || got["refresh_token"] != current {
		t.Error("codex.json does not hold the new tokens")
	}
	if got["refresh_token"] == oldRefresh || got["id_token"] == "" {
		t.Error("refresh or id token not rotated")
	}
	if got["source"] != "codex-cli-import" || got["imported_at"] == nil || got["refreshed_at"] == nil {
		t.Errorf("codex.json = %v", redactMap(got))
	}
	if m := mode(t, newPaths(home).file); m != 0o600 {
		t.Errorf("mode after refresh = %v", m)
	}
	if exists(newPaths(home).tmp) {
		t.Error("codex.json.tmp left behind")
	}

	// Fresh now: no second request.
	again, err := s.Credential(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again != cred || fake.requests.Load() != 1 {
		t.Errorf("second call: same=%v requests=%d", again == cred, fake.requests.Load())
	}
	if statFile(t, src) != before {
		t.Error("source changed by the refresh")
	}
}

func TestRefreshWindow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		left    time.Duration
		refresh bool
	}{
		{"fresh", time.Hour, false},
		{"just outside the skew", RefreshSkew + time.Minute, false},
		{"inside the skew", RefreshSkew - time.Minute, true},
		{"at expiry", 0, true},
		{"expired", -time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			access := accessJWT(t0.Add(tc.left), "", "a")
			writeSource(t, home, chatgptSource(access, "rt-0123456789", "id", ""))
			fake := newFakeToken(t, "rt-0123456789")
			s := newStore(t, home, fake.url())
			s.Now = fixedClock(t0)
			cred, err := s.Credential(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n := fake.requests.Load(); (n == 1) != tc.refresh || n > 1 {
				t.Errorf("%d refresh requests, want refresh=%v", n, tc.refresh)
			}
			if (cred.AccessToken != access) != tc.refresh {
				t.Errorf("token replaced = %v, want %v", cred.AccessToken != access, tc.refresh)
			}
		})
	}
}

// TestStoredExpiry covers access tokens that are not JWTs: expires_at of
// codex.json decides, and with none there is no proactive refresh.
func TestStoredExpiry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		expiresAt string
		refresh   bool
	}{
		{"past", `,"expires_at":"2026-03-04T05:00:00Z"`, true},
		{"future", `,"expires_at":"2026-03-05T05:00:00Z"`, false},
		{"unknown", ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			p := newPaths(home)
			os.MkdirAll(p.dir, 0o700)
			content := `{"schema_version":1,"source":"codex-cli-import","imported_at":"2026-03-01T00:00:00Z",` +
				`"access_token":"opaque-access-0123456789","refresh_token":"rt-0123456789"` + tc.expiresAt + `}`
			if err := os.WriteFile(p.file, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			fake := newFakeToken(t, "rt-0123456789")
			s := newStore(t, home, fake.url())
			s.Now = fixedClock(t0)
			cred, err := s.Credential(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n := fake.requests.Load(); (n == 1) != tc.refresh {
				t.Errorf("%d requests, want refresh=%v", n, tc.refresh)
			}
			if !tc.refresh && cred.AccessToken != "opaque-access-0123456789" {
				t.Error("token changed without a refresh")
			}
			if tc.refresh && cred.AccountID != "acct-from-refresh" {
				t.Errorf("AccountID = %q, want it taken from the new token's claim", cred.AccountID)
			}
		})
	}
}

func TestRefreshFailureLeavesFileUntouched(t *testing.T) {
	const echo = `{"error":{"code":"refresh_token_reused","message":"token rt-old-0123456789abcdefghij was used"}}`
	for _, tc := range []struct {
		name      string
		set       func(f *fakeToken)
		url       func(f *fakeToken) string
		status    int
		code      string
		permanent bool
		msg       string
	}{
		{name: "400 reused", set: func(f *fakeToken) { f.fail, f.failBody = 400, echo }, status: 400, code: "refresh_token_reused", permanent: true, msg: "HTTP 400 (refresh_token_reused)"},
		{name: "400 invalid_grant", set: func(f *fakeToken) {
			f.fail, f.failBody = 400, `{"error":"invalid_grant","error_description":"rt-old-0123456789abcdefghij"}`
		}, status: 400, code: "invalid_grant", permanent: true},
		{name: "401", set: func(f *fakeToken) { f.fail, f.failBody = 401, `rt-old-0123456789abcdefghij` }, status: 401, permanent: true, msg: "HTTP 401"},
		{name: "500 echoing the token", set: func(f *fakeToken) { f.fail, f.failBody = 500, `{"error":"rt-old-0123456789abcdefghij"}` }, status: 500, msg: "HTTP 500"},
		{name: "503 html", set: func(f *fakeToken) { f.fail, f.failBody = 503, `<html>busy</html>` }, status: 503},
		{name: "200 not JSON", set: func(f *fakeToken) { f.raw = `rt-old-0123456789abcdefghij` }, status: 200, msg: "not a JSON object"},
		{name: "200 without access_token", set: func(f *fakeToken) { f.raw = `{"refresh_token":"rt-new-0123456789"}` }, status: 200, msg: "no access_token"},
		{name: "200 bad access_token", set: func(f *fakeToken) { f.raw = `{"access_token":"at new 0123456789"}` }, status: 200, msg: "not allowed"},
		{name: "redirect", url: func(f *fakeToken) string { return f.srv.URL + "/redirect" }, status: 307, msg: "HTTP 307"},
		{name: "connection refused", url: func(*fakeToken) string { return "http://127.0.0.1:1/oauth/token" }, msg: "no answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			fake, oldAccess, oldRefresh := expiredSetup(t, home)
			s := newStore(t, home, fake.url())
			if tc.set != nil {
				fake.set(tc.set)
			}
			if tc.url != nil {
				s.TokenURL = tc.url(fake)
			}
			// Import first (the refresh fails, so import it through a
			// failing call and then compare around a second one).
			_, err := s.Credential(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			file := newPaths(home).file
			before := statFile(t, file)
			_, err = s.Credential(context.Background())
			var re *RefreshError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RefreshError", err)
			}
			if re.StatusCode != tc.status || re.Code != tc.code || re.Permanent() != tc.permanent {
				t.Errorf("status=%d code=%q permanent=%v, want %d %q %v", re.StatusCode, re.Code, re.Permanent(), tc.status, tc.code, tc.permanent)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			noSecrets(t, "error", err.Error(), oldAccess, oldRefresh, "rt-new-0123456789", "at new 0123456789")
			if statFile(t, file) != before {
				t.Error("codex.json changed after a failed refresh")
			}
			got := ourFile(t, home)
			if got["refresh_token"] != oldRefresh || got["access_token"] != oldAccess {
				t.Error("codex.json lost the old tokens")
			}
		})
	}
}

func TestRefreshCanceled(t *testing.T) {
	home := t.TempDir()
	fake, oldAccess, oldRefresh := expiredSetup(t, home)
	fake.set(func(f *fakeToken) { f.delay = 2 * time.Second })
	s := newStore(t, home, fake.url())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Credential(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	noSecrets(t, "error", err.Error(), oldAccess, oldRefresh)
}

func TestCustomClientID(t *testing.T) {
	home := t.TempDir()
	fake, _, _ := expiredSetup(t, home)
	s := newStore(t, home, fake.url())
	s.ClientID = "app_custom"
	_, err := s.Credential(context.Background())
	var re *RefreshError
	if !errors.As(err, &re) || re.StatusCode != 400 { // the fake only knows the default id
		t.Fatalf("err = %v", err)
	}
	if _, body, _ := fake.last(); body["client_id"] != "app_custom" {
		t.Errorf("client_id = %v", body["client_id"])
	}
}

// TestForcedRefresh covers Store.Refresh, the 401 path: it refreshes a
// token that is still fresh, but only once for one rejected token.
func TestForcedRefresh(t *testing.T) {
	home := t.TempDir()
	access := accessJWT(time.Now().Add(time.Hour), "", "a")
	writeSource(t, home, chatgptSource(access, "rt-0123456789", "id", "acct"))
	fake := newFakeToken(t, "rt-0123456789")
	s := newStore(t, home, fake.url())
	old, err := s.Credential(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n1, err := s.Refresh(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	if n1.AccessToken == old.AccessToken || fake.requests.Load() != 1 {
		t.Fatalf("not refreshed (requests %d)", fake.requests.Load())
	}
	// Another caller still holding the old token: already replaced.
	n2, err := s.Refresh(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	if n2 != n1 || fake.requests.Load() != 1 {
		t.Errorf("second Refresh with the stale token refreshed again (requests %d)", fake.requests.Load())
	}
	// An API key is returned as it is.
	home2 := t.TempDir()
	writeSource(t, home2, `{"OPENAI_API_KEY": "sk-0123456789"}`)
	k, err := newStore(t, home2, fake.url()).Refresh(context.Background(), Credential{APIKey: "sk-0123456789"})
	if err != nil || k.APIKey != "sk-0123456789" || fake.requests.Load() != 1 {
		t.Errorf("API key Refresh: %v %v", k, err)
	}
}

func TestLockWaitHonoursContext(t *testing.T) {
	home := t.TempDir()
	writeSource(t, home, `{"OPENAI_API_KEY": "sk-0123456789"}`)
	p := newPaths(home)
	if err := ensureDir(p.dir); err != nil {
		t.Fatal(err)
	}
	held, err := os.OpenFile(p.lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, home, "")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Credential(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if exists(p.file) {
		t.Error("imported without the lock")
	}

	// Released while waiting: the waiter proceeds.
	done := make(chan error, 1)
	go func() {
		_, err := s.Credential(context.Background())
		done <- err
	}()
	time.Sleep(30 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("returned while the lock was held: %v", err)
	default:
	}
	unix.Flock(int(held.Fd()), unix.LOCK_UN)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not proceed after the lock was released")
	}
	if _, err := s.Credential(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCanceledBeforeStart(t *testing.T) {
	home := t.TempDir()
	writeSource(t, home, `{"OPENAI_API_KEY": "sk-0123456789"}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newStore(t, home, "").Credential(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
