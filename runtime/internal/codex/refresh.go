package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
)

// refreshRequest is the token endpoint's JSON body (codex-rs RefreshRequest).
type refreshRequest struct {
	ClientID     string `json:"client_id"`
	GrantType    string `json:"grant_type"`
	RefreshToken string `json:"refresh_token"`
}

// refreshResponse is the part of the answer this package reads. The Codex
// CLI reads id_token, access_token and refresh_token, all optional;
// expires_in is the standard OAuth lifetime, used only when the access
// token has no exp claim.
type refreshResponse struct {
	AccessToken  *string  `json:"access_token"`
	RefreshToken *string  `json:"refresh_token"`
	IDToken      *string  `json:"id_token"`
	ExpiresIn    *float64 `json:"expires_in"`
}

// refresh exchanges r's refresh token for new tokens and returns the updated
// record; the caller holds the lock and writes it. r is not changed.
func (s *Store) refresh(ctx context.Context, r record, now time.Time) (record, error) {
	fail := func(status int, code, msg string, cause error) error {
		if isSecret(code, r.secrets()...) {
			code = ""
		}
		return &RefreshError{StatusCode: status, Code: code, msg: scrub(msg, r.secrets()...), err: cause}
	}

	ctx, cancel := context.WithTimeout(ctx, RefreshTimeout)
	defer cancel()
	body, err := json.Marshal(refreshRequest{ClientID: s.clientID(), GrantType: "refresh_token", RefreshToken: r.RefreshToken})
	if err != nil {
		return record{}, fail(0, "", "encoding the request", nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.tokenURL(), bytes.NewReader(body))
	if err != nil {
		return record{}, fail(0, "", "the token URL is not a valid URL", nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")

	resp, err := s.client().Do(req)
	if err != nil {
		// url.Error names the method and URL; keep only the cause.
		cause := err
		var ue *url.Error
		if errors.As(err, &ue) {
			cause = ue.Err
		}
		return record{}, fail(0, "", "no answer from the token endpoint: "+cause.Error(), cause)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxFileBytes+1))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code := errorCode(data)
		msg := "the token endpoint answered HTTP " + fmt.Sprint(resp.StatusCode)
		if code != "" {
			msg += " (" + code + ")"
		}
		return record{}, fail(resp.StatusCode, code, msg, nil)
	}
	switch {
	case rerr != nil:
		return record{}, fail(resp.StatusCode, "", "reading the token endpoint's answer: "+rerr.Error(), rerr)
	case len(data) > maxFileBytes:
		return record{}, fail(resp.StatusCode, "", "the token endpoint's answer is larger than 1 MiB", nil)
	}

	var out refreshResponse
	if v := jsontext.Value(data); !v.IsValid() || v.Kind() != '{' {
		return record{}, fail(resp.StatusCode, "", "the token endpoint's answer is not a JSON object", nil)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return record{}, fail(resp.StatusCode, "", "the token endpoint's answer has members of unexpected types", nil)
	}
	access, refresh, idToken := str(out.AccessToken), str(out.RefreshToken), str(out.IDToken)
	newSecrets := []string{access, refresh, idToken}
	switch {
	case access == "":
		return record{}, fail(resp.StatusCode, "", "the token endpoint's answer has no access_token", nil)
	case !headerSafe(access):
		return record{}, fail(resp.StatusCode, "", scrub("the token endpoint's answer has an access_token with characters not allowed in an HTTP header", newSecrets...), nil)
	case refresh != "" && !headerSafe(refresh):
		return record{}, fail(resp.StatusCode, "", scrub("the token endpoint's answer has a refresh_token with characters not allowed in an HTTP header", newSecrets...), nil)
	}

	n := r
	n.AccessToken = access
	if refresh != "" {
		n.RefreshToken = refresh
	}
	if idToken != "" {
		n.IDToken = idToken
	}
	if n.AccountID == "" {
		n.AccountID = accountFromTokens(n.IDToken, n.AccessToken)
	}
	n.ExpiresAt = time.Time{}
	if exp, ok := jwtExpiry(access); ok {
		n.ExpiresAt = exp
	} else if out.ExpiresIn != nil && *out.ExpiresIn > 0 && *out.ExpiresIn < 1e9 {
		n.ExpiresAt = now.Add(time.Duration(*out.ExpiresIn * float64(time.Second))).UTC()
	}
	n.RefreshedAt = now.UTC()
	return n, nil
}

// errorCode returns the error code of an OAuth error body, in the shapes the
// Codex CLI reads ({"error":{"code":…}}, {"error":"…"}, {"code":…}), when
// it looks like a code; else "". Nothing else of the body is ever used.
func errorCode(body []byte) string {
	var b struct {
		Error jsontext.Value `json:"error"`
		Code  *string        `json:"code"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return ""
	}
	var code string
	switch b.Error.Kind() {
	case '{':
		var e struct {
			Code *string `json:"code"`
		}
		if json.Unmarshal(b.Error, &e) == nil {
			code = str(e.Code)
		}
	case '"':
		_ = json.Unmarshal(b.Error, &code)
	}
	if code == "" {
		code = str(b.Code)
	}
	if !textutil.IsCode(code) {
		return ""
	}
	return code
}

// isSecret reports whether v contains one of the secrets.
func isSecret(v string, secrets ...string) bool {
	return v != scrub(v, secrets...)
}
