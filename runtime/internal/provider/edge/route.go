package edge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"octet.dev/host/runtime/internal/customheader"
	"octet.dev/host/runtime/internal/nofollow"
)

// DefaultIdleTimeout is the longest a stream may go without a byte when a
// route sets no idle timeout.
const DefaultIdleTimeout = 60 * time.Second

// DefaultMaxEventBytes bounds one SSE event when a route sets no bound.
// Deltas are small; the largest real events are a whole tool call in one
// delta and the terminal events that repeat the whole output.
const DefaultMaxEventBytes = 8 << 20

// Mode is what a wire mode tells the edge: its name, how it sends the API
// key, how to read its error envelopes and how to decode its streams. A
// mode declares one as a package variable and never changes it.
type Mode struct {
	// Name is the mode's package name. It begins the mode's plain errors
	// ("chat: base URL has no host").
	Name string
	// Endpoint returns the URL calls go to, from a valid base URL.
	Endpoint func(baseURL string) string
	// KeyHeader is the request header that carries the API key, as
	// KeyPrefix followed by the key ("Authorization", "Bearer ").
	KeyHeader, KeyPrefix string
	// BaseHeaders are request headers sent unless the route's custom
	// headers set them too (Anthropic's API version); nil for none.
	BaseHeaders map[string]string
	// ErrorFields reads the mode's error envelopes.
	ErrorFields ErrorFields
	// Decode returns the decoder of a text/event-stream body, with one
	// event bounded to maxEventBytes.
	Decode func(body io.Reader, maxEventBytes int) Decoder
}

// Config is the part of a mode's configuration that every mode has; each
// mode's own Config documents the fields for its users.
type Config struct {
	BaseURL       string
	APIKey        string
	Headers       map[string]string
	HTTPClient    *http.Client
	IdleTimeout   time.Duration
	MaxEventBytes int
	Now           func() time.Time
}

// Route is a checked Config with its defaults filled in: what every call
// of a route needs. It is read-only once built.
type Route struct {
	URL string
	// Header holds every request header: the mode's base headers, the
	// custom headers over them, then Content-Type, Accept and (with an
	// API key) the key header over all.
	Header   http.Header
	Client   *http.Client
	Idle     time.Duration
	MaxEvent int
	// MaxOutput bounds the bytes of text, reasoning and tool-call
	// arguments one response may produce (provider.Request's
	// MaxOutputBytes); zero means provider.OutputLimit(0).
	MaxOutput int
	// SpoolDir is where output media is decoded (provider.Request's
	// SpoolDir), for decoders that are MediaDecoders.
	SpoolDir string
	// Now is the clock for HTTP-date Retry-After values.
	Now   func() time.Time
	Scrub Scrubber
}

// Route checks c and returns its Route. errs lists every problem, each
// starting with the mode's name and none containing the key; the Route is
// complete only when errs is empty. A mode with settings of its own
// appends their problems and joins the list.
func (m *Mode) Route(c Config) (r Route, errs []error) {
	fail := func(msg string) { errs = append(errs, errors.New(m.Name+": "+msg)) }
	u, err := url.Parse(c.BaseURL)
	switch {
	case err != nil:
		fail("base URL does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		fail("base URL scheme must be http or https")
	case u.Host == "":
		fail("base URL has no host")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		fail("base URL must not have userinfo, query or fragment")
	}
	if !customheader.ValidValue(c.APIKey) {
		fail("API key contains control characters")
	}
	header := make(http.Header, len(m.BaseHeaders)+len(c.Headers)+3)
	for name, value := range m.BaseHeaders {
		header.Set(name, value)
	}
	for name, value := range c.Headers {
		if !customheader.ValidName(name) {
			fail(fmt.Sprintf("header name %q is not a valid token", name))
			continue
		}
		if !customheader.ValidValue(value) {
			fail(fmt.Sprintf("header %q value contains control characters", name))
			continue
		}
		header.Set(name, value)
	}
	if c.IdleTimeout < 0 {
		fail("negative idle timeout")
	}
	if c.MaxEventBytes < 0 {
		fail("negative max event bytes")
	}
	if len(errs) > 0 {
		return Route{}, errs
	}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "text/event-stream")
	if c.APIKey != "" {
		header.Set(m.KeyHeader, m.KeyPrefix+c.APIKey)
	}
	r = Route{
		URL:      m.Endpoint(c.BaseURL),
		Header:   header,
		Client:   c.HTTPClient,
		Idle:     c.IdleTimeout,
		MaxEvent: c.MaxEventBytes,
		Now:      c.Now,
		Scrub:    NewScrubber(c.APIKey, c.Headers),
	}
	if r.Client == nil {
		r.Client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	// Whatever client the route got, it never follows a redirect: the
	// headers hold the key and the custom headers (nofollow).
	r.Client = nofollow.Client(r.Client)
	if r.Idle == 0 {
		r.Idle = DefaultIdleTimeout
	}
	if r.MaxEvent == 0 {
		r.MaxEvent = DefaultMaxEventBytes
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}
