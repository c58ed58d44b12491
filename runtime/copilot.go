package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"octet.dev/host/runtime/internal/copilot"
)

// The GitHub Copilot seam. The embedding application implements
// CopilotHost: it supplies the short-lived CopilotSession and each model's
// CopilotProtocol; a CopilotProvider, built with an explicit
// CopilotEndpoint (NewCopilotProvider), caches the session, validates the
// model table and authenticates inference, and contacts no GitHub endpoint
// itself. The GitHub.com coding adapter (`octet --login copilot`, package
// runtime/copilot; NewCopilotGitHubProvider) is one CopilotHost: the
// device login, the file store ~/.octet/credentials/copilot.json
// (CopilotFileHost), the identity in ~/.octet/settings.json, the token
// exchange at api.github.com, the inventory and the origin allowlist live
// there.

// CopilotHost is implemented by the embedder.
type CopilotHost interface {
	// NewSession returns a new short-lived session for the current login.
	// A session's API may name the vetted origin it is valid on; zero
	// means the provider's endpoint.
	NewSession(ctx context.Context) (CopilotSession, error)
	// Current returns nil while s is still for the current login, and an
	// error when the login was deleted or replaced, even while s is cached.
	Current(ctx context.Context, s CopilotSession) error
	// Models lists the models s may run, each with its protocol; models on
	// another protocol than CopilotOpenAiChat or CopilotOpenAiResponses
	// are listed as unroutable, never run.
	Models(ctx context.Context, s CopilotSession) ([]CopilotModel, error)
	// Headers are sent with every request beside the session's bearer.
	Headers() (map[string]string, error)
}

// CopilotSecret prints, logs and marshals as [redacted].
type CopilotSecret struct{ v string }

// NewCopilotSecret wraps v.
func NewCopilotSecret(v string) CopilotSecret { return CopilotSecret{v: v} }

// Reveal returns the value, for the one place that sends it.
func (s CopilotSecret) Reveal() string { return s.v }

// Empty reports whether the secret is empty.
func (s CopilotSecret) Empty() bool { return s.v == "" }

func (s CopilotSecret) String() string   { return copilot.Redacted }
func (s CopilotSecret) GoString() string { return copilot.Redacted }

// Format prints [redacted] for every verb (quoted for %q).
func (s CopilotSecret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		io.WriteString(f, strconv.Quote(copilot.Redacted))
		return
	}
	io.WriteString(f, copilot.Redacted)
}

// LogValue logs [redacted].
func (s CopilotSecret) LogValue() slog.Value { return slog.StringValue(copilot.Redacted) }

// MarshalJSON encodes [redacted].
func (s CopilotSecret) MarshalJSON() ([]byte, error) {
	return []byte(`"` + copilot.Redacted + `"`), nil
}

// MarshalText encodes [redacted].
func (s CopilotSecret) MarshalText() ([]byte, error) { return []byte(copilot.Redacted), nil }

// CopilotEndpoint is an explicit origin root (ParseCopilotEndpoint).
type CopilotEndpoint struct{ e copilot.Endpoint }

// String is the origin, e.g. "https://api.githubcopilot.com".
func (e CopilotEndpoint) String() string { return e.e.String() }

// IsZero reports the zero (invalid) endpoint.
func (e CopilotEndpoint) IsZero() bool { return e.e.IsZero() }

// ParseCopilotEndpoint validates an explicit HTTPS origin root; plain http
// only to a literal loopback address (tests); any path, query, fragment or
// userinfo is rejected.
func ParseCopilotEndpoint(raw string) (CopilotEndpoint, error) {
	e, err := copilot.ParseEndpoint(raw)
	return CopilotEndpoint{e}, err
}

// CopilotInferenceOrigins is the GitHub adapter's fixed allowlist of
// Copilot API origins.
func CopilotInferenceOrigins() []string { return append([]string(nil), copilot.InferenceOrigins...) }

// CopilotSession is a short-lived Copilot API session. RefreshAt is local
// (the time it was fetched plus its lifetime); ExpiresAt is informational.
type CopilotSession struct {
	Token     CopilotSecret
	API       CopilotEndpoint // zero: the provider's endpoint
	RefreshAt time.Time
	ExpiresAt time.Time
	s         copilot.Session // the provider's own, when it gave this one
}

// String describes the session without its token.
func (s CopilotSession) String() string {
	return "CopilotSession{Token:" + copilot.Redacted + ", API:" + s.API.String() + ", RefreshAt:" + s.RefreshAt.UTC().Format("2006-01-02T15:04:05Z") + "}"
}

// CopilotProtocol is a model's wire, from the host.
type CopilotProtocol string

// Copilot protocols: OpenAiChat selects Chat Completions, OpenAiResponses
// the Responses API; anything else is rejected.
const (
	CopilotOpenAiChat      CopilotProtocol = CopilotProtocol(copilot.ProtocolOpenAiChat)
	CopilotOpenAiResponses CopilotProtocol = CopilotProtocol(copilot.ProtocolOpenAiResponses)
)

