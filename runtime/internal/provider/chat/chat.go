package chat

import (
	"cmp"
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
// zero. Deltas are small; a whole tool call in one delta (Groq) is the
// largest real event.
const DefaultMaxEventBytes = edge.DefaultMaxEventBytes

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root including its version, e.g.
	// "https://api.openai.com/v1"; requests go to BaseURL +
	// "/chat/completions" (CONTRACT §8). It must be absolute http(s) with a
	// host and no userinfo, query or fragment.
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
	// PromptCacheKey sends Request.CacheKey as prompt_cache_key. Set it
	// only for a server known to accept the field (OpenAI's own API): an
	// OpenAI-compatible server may refuse a member it does not know.
	PromptCacheKey bool
	// AudioOutput asks for audio output (a route whose model declares
	// "audio" among its output modalities): each request carries
	// modalities ["text","audio"] and audio {voice, format "pcm16"}, the
	// one format the API streams. The transcript streams as text; the
	// audio is decoded into a spool file and reported as EventMedia.
	AudioOutput bool
	// AudioVoice is the voice of audio output; empty means DefaultVoice.
	AudioVoice string
}

// DefaultVoice is the voice audio output uses when the route names none.
const DefaultVoice = "alloy"

// AudioFormat is the audio output format requested: raw 16-bit
// little-endian PCM, the only format the API streams.
const AudioFormat = "pcm16"

// Provider is a Chat Completions route. It is safe for concurrent use.
// It keeps the route's settings, which it hands to the edge as an
// edge.Route on every call.
type Provider struct {
	endpoint string
	header   http.Header
	client   *http.Client
	idle     time.Duration
	maxEvent int
	now      func() time.Time
	scrub    edge.Scrubber
	cacheKey bool       // Config.PromptCacheKey
	audio    *chatAudio // Config.AudioOutput; nil when off
}

var _ provider.Provider = (*Provider)(nil)

// mode is the Chat Completions wire mode as the edge serves it.
var mode = &edge.Mode{
	Name:        "chat",
	Endpoint:    func(base string) string { return strings.TrimRight(base, "/") + "/chat/completions" },
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
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var audio *chatAudio
	if cfg.AudioOutput {
		audio = &chatAudio{Voice: cmp.Or(cfg.AudioVoice, DefaultVoice), Format: AudioFormat}
	}
	return &Provider{
		endpoint: r.URL, header: r.Header, client: r.Client,
		idle: r.Idle, maxEvent: r.MaxEvent, now: r.Now, scrub: r.Scrub,
		cacheKey: cfg.PromptCacheKey,
		audio:    audio,
	}, nil
}

// CloseIdleConnections closes the idle connections of the Provider's HTTP
// client.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }

// Stream starts one model call. A failure before the response body (connect,
// HTTP status, cancel) is returned as *provider.Error; a request that cannot
// be encoded (no model, unknown role, invalid tool schema) is a plain error.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	if !p.cacheKey {
		req.CacheKey = ""
	}
	body, err := buildRequestAudio(req, p.audio)
	if err != nil {
		return nil, err
	}
	return mode.Stream(ctx, edge.Route{
		URL: p.endpoint, Header: p.header, Client: p.client,
		Idle: p.idle, MaxEvent: p.maxEvent, MaxOutput: req.MaxOutputBytes, SpoolDir: req.SpoolDir, Now: p.now, Scrub: p.scrub,
	}, body)
}
