package responses

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// DefaultIdleTimeout is the longest a stream may go without a byte when
// Config.IdleTimeout is zero.
const DefaultIdleTimeout = edge.DefaultIdleTimeout

// DefaultMaxEventBytes bounds one SSE event when Config.MaxEventBytes is
// zero. The terminal response.completed event repeats the whole output
// (every text, every argument string, encrypted reasoning), so it is the
// largest real event; deltas are small.
const DefaultMaxEventBytes = edge.DefaultMaxEventBytes

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root including its version, e.g.
	// "https://api.openai.com/v1"; requests go to BaseURL + "/responses"
	// (CONTRACT §8). It must be absolute http(s) with a host and no
	// userinfo, query or fragment.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; none when empty.
	APIKey string
	// Headers are extra request headers (custom_headers). The run validator
	// applies CONTRACT §8's header rules; this package checks syntax only.
	// Content-Type, Accept and (with an APIKey) Authorization are set after
	// them and win.
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
	// Store is sent as the request's "store" field. False (the default)
	// asks the provider not to keep the response. Requests never refer to
	// stored responses or items: each one carries the whole conversation.
	Store bool
	// IncludeEncryptedReasoning asks for "reasoning.encrypted_content":
	// reasoning items then come back with an opaque encrypted copy of the
	// model's reasoning (reported as an EventReasoning Signature), and a
	// prior assistant message's signed ReasoningBlocks go back as
	// reasoning input items, so the model keeps its reasoning across turns
	// without server-side storage.
	IncludeEncryptedReasoning bool
	// ImageGeneration offers the model the hosted image_generation tool
	// (a route whose model declares "image" among its output
	// modalities): the images it generates are decoded into spool files
	// and reported as EventMedia (media.go).
	ImageGeneration bool
	// Transport is how calls travel: "" or TransportHTTP for a streaming
	// POST answered with server-sent events, TransportWebSocket for
	// response.create messages on a WebSocket to the same endpoint (ws://
	// or wss://, websocket.go), with HTTP as the fallback when the server
	// refuses the handshake.
	Transport string
	// SocketIdleTTL is how long an unused WebSocket stays open; zero means
	// DefaultSocketIdleTTL.
	SocketIdleTTL time.Duration
	// ConnectionLimit is the age past which a WebSocket is not reused;
	// zero means DefaultConnectionLimit.
	ConnectionLimit time.Duration
}

// Provider is an OpenAI Responses route. It is safe for concurrent use.
// It keeps the route's settings, which it hands to the edge as an
// edge.Route on every call.
type Provider struct {
	endpoint  string
	header    http.Header
	client    *http.Client
	idle      time.Duration
	maxEvent  int
	now       func() time.Time
	scrub     edge.Scrubber
	store     bool
	encrypted bool
	images    bool // Config.ImageGeneration

	// The WebSocket transport; ws is nil over HTTP.
	ws         *sockets
	wsEndpoint string
	socketTTL  time.Duration
	connLimit  time.Duration
}

var _ provider.Provider = (*Provider)(nil)

// mode is the Responses wire mode as the edge serves it.
var mode = &edge.Mode{
	Name:        "responses",
	Endpoint:    func(base string) string { return strings.TrimRight(base, "/") + "/responses" },
	KeyHeader:   "Authorization",
	KeyPrefix:   "Bearer ",
	ErrorFields: edge.OpenAIErrorFields,
	Decode:      func(body io.Reader, maxEventBytes int) edge.Decoder { return decodeStream(body, maxEventBytes) },
}

