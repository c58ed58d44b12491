package messages

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// DefaultIdleTimeout is the longest a stream may go without a byte when
// Config.IdleTimeout is zero.
const DefaultIdleTimeout = edge.DefaultIdleTimeout

// DefaultMaxEventBytes bounds one SSE event when Config.MaxEventBytes is
// zero. Deltas are small; a proxy that sends a whole tool input in
// content_block_start is the largest plausible event.
const DefaultMaxEventBytes = edge.DefaultMaxEventBytes

// DefaultMaxTokens is the max_tokens sent when Request.MaxOutputTokens is
// zero; the API requires the field.
const DefaultMaxTokens = 8192

// APIVersion is the anthropic-version header value.
const APIVersion = "2023-06-01"

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root, e.g. "https://api.anthropic.com"; requests
	// go to BaseURL + "/v1/messages", or to BaseURL + "/messages" when
	// BaseURL already ends in "/v1" (CONTRACT §8). It must be absolute
	// http(s) with a host and no userinfo, query or fragment.
	BaseURL string
	// APIKey is sent as "x-api-key: <key>"; none when empty. No
	// Authorization header is sent.
	APIKey string
	// Headers are extra request headers (custom_headers, e.g.
	// anthropic-beta). The run validator applies CONTRACT §8's header
	// rules; this package checks syntax only. An anthropic-version given
	// here replaces APIVersion; Content-Type, Accept and (with an APIKey)
	// x-api-key are set after them and win.
	Headers map[string]string
	// HTTPClient sends the requests; nil means a client with its own clone
	// of http.DefaultTransport. Its Timeout, if any, bounds whole streams.
	HTTPClient *http.Client
	// IdleTimeout is the longest the response body may go without a byte;
	// zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxEventBytes bounds one SSE event; zero means DefaultMaxEventBytes.
	MaxEventBytes int
	// Now is the clock for HTTP-date Retry-After values; nil means time.Now.
	Now func() time.Time
	// ThinkingBudget is the budget_tokens of extended thinking, which is
	// requested only when Request.ReasoningEffort is set; zero means a
	// budget derived from the effort (low 2048, medium 8192, high 24576).
	// It is capped at three quarters of max_tokens and at max_tokens less
	// 1024, so the answer keeps room, and thinking is left off when the
	// capped budget is under the API's minimum of 1024 (max_tokens below
	// 2048).
	ThinkingBudget int
	// AdaptiveThinking selects {"type":"adaptive"} thinking, with the effort
	// in output_config, for models that take it instead of a budget
	// (ThinkingBudget is then unused).
	AdaptiveThinking bool
}

// Provider is an Anthropic Messages route. It is safe for concurrent use.
// It keeps the route's settings, which it hands to the edge as an
// edge.Route on every call.
type Provider struct {
	endpoint string
	thinking thinkingConfig
	header   http.Header
	client   *http.Client
	idle     time.Duration
	maxEvent int
	now      func() time.Time
	scrub    edge.Scrubber
}

var _ provider.Provider = (*Provider)(nil)

// mode is the Messages wire mode as the edge serves it. The API key goes in
// x-api-key, never in Authorization.
var mode = &edge.Mode{
	Name:        "messages",
	Endpoint:    endpointFor,
	KeyHeader:   "X-Api-Key",
	BaseHeaders: map[string]string{"Anthropic-Version": APIVersion},
	ErrorFields: errorFields,
	Decode:      func(body io.Reader, maxEventBytes int) edge.Decoder { return decodeStream(body, maxEventBytes) },
}

// New validates cfg, fills its defaults and returns a Provider.
func New(cfg Config) (*Provider, error) {
	r, errs := mode.Route(edge.Config{
		BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Headers: cfg.Headers, HTTPClient: cfg.HTTPClient,
		IdleTimeout: cfg.IdleTimeout, MaxEventBytes: cfg.MaxEventBytes, Now: cfg.Now,
	})
	if cfg.ThinkingBudget < 0 {
		errs = append(errs, errors.New("messages: negative thinking budget"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Provider{
		endpoint: r.URL, header: r.Header, client: r.Client,
		idle: r.Idle, maxEvent: r.MaxEvent, now: r.Now, scrub: r.Scrub,
		thinking: thinkingConfig{budget: cfg.ThinkingBudget, adaptive: cfg.AdaptiveThinking},
	}, nil
}

// endpointFor returns the Messages endpoint of an API root.
func endpointFor(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") {
		return base + "/messages"
	}
	return base + "/v1/messages"
}

// CloseIdleConnections closes the idle connections of the Provider's HTTP
// client.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }

// Stream starts one model call. A failure before the response body (connect,
// HTTP status, cancel) is returned as *provider.Error; a request that cannot
// be encoded (no model, unknown role or effort, invalid tool schema) is a
// plain error.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	body, err := buildRequest(req, p.thinking)
	if err != nil {
		return nil, err
	}
	return mode.Stream(ctx, edge.Route{
		URL: p.endpoint, Header: p.header, Client: p.client,
		Idle: p.idle, MaxEvent: p.maxEvent, MaxOutput: req.MaxOutputBytes, Now: p.now, Scrub: p.scrub,
	}, body)
}
