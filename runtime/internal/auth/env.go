package auth

import (
	"net/http"
	"strings"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/copilot"
)

// Env is what auth needs of the engine: the operator's home directory,
// the clock, the HTTP client and the overrides of Options.
type Env struct {
	Home          string
	Now           func() time.Time
	HTTPClient    *http.Client
	IdleTimeout   time.Duration
	CodexTokenURL string            // the Codex OAuth token endpoint; "" the real one
	CodexBaseURL  string            // the Codex API root; "" the real one
	Copilot       *copilot.Provider // the embedder's Copilot provider; nil the file host's
}

// Refusal is a route refused before the run was accepted: a run code (one
// of protocol.RunCodes) and a message with no secret in it. The engine
// reports it as its RunError.
type Refusal struct {
	Code    protocol.Code
	Message string
}

func (r *Refusal) Error() string { return string(r.Code) + ": " + r.Message }

func refuse(code protocol.Code, msg string) *Refusal { return &Refusal{Code: code, Message: msg} }

// scrub removes a credential from a message.
func scrub(msg, key string) string {
	if len(key) >= 4 {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	return msg
}