// New validates cfg, fills its defaults and returns a Provider.
func New(cfg Config) (*Provider, error) {
	r, errs := mode.Route(edge.Config{
		BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Headers: cfg.Headers, HTTPClient: cfg.HTTPClient,
		IdleTimeout: cfg.IdleTimeout, MaxEventBytes: cfg.MaxEventBytes, Now: cfg.Now,
	})
	switch cfg.Transport {
	case "", TransportHTTP, TransportWebSocket:
	default:
		errs = append(errs, fmt.Errorf("responses: transport %q is not http or websocket", cfg.Transport))
	}
	if cfg.SocketIdleTTL < 0 || cfg.ConnectionLimit < 0 {
		errs = append(errs, errors.New("responses: negative socket idle TTL or connection limit"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p := &Provider{
		endpoint: r.URL, header: r.Header, client: r.Client,
		idle: r.Idle, maxEvent: r.MaxEvent, now: r.Now, scrub: r.Scrub,
		store: cfg.Store, encrypted: cfg.IncludeEncryptedReasoning, images: cfg.ImageGeneration,
	}
	if cfg.Transport == TransportWebSocket {
		p.ws = &sockets{seed: maphash.MakeSeed()}
		p.wsEndpoint = wsURL(r.URL)
		p.socketTTL, p.connLimit = cfg.SocketIdleTTL, cfg.ConnectionLimit
		if p.socketTTL == 0 {
			p.socketTTL = DefaultSocketIdleTTL
		}
		if p.connLimit == 0 {
			p.connLimit = DefaultConnectionLimit
		}
	}
	return p, nil
}

// WebSocket reports whether the Provider's calls go over the WebSocket
// transport: it was configured and no handshake was refused.
func (p *Provider) WebSocket() bool { return p.ws != nil && !p.ws.fallback.Load() }

// CloseIdleConnections closes the idle connections of the Provider's HTTP
// client.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }

// Stream starts one model call. A failure before the response body (connect,
// HTTP status, cancel) is returned as *provider.Error; a request that cannot
// be encoded (no model, unknown role, invalid tool schema) is a plain error.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	if p.WebSocket() {
		s, fallback, err := p.streamWS(ctx, req)
		if !fallback {
			return s, err
		}
	}
	if req.ContinueResponse != "" {
		return nil, cannotContinue(req.ContinueResponse) // only a socket continues (steer.go)
	}
	body, err := buildRequest(req, requestOptions{store: p.store, encrypted: p.encrypted, images: p.images})
	if err != nil {
		return nil, err
	}
	return mode.Stream(ctx, edge.Route{
		URL: p.endpoint, Header: p.header, Client: p.client,
		Idle: p.idle, MaxEvent: p.maxEvent, MaxOutput: req.MaxOutputBytes, SpoolDir: req.SpoolDir, Now: p.now, Scrub: p.scrub,
	}, body)
}

var _ provider.Compactor = (*Provider)(nil)

// maxCompactBytes bounds the answer of the compaction endpoint.
const maxCompactBytes = 64 << 20

// compactRequest is the body of POST /responses/compact: the model, the
// instructions and the whole conversation as input items.
type compactRequest struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
	Input        []any  `json:"input"`
}

// Compact asks the provider's compaction endpoint (POST BaseURL +
// "/responses/compact", always over HTTP) to compact req's conversation,
// and returns its output items verbatim as the replacement history:
// their content, encrypted or not, is never parsed. Failures are
// classified as Stream's are.
func (p *Provider) Compact(ctx context.Context, req provider.Request) (provider.CompactResult, error) {
	var res provider.CompactResult
	body, _, err := buildBody(req, requestOptions{store: p.store, encrypted: p.encrypted})
	if err != nil {
		return res, err
	}
	data, err := json.Marshal(&compactRequest{Model: body.Model, Instructions: body.Instructions, Input: body.Input}, marshalOpts)
	if err != nil {
		return res, err
	}
	raw, err := mode.PostJSON(ctx, edge.Route{
		URL: p.endpoint + "/compact", Header: p.header, Client: p.client,
		Idle: p.idle, MaxEvent: p.maxEvent, Now: p.now, Scrub: p.scrub,
	}, data, maxCompactBytes)
	if err != nil {
		return res, err
	}
	var answer struct {
		Output jsontext.Value `json:"output"`
		Usage  *wireUsage     `json:"usage"`
	}
	if err := json.Unmarshal(raw, &answer, unmarshalOpts); err != nil || answer.Output.Kind() != '[' {
		return res, &provider.Error{Kind: provider.FailDecode, Status: 200, RequestWritten: true,
			Message: "the compaction endpoint's answer has no output array"}
	}
	res.Items = []byte(answer.Output.Clone())
	if answer.Usage != nil {
		res.Usage, res.UsageReported = provider.Reported(answer.Usage.neutral())
	}
	return res, nil
}
