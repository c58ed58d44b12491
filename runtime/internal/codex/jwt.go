package codex

import (
	"encoding/base64"
	"math"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// jwtClaims are the few claims this package reads; OpenAI puts the ChatGPT
// account facts in the namespaced "https://api.openai.com/auth" claim.
type jwtClaims struct {
	Exp  *float64 `json:"exp"`
	Auth *struct {
		AccountID string `json:"chatgpt_account_id"`
	} `json:"https://api.openai.com/auth"`
}

// decodeJWT decodes the payload of a compact JWS without verifying the
// signature: the claims are only used to schedule a refresh and to name the
// account, never to trust anything. It reports false for anything that is
// not three non-empty base64url parts with a JSON object payload.
func decodeJWT(tok string) (jwtClaims, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return jwtClaims{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return jwtClaims{}, false
	}
	var c jwtClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return jwtClaims{}, false
	}
	return c, true
}

// jwtExpiry returns the exp claim of tok, if tok is a JWT with a plausible
// one.
func jwtExpiry(tok string) (time.Time, bool) {
	c, ok := decodeJWT(tok)
	if !ok || c.Exp == nil {
		return time.Time{}, false
	}
	exp := *c.Exp
	// Positive and before the year 5000: anything else is not a date.
	if math.IsNaN(exp) || exp <= 0 || exp > 95617584000 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(exp)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}

// jwtAccountID returns the chatgpt_account_id claim of tok, or "".
func jwtAccountID(tok string) string {
	c, ok := decodeJWT(tok)
	if !ok || c.Auth == nil || !headerSafe(c.Auth.AccountID) {
		return ""
	}
	return c.Auth.AccountID
}

// headerSafe reports whether v is non-empty visible ASCII, so it can go into
// an HTTP header (Authorization, ChatGPT-Account-ID) as it is.
func headerSafe(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}
