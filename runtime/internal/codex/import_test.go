package codex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/credfile"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func TestImportChatGPTLogin(t *testing.T) {
	home := t.TempDir()
	exp := t0.Add(10 * 24 * time.Hour)
	access := accessJWT(exp, "acct-in-jwt", "a1")
	idToken := makeJWT(map[string]any{"email": "u@example.com", "https://api.openai.com/auth": map[string]any{"chatgpt_account_id": "acct-in-id"}})
	refresh := "rt_abcdefghijklmnopqrstuvwxyz0123456789"
	src := writeSource(t, home, chatgptSource(access, refresh, idToken, "acct-1"))
	before := statFile(t, src)
	fake := newFakeToken(t, refresh)

	s := newStore(t, home, fake.url())
	s.Now = fixedClock(t0)
	cred, err := s.Credential(context.Background())
	if err != nil {
		t.Fatalf("Credential: %v", err)
	}
	want := Credential{AccessToken: access, AccountID: "acct-1", ExpiresAt: exp}
	if cred != want {
		t.Errorf("credential = %#v (access match %v), want %#v", cred, cred.AccessToken == access, want)
	}
	if n := fake.requests.Load(); n != 0 {
		t.Errorf("%d refresh requests for a fresh token", n)
	}

	// The source is byte-for-byte, mode, owner, inode, mtime and ctime (so
	// no chmod) unchanged.
	if after := statFile(t, src); after != before {
		t.Errorf("source changed:\nbefore %+v\nafter  %+v", before, after)
	}

	p := newPaths(home)
	if m := mode(t, p.file); m != 0o600 {
		t.Errorf("codex.json mode = %v, want 0600", m)
	}
	if m := mode(t, p.dir); m != os.ModeDir|0o700 {
		t.Errorf("credentials dir mode = %v, want drwx------", m)
	}
	if m := mode(t, p.lock); m != 0o600 {
		t.Errorf("lock mode = %v, want 0600", m)
	}
	if exists(p.tmp) {
		t.Error("codex.json.tmp left behind")
	}
	got := ourFile(t, home)
	wantFile := map[string]any{
		"schema_version": float64(1),
		"source":         "codex-cli-import",
		"imported_at":    "2026-03-04T05:06:07Z",
		"access_token":   access,
		"refresh_token":  refresh,
		"id_token":       idToken,
		"account_id":     "acct-1",
		"expires_at":     exp.Format(time.RFC3339),
	}
	if len(got) != len(wantFile) {
		t.Errorf("codex.json members = %d, want %d", len(got), len(wantFile))
	}
	for k, v := range wantFile {
		if got[k] != v {
			t.Errorf("codex.json %s = %v, want %v", k, got[k], v)
		}
	}
}

func TestImportAccountIDFromClaims(t *testing.T) {
	for _, tc := range []struct {
		name, idToken, acctInAccess, want string
	}{
		{"id token claim", makeJWT(map[string]any{"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": "acct-id"}}), "acct-access", "acct-id"},
		{"access token claim", makeJWT(map[string]any{"email": "x@example.com"}), "acct-access", "acct-access"},
		{"none", "not-a-jwt", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeSource(t, home, chatgptSource(accessJWT(t0.Add(time.Hour), tc.acctInAccess, "a"), "rt-0123456789", tc.idToken, ""))
			s := newStore(t, home, "http://127.0.0.1:1/unused")
			s.Now = fixedClock(t0)
			cred, err := s.Credential(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cred.AccountID != tc.want {
				t.Errorf("AccountID = %q, want %q", cred.AccountID, tc.want)
			}
		})
	}
}