// CopilotModel is one Copilot model. It holds no credential.
type CopilotModel struct {
	ID                  string // sent as "model"
	Name                string
	Protocol            CopilotProtocol
	ContextWindowTokens int
	MaxOutputTokens     int
	Vision              bool
	ToolCalls           bool
	Reasoning           bool
	Unroutable          string // why a listed model cannot be run ("" when it can)
}

// CopilotProvider is the seam: it takes sessions from its CopilotHost and
// replaces them 60 s before the local refresh deadline (checked before
// every HTTP request; concurrent callers share one request), registers the
// models (RegisterModels) and authenticates inference to its endpoint
// (Client).
type CopilotProvider struct{ p *copilot.Provider }

// NewCopilotProvider is the seam on the embedder's host: inference goes to
// endpoint (a session the host gives with its own origin goes there),
// through client (nil: http.DefaultClient; redirects are never followed).
func NewCopilotProvider(endpoint CopilotEndpoint, host CopilotHost, client *http.Client) *CopilotProvider {
	return &CopilotProvider{p: &copilot.Provider{Endpoint: endpoint.e, Host: hostAdapter{host}, HTTPClient: client}}
}

// CopilotFileHost is the coding adapter's login store:
// ~/.octet/credentials/copilot.json under Home, the identity in
// ~/.octet/settings.json, the device flow on github.com through HTTPClient.
type CopilotFileHost struct {
	Home       string
	HTTPClient *http.Client
}

// NewCopilotGitHubProvider is the GitHub.com coding adapter's provider on
// the login store fh: the token exchange at api.github.com, the inventory,
// the origin allowlist, and api.githubcopilot.com as the endpoint.
func NewCopilotGitHubProvider(fh CopilotFileHost, client *http.Client) *CopilotProvider {
	return &CopilotProvider{p: copilot.NewGitHubProvider(&copilot.FileHost{Home: fh.Home, HTTPClient: fh.HTTPClient}, client, nil)}
}

func (p *CopilotProvider) internal() *copilot.Provider {
	if p == nil {
		return nil
	}
	return p.p
}

// RegisterModels takes a session and the models from the host, validates
// them and publishes the table atomically (a failure keeps the previous
// one); it returns the routable models.
func (p *CopilotProvider) RegisterModels(ctx context.Context) ([]CopilotModel, error) {
	t, err := p.p.RegisterModels(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]CopilotModel, 0, len(t.Models))
	for _, m := range t.Models {
		out = append(out, fromCopilotModel(m))
	}
	return out, nil
}

// Session returns a usable session (the cached one while current and not
// due, else a new one from the host).
func (p *CopilotProvider) Session(ctx context.Context) (CopilotSession, error) {
	s, err := p.p.Session(ctx)
	if err != nil {
		return CopilotSession{}, err
	}
	return fromCopilotSession(s), nil
}

// Client sends inference to the session's origin with its bearer and the
// host's headers; a 401 takes one new session and is sent once more.
func (p *CopilotProvider) Client() *http.Client { return p.p.Client() }

// Logout drops the cached session and the model table.
func (p *CopilotProvider) Logout() { p.p.Logout() }

func fromCopilotModel(m copilot.Model) CopilotModel {
	return CopilotModel{ID: m.ID, Name: m.Name, Protocol: CopilotProtocol(m.Protocol), ContextWindowTokens: m.ContextWindowTokens,
		MaxOutputTokens: m.MaxOutputTokens, Vision: m.Vision, ToolCalls: m.ToolCalls, Reasoning: m.Reasoning, Unroutable: m.Unroutable}
}

func fromCopilotSession(s copilot.Session) CopilotSession {
	return CopilotSession{Token: NewCopilotSecret(s.Token.Reveal()), API: CopilotEndpoint{s.API}, RefreshAt: s.RefreshAt, ExpiresAt: s.ExpiresAt, s: s}
}

// hostAdapter is the embedder's CopilotHost as the seam's Host.
type hostAdapter struct{ h CopilotHost }

func (a hostAdapter) NewSession(ctx context.Context) (copilot.Session, error) {
	s, err := a.h.NewSession(ctx)
	if err != nil {
		return copilot.Session{}, err
	}
	return copilot.Session{Token: copilot.NewSecret(s.Token.Reveal()), API: s.API.e, RefreshAt: s.RefreshAt, ExpiresAt: s.ExpiresAt}, nil
}

func (a hostAdapter) Current(ctx context.Context, s copilot.Session) error {
	return a.h.Current(ctx, fromCopilotSession(s))
}

func (a hostAdapter) Models(ctx context.Context, s copilot.Session) ([]copilot.Model, error) {
	ms, err := a.h.Models(ctx, fromCopilotSession(s))
	if err != nil {
		return nil, err
	}
	out := make([]copilot.Model, 0, len(ms))
	for _, m := range ms {
		out = append(out, copilot.Model{ID: m.ID, Name: m.Name, Protocol: copilot.Protocol(m.Protocol), ContextWindowTokens: m.ContextWindowTokens,
			MaxOutputTokens: m.MaxOutputTokens, Vision: m.Vision, ToolCalls: m.ToolCalls, Reasoning: m.Reasoning, Unroutable: m.Unroutable})
	}
	return out, nil
}

func (a hostAdapter) Headers() (map[string]string, error) { return a.h.Headers() }
