package copilot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	internal "octet.dev/host/runtime/internal/copilot"
)

// The GitHub Copilot seam. The embedding application implements Host: it
// supplies the short-lived Session and each model's Protocol; a Provider,
// built with an explicit Endpoint (NewProvider), caches the session,
// validates the model table and authenticates inference, and contacts no
// GitHub endpoint itself. runtime.Options.Copilot takes a *Provider. The
// GitHub.com coding adapter (`octet --login copilot`; NewGitHubProvider)
// is one Host: the device login (Login), the file store
// ~/.octet/credentials/copilot.json (FileHost), the identity in
// ~/.octet/settings.json, the token exchange at api.github.com, the
// inventory and the origin allowlist live there.

func init() {
	internal.SetUnwrap(func(v any) *internal.Provider {
		if p, ok := v.(*Provider); ok && p != nil {
			return p.p
		}
		return nil
	})
}

// Host is implemented by the embedder.
type Host interface {
	// NewSession returns a new short-lived session for the current login.
	// A session's API may name the vetted origin it is valid on; zero
	// means the provider's endpoint.
	NewSession(ctx context.Context) (Session, error)
	// Current returns nil while s is still for the current login, and an
	// error when the login was deleted or replaced, even while s is cached.
	Current(ctx context.Context, s Session) error
	// Models lists the models s may run, each with its protocol; models on
	// another protocol than OpenAiChat or OpenAiResponses are listed as
	// unroutable, never run.
	Models(ctx context.Context, s Session) ([]Model, error)
	// Headers are sent with every request beside the session's bearer.
	Headers() (map[string]string, error)
}

// Secret prints, logs and marshals as [redacted].
type Secret struct{ v string }

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal returns the value, for the one place that sends it.
func (s Secret) Reveal() string { return s.v }

// Empty reports whether the secret is empty.
func (s Secret) Empty() bool { return s.v == "" }

func (s Secret) String() string   { return internal.Redacted }
func (s Secret) GoString() string { return internal.Redacted }

// Format prints [redacted] for every verb (quoted for %q).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		io.WriteString(f, strconv.Quote(internal.Redacted))
		return
	}
	io.WriteString(f, internal.Redacted)
}

// LogValue logs [redacted].
func (s Secret) LogValue() slog.Value { return slog.StringValue(internal.Redacted) }

// MarshalJSON encodes [redacted].
func (s Secret) MarshalJSON() ([]byte, error) {
	return []byte(`"` + internal.Redacted + `"`), nil
}

// MarshalText encodes [redacted].
func (s Secret) MarshalText() ([]byte, error) { return []byte(internal.Redacted), nil }

// Endpoint is an explicit origin root (ParseEndpoint).
type Endpoint struct{ e internal.Endpoint }

// String is the origin, e.g. "https://api.githubcopilot.com".
func (e Endpoint) String() string { return e.e.String() }

// IsZero reports the zero (invalid) endpoint.
func (e Endpoint) IsZero() bool { return e.e.IsZero() }

// ParseEndpoint validates an explicit HTTPS origin root; plain http only
// to a literal loopback address (tests); any path, query, fragment or
// userinfo is rejected.
func ParseEndpoint(raw string) (Endpoint, error) {
	e, err := internal.ParseEndpoint(raw)
	return Endpoint{e}, err
}

// InferenceOrigins is the GitHub adapter's fixed allowlist of Copilot API
// origins.
func InferenceOrigins() []string { return append([]string(nil), internal.InferenceOrigins...) }

// Session is a short-lived Copilot API session. RefreshAt is local (the
// time it was fetched plus its lifetime); ExpiresAt is informational.
type Session struct {
	Token     Secret
	API       Endpoint // zero: the provider's endpoint
	RefreshAt time.Time
	ExpiresAt time.Time
	s         internal.Session // the provider's own, when it gave this one
}

// String describes the session without its token.
func (s Session) String() string {
	return "CopilotSession{Token:" + internal.Redacted + ", API:" + s.API.String() + ", RefreshAt:" + s.RefreshAt.UTC().Format("2006-01-02T15:04:05Z") + "}"
}

// Protocol is a model's wire, from the host.
type Protocol string

// Copilot protocols: OpenAiChat selects Chat Completions, OpenAiResponses
// the Responses API; anything else is rejected.
const (
	OpenAiChat      Protocol = Protocol(internal.ProtocolOpenAiChat)
	OpenAiResponses Protocol = Protocol(internal.ProtocolOpenAiResponses)
)

