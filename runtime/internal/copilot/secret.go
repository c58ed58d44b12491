package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
)

// Redacted is what every printed, logged or marshalled form of a Secret
// shows.
const Redacted = "[redacted]"

// Secret holds a credential: the GitHub token, the Copilot session token,
// a device code or an Authorization header value. Its String, GoString,
// every fmt verb, its slog value and its JSON and text encodings are
// "[redacted]"; only Reveal gives the value, at the one place that sends
// it. The zero Secret is empty.
type Secret struct{ v string }

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal returns the value. Call it only where the value leaves for the
// wire or the private store.
func (s Secret) Reveal() string { return s.v }

// Empty reports whether the secret has no value.
func (s Secret) Empty() bool { return s.v == "" }

// Equal reports whether s and o hold the same value.
func (s Secret) Equal(o Secret) bool { return s.v == o.v }

func (s Secret) String() string   { return Redacted }
func (s Secret) GoString() string { return Redacted }

// Format prints Redacted for every verb (quoted for %q).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		io.WriteString(f, strconv.Quote(Redacted))
		return
	}
	io.WriteString(f, Redacted)
}

// LogValue logs Redacted.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalJSON encodes Redacted: a Secret never serializes its value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText encodes Redacted.
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// scrub removes every secret value from msg: messages are built from fixed
// text, statuses and error codes, so this is a last defence only.
func scrub(msg string, secrets ...Secret) string {
	for _, s := range secrets {
		if len(s.v) >= 4 {
			msg = strings.ReplaceAll(msg, s.v, Redacted)
		}
	}
	return msg
}

// scrubbedError is an error whose message went through scrub. It unwraps to
// the context's error when the original was one (a canceled or timed-out
// call), so that errors.Is(err, context.Canceled) survives the scrubbing
// (Ctrl-C during a login exits 130); nothing else of the original is
// reachable, so no secret can leak through Unwrap.
type scrubbedError struct {
	msg   string
	cause error // context.Canceled, context.DeadlineExceeded or nil
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }

// scrubErr returns an error with msg scrubbed of secrets, keeping err's
// context cancellation or deadline for errors.Is.
func scrubErr(msg string, err error, secrets ...Secret) error {
	return &scrubbedError{msg: scrub(msg, secrets...), cause: ctxCause(err)}
}

// ctxCause returns context.Canceled or context.DeadlineExceeded when err
// is (or wraps) one of them, else nil.
func ctxCause(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return nil
}

// headerSafe reports whether v can go in an HTTP header value unchanged:
// visible ASCII and spaces, no control characters.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return v != ""
}

// String describes a session without its token.
func (s Session) String() string {
	return "copilot.Session{Token:" + Redacted + ", API:" + s.API.String() + ", RefreshAt:" + s.RefreshAt.UTC().Format("2006-01-02T15:04:05Z") + "}"
}

// GoString is String.
func (s Session) GoString() string { return s.String() }

// Format writes String for every verb, so no verb reaches the fields
// (fmt would print an unexported Secret's value by reflection).
func (s Session) Format(f fmt.State, verb rune) { formatString(f, verb, s.String()) }

// LogValue logs String.
func (s Session) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON encodes String.
func (s Session) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }

// String describes a credential without its token.
func (c Credential) String() string {
	return "copilot.Credential{Token:" + Redacted + ", ID:" + strconv.Quote(c.ID) + "}"
}

// GoString is String.
func (c Credential) GoString() string { return c.String() }

// Format writes String for every verb.
func (c Credential) Format(f fmt.State, verb rune) { formatString(f, verb, c.String()) }

// LogValue logs String.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON encodes String.
func (c Credential) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(c.String())), nil }

// String describes a device login without its device code.
func (l DeviceLogin) String() string {
	return "copilot.DeviceLogin{UserCode:" + strconv.Quote(l.UserCode) + ", VerificationURI:" + strconv.Quote(l.VerificationURI) + ", Interval:" + l.Interval.String() + ", DeviceCode:" + Redacted + "}"
}

// GoString is String.
func (l DeviceLogin) GoString() string { return l.String() }

// Format writes String for every verb.
func (l DeviceLogin) Format(f fmt.State, verb rune) { formatString(f, verb, l.String()) }

// LogValue logs String.
func (l DeviceLogin) LogValue() slog.Value { return slog.StringValue(l.String()) }

func formatString(f fmt.State, verb rune, s string) {
	if verb == 'q' {
		io.WriteString(f, strconv.Quote(s))
		return
	}
	io.WriteString(f, s)
}
