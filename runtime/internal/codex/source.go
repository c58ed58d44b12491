package codex

import (
	"errors"
	"io/fs"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// authDotJSON is the part of the Codex CLI's auth.json this package reads
// (codex-rs AuthDotJson: auth_mode, OPENAI_API_KEY, tokens, last_refresh).
// Member names match exactly; unknown members are ignored; duplicate names
// and invalid UTF-8 are refused by the decoder.
type authDotJSON struct {
	AuthMode *string     `json:"auth_mode"`
	APIKey   *string     `json:"OPENAI_API_KEY"`
	Tokens   *authTokens `json:"tokens"`
}

type authTokens struct {
	IDToken      *string `json:"id_token"`
	AccessToken  *string `json:"access_token"`
	RefreshToken *string `json:"refresh_token"`
	AccountID    *string `json:"account_id"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// importSource reads the Codex CLI's auth.json (read-only, never following a
// final symbolic link, never changing it) and turns it into a record. Every
// failure is a *NoCredentialError whose reason names the file, never a
// value from it.
func importSource(path string, now time.Time) (record, error) {
	noCred := func(what string) error { return &NoCredentialError{Reason: path + " " + what} }
	data, err := readNoFollow(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return record{}, noCred("does not exist")
	case err != nil:
		return record{}, noCred("cannot be used: " + describe(err))
	}
	v := jsontext.Value(data)
	if !v.IsValid() {
		return record{}, noCred("is not valid JSON")
	}
	if v.Kind() != '{' {
		return record{}, noCred("is not a JSON object")
	}
	var a authDotJSON
	if err := json.Unmarshal(data, &a); err != nil {
		return record{}, noCred("has members of unexpected types")
	}

	key := str(a.APIKey)
	var mode string
	switch m := str(a.AuthMode); m {
	case "apikey", "chatgpt":
		mode = m
	case "":
		// As the Codex CLI resolves a file without auth_mode: a key wins.
		mode = "chatgpt"
		if key != "" {
			mode = "apikey"
		}
	default:
		return record{}, noCred("has auth_mode " + quoteName(m) + ", which this host cannot use (only \"apikey\" and \"chatgpt\")")
	}

	r := record{SchemaVersion: schemaVersion, Source: sourceImport, ImportedAt: now.UTC()}
	if mode == "apikey" {
		switch {
		case key == "":
			return record{}, noCred("has auth_mode \"apikey\" but no OPENAI_API_KEY")
		case !headerSafe(key):
			return record{}, noCred("has an OPENAI_API_KEY with characters not allowed in an HTTP header")
		}
		r.APIKey = key
		return r, nil
	}

	t := a.Tokens
	if t == nil {
		return record{}, noCred("has neither an OPENAI_API_KEY nor tokens")
	}
	access, refresh := str(t.AccessToken), str(t.RefreshToken)
	switch {
	case access == "":
		return record{}, noCred("has no tokens.access_token")
	case refresh == "":
		return record{}, noCred("has no tokens.refresh_token")
	case !headerSafe(access):
		return record{}, noCred("has a tokens.access_token with characters not allowed in an HTTP header")
	case !headerSafe(refresh):
		return record{}, noCred("has a tokens.refresh_token with characters not allowed in an HTTP header")
	}
	r.AccessToken, r.RefreshToken, r.IDToken = access, refresh, str(t.IDToken)
	r.AccountID = str(t.AccountID)
	if r.AccountID != "" && !headerSafe(r.AccountID) {
		return record{}, noCred("has a tokens.account_id with characters not allowed in an HTTP header")
	}
	if r.AccountID == "" {
		r.AccountID = accountFromTokens(r.IDToken, r.AccessToken)
	}
	if exp, ok := jwtExpiry(access); ok {
		r.ExpiresAt = exp
	}
	return r, nil
}

// accountFromTokens returns the chatgpt_account_id claim of the ID token,
// else of the access token, else "".
func accountFromTokens(idToken, accessToken string) string {
	if id := jwtAccountID(idToken); id != "" {
		return id
	}
	return jwtAccountID(accessToken)
}