// Model is one Copilot model. It holds no credential.
type Model struct {
	ID                  string // sent as "model"
	Name                string
	Protocol            Protocol
	ContextWindowTokens int
	MaxOutputTokens     int
	Vision              bool
	ToolCalls           bool
	Reasoning           bool
	Unroutable          string // why a listed model cannot be run ("" when it can)
}

// Provider is the seam: it takes sessions from its Host and replaces them
// 60 s before the local refresh deadline (checked before every HTTP
// request; concurrent callers share one request), registers the models
// (RegisterModels) and authenticates inference to its endpoint (Client).
// runtime.Options.Copilot takes one.
type Provider struct{ p *internal.Provider }

// NewProvider is the seam on the embedder's host: inference goes to
// endpoint (a session the host gives with its own origin goes there),
// through client (nil: http.DefaultClient; redirects are never followed).
func NewProvider(endpoint Endpoint, host Host, client *http.Client) *Provider {
	return &Provider{p: &internal.Provider{Endpoint: endpoint.e, Host: hostAdapter{host}, HTTPClient: client}}
}

// FileHost is the coding adapter's login store:
// ~/.octet/credentials/copilot.json under Home, the identity in
// ~/.octet/settings.json, the device flow on github.com through HTTPClient.
type FileHost struct {
	Home       string
	HTTPClient *http.Client
}

// NewGitHubProvider is the GitHub.com coding adapter's provider on the
// login store fh: the token exchange at api.github.com, the inventory, the
// origin allowlist, and api.githubcopilot.com as the endpoint.
func NewGitHubProvider(fh FileHost, client *http.Client) *Provider {
	return &Provider{p: internal.NewGitHubProvider(&internal.FileHost{Home: fh.Home, HTTPClient: fh.HTTPClient}, client, nil)}
}

// RegisterModels takes a session and the models from the host, validates
// them and publishes the table atomically (a failure keeps the previous
// one); it returns the routable models.
func (p *Provider) RegisterModels(ctx context.Context) ([]Model, error) {
	t, err := p.p.RegisterModels(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Model, 0, len(t.Models))
	for _, m := range t.Models {
		out = append(out, fromModel(m))
	}
	return out, nil
}

// Session returns a usable session (the cached one while current and not
// due, else a new one from the host).
func (p *Provider) Session(ctx context.Context) (Session, error) {
	s, err := p.p.Session(ctx)
	if err != nil {
		return Session{}, err
	}
	return fromSession(s), nil
}

// Client sends inference to the session's origin with its bearer and the
// host's headers; a 401 takes one new session and is sent once more.
func (p *Provider) Client() *http.Client { return p.p.Client() }

// Logout drops the cached session and the model table.
func (p *Provider) Logout() { p.p.Logout() }

func fromModel(m internal.Model) Model {
	return Model{ID: m.ID, Name: m.Name, Protocol: Protocol(m.Protocol), ContextWindowTokens: m.ContextWindowTokens,
		MaxOutputTokens: m.MaxOutputTokens, Vision: m.Vision, ToolCalls: m.ToolCalls, Reasoning: m.Reasoning, Unroutable: m.Unroutable}
}

func fromSession(s internal.Session) Session {
	return Session{Token: NewSecret(s.Token.Reveal()), API: Endpoint{s.API}, RefreshAt: s.RefreshAt, ExpiresAt: s.ExpiresAt, s: s}
}

// hostAdapter is the embedder's Host as the seam's Host.
type hostAdapter struct{ h Host }

func (a hostAdapter) NewSession(ctx context.Context) (internal.Session, error) {
	s, err := a.h.NewSession(ctx)
	if err != nil {
		return internal.Session{}, err
	}
	return internal.Session{Token: internal.NewSecret(s.Token.Reveal()), API: s.API.e, RefreshAt: s.RefreshAt, ExpiresAt: s.ExpiresAt}, nil
}

func (a hostAdapter) Current(ctx context.Context, s internal.Session) error {
	return a.h.Current(ctx, fromSession(s))
}

func (a hostAdapter) Models(ctx context.Context, s internal.Session) ([]internal.Model, error) {
	ms, err := a.h.Models(ctx, fromSession(s))
	if err != nil {
		return nil, err
	}
	out := make([]internal.Model, 0, len(ms))
	for _, m := range ms {
		out = append(out, internal.Model{ID: m.ID, Name: m.Name, Protocol: internal.Protocol(m.Protocol), ContextWindowTokens: m.ContextWindowTokens,
			MaxOutputTokens: m.MaxOutputTokens, Vision: m.Vision, ToolCalls: m.ToolCalls, Reasoning: m.Reasoning, Unroutable: m.Unroutable})
	}
	return out, nil
}

func (a hostAdapter) Headers() (map[string]string, error) { return a.h.Headers() }
