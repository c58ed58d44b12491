package codex

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

func TestCredentialRedaction(t *testing.T) {
	const key = "sk-very-secret-key-0123456789"
	const access = "eyJhbGciOi.secret-access-token.sig0123456789"
	creds := []Credential{
		{APIKey: key},
		{AccessToken: access, AccountID: "acct-1", ExpiresAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
	for _, c := range creds {
		var outs []string
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v"} {
			outs = append(outs, fmt.Sprintf(verb, c), fmt.Sprintf(verb, &c), fmt.Sprintf(verb, []Credential{c}),
				fmt.Sprintf(verb, struct{ C Credential }{c}), fmt.Sprintf(verb, map[string]Credential{"c": c}))
		}
		outs = append(outs, fmt.Sprint(c), fmt.Sprintln(c), c.String(), c.GoString())
		if b, err := json.Marshal(c); err != nil {
			t.Error(err)
		} else {
			outs = append(outs, string(b))
		}
		if b, err := stdjson.Marshal(struct{ C Credential }{c}); err != nil {
			t.Error(err)
		} else {
			outs = append(outs, string(b))
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "cred", c)
		slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "cred", c)
		outs = append(outs, buf.String())
		outs = append(outs, fmt.Errorf("wrapped: %v", c).Error())
		for _, o := range outs {
			noSecrets(t, "output", o, key, access)
			if !strings.Contains(o, "codex.Credential{") && !strings.Contains(o, "636f6465782e") && !strings.Contains(o, "636F6465782E") {
				t.Errorf("output %q does not show the redacted form", o)
			}
		}
	}
	if s := creds[1].String(); s != `codex.Credential{AccessToken:[redacted], AccountID:"acct-1", ExpiresAt:2026-01-02T03:04:05Z}` {
		t.Errorf("String = %s", s)
	}
	if creds[1].Bearer() != access || creds[0].Bearer() != key {
		t.Error("Bearer")
	}
}

func TestErrorTypes(t *testing.T) {
	var err error = &NoCredentialError{Reason: "x"}
	if !errors.Is(err, ErrNoCredential) || errors.Is(err, ErrInvalidStore) {
		t.Error("NoCredentialError Is")
	}
	if err.Error() != "codex: no credential: x" {
		t.Error(err)
	}
	re := &RefreshError{StatusCode: 500, msg: "m"}
	if re.Permanent() || re.Unwrap() != nil || re.Error() != "codex: refreshing the access token failed: m" {
		t.Error("RefreshError")
	}
}

func TestErrorCode(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"code":"refresh_token_expired","message":"m"}}`: "refresh_token_expired",
		`{"error":"invalid_grant","error_description":"d"}`:        "invalid_grant",
		`{"code":"refresh_token_invalidated"}`:                     "refresh_token_invalidated",
		`{"error":{"message":"no code"}}`:                          "",
		`{"error":"has spaces in it"}`:                             "",
		`{"error":"` + strings.Repeat("a", 65) + `"}`:              "",
		`not json`:   "",
		`[1]`:        "",
		`{"code":1}`: "",
	} {
		if got := errorCode([]byte(body)); got != want {
			t.Errorf("errorCode(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestJWTDecode(t *testing.T) {
	exp := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	tok := accessJWT(exp, "acct-x", "t")
	if got, ok := jwtExpiry(tok); !ok || !got.Equal(exp) {
		t.Errorf("jwtExpiry = %v %v", got, ok)
	}
	if got := jwtAccountID(tok); got != "acct-x" {
		t.Errorf("jwtAccountID = %q", got)
	}
	// Padded payload, fractional exp.
	parts := strings.Split(makeJWT(map[string]any{"exp": 1.5e9 + 0.5}), ".")
	padded := parts[0] + "." + parts[1] + strings.Repeat("=", (4-len(parts[1])%4)%4) + "." + parts[2]
	if got, ok := jwtExpiry(padded); !ok || got.Unix() != 1.5e9 {
		t.Errorf("padded: %v %v", got, ok)
	}
	for _, bad := range []string{
		"", "opaque", "a.b", "a..c", "a.b.c.d", "x.!!!.y",
		makeJWT(map[string]any{"exp": "soon"}),
		makeJWT(map[string]any{"exp": -1}),
		makeJWT(map[string]any{"exp": 1e15}),
		makeJWT(map[string]any{"sub": "no exp"}),
	} {
		if _, ok := jwtExpiry(bad); ok {
			t.Errorf("jwtExpiry(%q) ok", bad)
		}
	}
	if got := jwtAccountID(makeJWT(map[string]any{"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": "a b"}})); got != "" {
		t.Errorf("unsafe account id accepted: %q", got)
	}
}
