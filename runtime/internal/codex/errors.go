package codex

import (
	"errors"
	"strconv"
	"strings"

	"octet.dev/host/internal/textutil"
)

// ErrNoCredential is matched (errors.Is) by a *NoCredentialError: there is no
// host copy yet and ~/.codex/auth.json does not give a usable credential.
var ErrNoCredential = errors.New("codex: no credential")

// ErrInvalidStore wraps the failures to use the host's own copy,
// ~/.octet/credentials/codex.json: it is not a regular file, does not parse,
// has another schema version or holds no usable credential. The file is
// left as it is.
var ErrInvalidStore = errors.New("codex: invalid credential store")

// NoCredentialError says why no credential could be imported. Reason names
// the file and what is wrong with it, never a key or token.
type NoCredentialError struct {
	Reason string
}

func (e *NoCredentialError) Error() string { return "codex: no credential: " + e.Reason }

// Is makes errors.Is(err, ErrNoCredential) hold.
func (e *NoCredentialError) Is(target error) bool { return target == ErrNoCredential }

// RefreshError is a failed OAuth token refresh. codex.json is unchanged.
type RefreshError struct {
	// StatusCode is the token endpoint's HTTP status; 0 when no response
	// arrived (connection failure, timeout, cancellation).
	StatusCode int
	// Code is the OAuth error code of a non-2xx answer when the body had
	// one that looks like a code (letters, digits, "_", "-", "."; at most 64
	// bytes), e.g. "refresh_token_reused"; else empty.
	Code string
	msg  string
	err  error
}

func (e *RefreshError) Error() string {
	return "codex: refreshing the access token failed: " + e.msg
}

// Unwrap returns the cause of a failure without a response (for instance
// context.Canceled or a *net.OpError); nil otherwise.
func (e *RefreshError) Unwrap() error { return e.err }

// Permanent reports whether the endpoint rejected the refresh token itself
// (HTTP 401, or an expired, reused, revoked or invalid grant): retrying
// cannot help, the user has to log in again (and delete codex.json so that
// the new Codex CLI login is imported).
func (e *RefreshError) Permanent() bool {
	if e.StatusCode == 401 {
		return true
	}
	switch e.Code {
	case "refresh_token_expired", "refresh_token_reused", "refresh_token_invalidated", "invalid_grant":
		return true
	}
	return false
}

// redacted replaces a secret found in a message.
const redacted = "[redacted]"

// scrub removes every secret from msg. Messages are built from fixed text,
// field names, statuses and error codes, so this is a last defence only.
func scrub(msg string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	return msg
}

// quoteName quotes a short identifier-like value (an auth_mode) for a
// message, or says it is not one; a value that could be anything is never
// echoed.
func quoteName(v string) string {
	if textutil.IsCode(v) && len(v) <= 32 {
		return strconv.Quote(v)
	}
	return "(unrecognized value)"
}