func TestImportAPIKey(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"key only", `{"OPENAI_API_KEY": "sk-test-0123456789abcdef"}`},
		{"key with null tokens", `{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "tokens": null, "last_refresh": null}`},
		{"auth_mode apikey", `{"auth_mode": "apikey", "OPENAI_API_KEY": "sk-test-0123456789abcdef"}`},
		// Without auth_mode a key wins over tokens, as in the Codex CLI.
		{"key and tokens", `{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "tokens": {"id_token": "x", "access_token": "at-x", "refresh_token": "rt-x"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			src := writeSource(t, home, tc.content)
			before := statFile(t, src)
			s := newStore(t, home, "http://127.0.0.1:1/unused")
			s.Now = fixedClock(t0)
			cred, err := s.Credential(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := (Credential{APIKey: "sk-test-0123456789abcdef"}); cred != want {
				t.Errorf("credential = %v (key match %v)", cred, cred.APIKey == want.APIKey)
			}
			if cred.Bearer() != "sk-test-0123456789abcdef" {
				t.Error("Bearer is not the key")
			}
			got := ourFile(t, home)
			if got["api_key"] != "sk-test-0123456789abcdef" || got["source"] != "codex-cli-import" || got["schema_version"] != float64(1) {
				t.Errorf("codex.json = %v", redactMap(got))
			}
			for _, k := range []string{"access_token", "refresh_token", "id_token", "account_id", "expires_at"} {
				if _, ok := got[k]; ok {
					t.Errorf("codex.json has %s for an API key", k)
				}
			}
			if after := statFile(t, src); after != before {
				t.Error("source changed")
			}
		})
	}
}

func TestImportChatGPTModeIgnoresKey(t *testing.T) {
	home := t.TempDir()
	access := accessJWT(t0.Add(time.Hour), "", "a")
	writeSource(t, home, `{"auth_mode": "chatgpt", "OPENAI_API_KEY": "sk-exchanged-0123456789",
		"tokens": {"id_token": "x", "access_token": "`+access+`", "refresh_token": "rt-0123456789"}}`)
	s := newStore(t, home, "http://127.0.0.1:1/unused")
	s.Now = fixedClock(t0)
	cred, err := s.Credential(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cred.APIKey != "" || cred.AccessToken != access {
		t.Errorf("credential = %v, want the access token", cred)
	}
}

func redactMap(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "api_key", "access_token", "refresh_token", "id_token":
			v = "[redacted]"
		}
		out[k] = v
	}
	return out
}

func TestImportRejects(t *testing.T) {
	const secret = "sk-secret-0123456789abcdef"
	const rt = "rt-secret-0123456789abcdef"
	const at = "at-secret-0123456789abcdef"
	cases := []struct {
		name   string
		setup  func(t *testing.T, home string) // makes the source
		reason string                          // in the error
	}{
		{"no .codex directory", func(*testing.T, string) {}, "does not exist"},
		{"no auth.json", func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
		}, "does not exist"},
		{"empty file", func(t *testing.T, home string) { writeSource(t, home, "") }, "not valid JSON"},
		{"not JSON", func(t *testing.T, home string) { writeSource(t, home, `{"OPENAI_API_KEY": "`+secret+`",`) }, "not valid JSON"},
		{"array", func(t *testing.T, home string) { writeSource(t, home, `["`+secret+`"]`) }, "not a JSON object"},
		{"string", func(t *testing.T, home string) { writeSource(t, home, `"`+secret+`"`) }, "not a JSON object"},
		{"empty object", func(t *testing.T, home string) { writeSource(t, home, `{}`) }, "neither an OPENAI_API_KEY nor tokens"},
		{"nulls", func(t *testing.T, home string) {
			writeSource(t, home, `{"OPENAI_API_KEY": null, "tokens": null, "last_refresh": null}`)
		}, "neither"},
		{"empty key", func(t *testing.T, home string) { writeSource(t, home, `{"OPENAI_API_KEY": ""}`) }, "neither"},
		{"key of wrong type", func(t *testing.T, home string) { writeSource(t, home, `{"OPENAI_API_KEY": 12345}`) }, "unexpected types"},
		{"tokens of wrong type", func(t *testing.T, home string) { writeSource(t, home, `{"tokens": "`+at+`"}`) }, "unexpected types"},
		{"duplicate member", func(t *testing.T, home string) {
			writeSource(t, home, `{"OPENAI_API_KEY": "`+secret+`", "OPENAI_API_KEY": "`+secret+`x"}`)
		}, "not valid JSON"},
		{"invalid UTF-8", func(t *testing.T, home string) {
			writeSource(t, home, "{\"OPENAI_API_KEY\": \""+secret+"\xff\"}")
		}, "not valid JSON"},
		{"key with newline", func(t *testing.T, home string) {
			writeSource(t, home, `{"OPENAI_API_KEY": "`+secret+`\n"}`)
		}, "not allowed in an HTTP header"},
		{"no refresh token", func(t *testing.T, home string) {
			writeSource(t, home, `{"tokens": {"id_token": "x", "access_token": "`+at+`"}}`)
		}, "no tokens.refresh_token"},
		{"empty refresh token", func(t *testing.T, home string) {
			writeSource(t, home, `{"tokens": {"access_token": "`+at+`", "refresh_token": ""}}`)
		}, "no tokens.refresh_token"},
		{"no access token", func(t *testing.T, home string) {
			writeSource(t, home, `{"tokens": {"refresh_token": "`+rt+`"}}`)
		}, "no tokens.access_token"},
		{"access token with space", func(t *testing.T, home string) {
			writeSource(t, home, `{"tokens": {"access_token": "`+at+` x", "refresh_token": "`+rt+`"}}`)
		}, "not allowed in an HTTP header"},
		{"apikey mode without key", func(t *testing.T, home string) {
			writeSource(t, home, `{"auth_mode": "apikey", "tokens": {"access_token": "`+at+`", "refresh_token": "`+rt+`"}}`)
		}, `auth_mode "apikey" but no OPENAI_API_KEY`},
		{"chatgpt mode without tokens", func(t *testing.T, home string) {
			writeSource(t, home, `{"auth_mode": "chatgpt", "OPENAI_API_KEY": "`+secret+`"}`)
		}, "neither"},
		{"unsupported mode", func(t *testing.T, home string) {
			writeSource(t, home, `{"auth_mode": "agentIdentity", "agent_identity": "`+at+`"}`)
		}, `auth_mode "agentIdentity"`},
		{"mode that is not a name", func(t *testing.T, home string) {
			writeSource(t, home, `{"auth_mode": "`+secret+` !"}`)
		}, "unrecognized value"},
		{"symlink to a valid file", func(t *testing.T, home string) {
			real := filepath.Join(home, "elsewhere.json")
			os.WriteFile(real, []byte(`{"OPENAI_API_KEY": "`+secret+`"}`), 0o600)
			os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
			if err := os.Symlink(real, filepath.Join(home, ".codex", "auth.json")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"dangling symlink", func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
			os.Symlink(filepath.Join(home, "nowhere"), filepath.Join(home, ".codex", "auth.json"))
		}, "symbolic link"},
		{"directory", func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, ".codex", "auth.json"), 0o700)
		}, "not a regular file"},
		{"FIFO", func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
			if err := syscall.Mkfifo(filepath.Join(home, ".codex", "auth.json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"too large", func(t *testing.T, home string) {
			writeSource(t, home, `{"OPENAI_API_KEY": "`+secret+`", "pad": "`+strings.Repeat("x", credfile.MaxFileBytes)+`"}`)
		}, "larger than 64 KiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			tc.setup(t, home)
			src := newPaths(home).source
			var before fileState
			regular := false
			if fi, err := os.Lstat(src); err == nil && fi.Mode().IsRegular() {
				regular, before = true, statFile(t, src)
			}
			s := newStore(t, home, "http://127.0.0.1:1/unused")
			_, err := s.Credential(context.Background())
			if !errors.Is(err, ErrNoCredential) {
				t.Fatalf("err = %v, want ErrNoCredential", err)
			}
			var nc *NoCredentialError
			if !errors.As(err, &nc) || !strings.Contains(nc.Reason, tc.reason) {
				t.Errorf("reason = %q, want it to mention %q", err, tc.reason)
			}
			noSecrets(t, "error", err.Error(), secret, rt, at)
			if exists(newPaths(home).file) {
				t.Error("codex.json was written")
			}
			if regular && statFile(t, src) != before {
				t.Error("source changed")
			}
		})
	}
}

func TestExistingCopyIsUsedWithoutSource(t *testing.T) {
	home := t.TempDir()
	access := accessJWT(t0.Add(time.Hour), "acct-1", "a")
	src := writeSource(t, home, chatgptSource(access, "rt-0123456789", "id", "acct-1"))
	s := newStore(t, home, "http://127.0.0.1:1/unused")
	s.Now = fixedClock(t0)
	first, err := s.Credential(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	file := newPaths(home).file
	stored := statFile(t, file)

	// Garbage, unreadable (for non-root), then gone, then a different valid
	// login: the copy wins every time and is not rewritten.
	check := func(what string) {
		t.Helper()
		got, err := s.Credential(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got != first {
			t.Errorf("%s: credential changed", what)
		}
		if statFile(t, file) != stored {
			t.Errorf("%s: codex.json rewritten", what)
		}
	}
	if err := os.WriteFile(src, []byte("garbage \x00\xff"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0); err != nil {
		t.Fatal(err)
	}
	check("garbage source")
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	check("no source")
	writeSource(t, home, `{"OPENAI_API_KEY": "sk-other-0123456789"}`)
	check("other login")
}

func TestInvalidStore(t *testing.T) {
	valid := `{"schema_version":1,"source":"codex-cli-import","imported_at":"2026-01-01T00:00:00Z","api_key":"sk-0123456789"}`
	for _, tc := range []struct{ name, content string }{
		{"not JSON", `{"schema_version":1,`},
		{"newer schema", strings.Replace(valid, `"schema_version":1`, `"schema_version":2`, 1)},
		{"no schema", strings.Replace(valid, `"schema_version":1,`, ``, 1)},
		{"no credential", `{"schema_version":1,"source":"codex-cli-import","imported_at":"2026-01-01T00:00:00Z"}`},
		{"both kinds", strings.Replace(valid, `}`, `,"access_token":"at-0123456789","refresh_token":"rt-0123456789"}`, 1)},
		{"access without refresh", `{"schema_version":1,"source":"codex-cli-import","imported_at":"2026-01-01T00:00:00Z","access_token":"at-0123456789"}`},
		{"wrong types", `{"schema_version":"1","source":"codex-cli-import","imported_at":"2026-01-01T00:00:00Z","api_key":"sk-0123456789"}`},
		{"symlink", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			// A valid source that must not be imported over a broken copy.
			writeSource(t, home, `{"OPENAI_API_KEY": "sk-source-0123456789"}`)
			p := newPaths(home)
			if err := os.MkdirAll(p.dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.name == "symlink" {
				other := filepath.Join(home, "other.json")
				os.WriteFile(other, []byte(valid), 0o600)
				if err := os.Symlink(other, p.file); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(p.file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			before := statFile(t, p.file)
			_, err := newStore(t, home, "").Credential(context.Background())
			if !errors.Is(err, ErrInvalidStore) {
				t.Fatalf("err = %v, want ErrInvalidStore", err)
			}
			noSecrets(t, "error", err.Error(), "sk-0123456789", "at-0123456789", "rt-0123456789", "sk-source-0123456789")
			if statFile(t, p.file) != before {
				t.Error("codex.json changed")
			}
		})
	}
}

func TestDirectoryNarrowed(t *testing.T) {
	home := t.TempDir()
	dir := newPaths(home).dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	writeSource(t, home, `{"OPENAI_API_KEY": "sk-0123456789"}`)
	if _, err := newStore(t, home, "").Credential(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != os.ModeDir|0o700 {
		t.Errorf("dir mode = %v", m)
	}
}
