package responses

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/runtime/internal/provider"
)

// DefaultIdleTimeout is the longest a stream may go without a byte when
// Config.IdleTimeout is zero.
const DefaultIdleTimeout = 60 * time.Second

// DefaultMaxEventBytes bounds one SSE event when Config.MaxEventBytes is
// zero. The terminal response.completed event repeats the whole output
// (every text, every argument string, encrypted reasoning), so it is the
// largest real event; deltas are small.
const DefaultMaxEventBytes = 8 << 20

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
	// prior assistant message's ReasoningSignature is sent back as a
	// reasoning input item, so the model keeps its reasoning across turns
	// without server-side storage.
	IncludeEncryptedReasoning bool
}

// Provider is an OpenAI Responses route. It is safe for concurrent use.
type Provider struct {
	endpoint  string
	apiKey    string
	headers   http.Header
	client    *http.Client
	idle      time.Duration
	maxEvent  int
	now       func() time.Time
	scrub     scrubber
	store     bool
	encrypted bool
}

var _ provider.Provider = (*Provider)(nil)

// New validates cfg, fills its defaults and returns a Provider.
func New(cfg Config) (*Provider, error) {
	var errs []error
	u, err := url.Parse(cfg.BaseURL)
	switch {
	case err != nil:
		errs = append(errs, errors.New("responses: base URL does not parse"))
	case u.Scheme != "http" && u.Scheme != "https":
		errs = append(errs, errors.New("responses: base URL scheme must be http or https"))
	case u.Host == "":
		errs = append(errs, errors.New("responses: base URL has no host"))
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		errs = append(errs, errors.New("responses: base URL must not have userinfo, query or fragment"))
	}
	if !validHeaderValue(cfg.APIKey) {
		errs = append(errs, errors.New("responses: API key contains control characters"))
	}
	headers := make(http.Header, len(cfg.Headers))
	for name, value := range cfg.Headers {
		if !validHeaderName(name) {
			errs = append(errs, fmt.Errorf("responses: header name %q is not a valid token", name))
			continue
		}
		if !validHeaderValue(value) {
			errs = append(errs, fmt.Errorf("responses: header %q value contains control characters", name))
			continue
		}
		headers.Set(name, value)
	}
	if cfg.IdleTimeout < 0 {
		errs = append(errs, errors.New("responses: negative idle timeout"))
	}
	if cfg.MaxEventBytes < 0 {
		errs = append(errs, errors.New("responses: negative max event bytes"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p := &Provider{
		endpoint:  strings.TrimRight(cfg.BaseURL, "/") + "/responses",
		apiKey:    cfg.APIKey,
		headers:   headers,
		client:    cfg.HTTPClient,
		idle:      cfg.IdleTimeout,
		maxEvent:  cfg.MaxEventBytes,
		now:       cfg.Now,
		scrub:     newScrubber(cfg.APIKey, cfg.Headers),
		store:     cfg.Store,
		encrypted: cfg.IncludeEncryptedReasoning,
	}
	if p.client == nil {
		p.client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if p.idle == 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.maxEvent == 0 {
		p.maxEvent = DefaultMaxEventBytes
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// CloseIdleConnections closes the idle connections of the Provider's HTTP
// client.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }

// Stream starts one model call. A failure before the response body (connect,
// HTTP status, cancel) is returned as *provider.Error; a request that cannot
// be encoded (no model, unknown role, invalid tool schema) is a plain error.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	body, err := buildRequest(req, requestOptions{store: p.store, encrypted: p.encrypted})
	if err != nil {
		return nil, err
	}
	// The request context is also canceled by the idle timer and by Close,
	// so a stalled read always ends.
	rctx, cancel := context.WithCancel(ctx)
	var written, connected atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
		// A header written to the connection's buffer may be flushed at
		// any moment after, so the first one counts (CONTRACT §12: only
		// a request with no byte written is a network wait).
		WroteHeaderField: func(string, []string) { written.Store(true) },
		WroteHeaders:     func() { written.Store(true) },
		WroteRequest:     func(httptrace.WroteRequestInfo) { written.Store(true) },
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, trace), http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		// Only a broken endpoint can fail here, and New validated it: a
		// plain error, never a network wait.
		cancel()
		return nil, fmt.Errorf("responses: building the HTTP request: %w", err)
	}
	for name, values := range p.headers {
		hreq.Header[name] = values
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.apiKey)
	}

	resp, err := p.client.Do(hreq)
	if err != nil {
		cancel()
		return nil, p.requestError(ctx, err, written.Load(), connected.Load())
	}
	rb := newIdleBody(resp.Body, p.idle, cancel)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer rb.Close()
		return nil, p.statusError(ctx, resp, rb)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// stream:true answered with a plain JSON body: an error envelope
		// some servers send with 200, or a server that ignores stream.
		defer rb.Close()
		return nil, p.jsonBodyError(ctx, resp, rb)
	}
	return &stream{
		dec:   decodeStream(rb, p.maxEvent),
		body:  rb,
		ctx:   ctx,
		idle:  p.idle,
		scrub: p.scrub,
	}, nil
}

// requestError classifies a failure before any response arrived.
func (p *Provider) requestError(ctx context.Context, err error, written, connected bool) error {
	e := &provider.Error{RequestWritten: written, Err: err, Message: p.scrub.sanitize(err.Error())}
	switch {
	case ctx.Err() != nil:
		e.Kind = provider.FailCanceled
	case !written:
		// No byte of the request left: the provider cannot have seen
		// it (dial, DNS, refused, unreachable, TLS). connected tells the
		// two phases apart in the message only.
		e.Kind = provider.FailConnect
		if connected {
			e.Message = p.scrub.sanitize("request not sent: " + err.Error())
		}
	default:
		// The request may have reached the provider and no answer came.
		e.Kind = provider.FailStreamCut
	}
	return e
}

// statusError builds the error for a non-2xx response.
func (p *Provider) statusError(ctx context.Context, resp *http.Response, body *idleBody) error {
	raw, rerr := io.ReadAll(io.LimitReader(body, maxErrorBody))
	code, msg := parseErrorBody(raw)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e := &provider.Error{
		Kind:           provider.FailHTTPStatus,
		Status:         resp.StatusCode,
		Code:           p.scrub.sanitize(code),
		Message:        p.scrub.sanitize(msg),
		RequestWritten: true,
		RetryAfter:     retryAfter(resp.Header, p.now()),
	}
	if rerr != nil && ctx.Err() != nil {
		e.Kind, e.Err = provider.FailCanceled, rerr
	}
	return e
}

// jsonBodyError handles a 2xx application/json answer to a streaming call.
func (p *Provider) jsonBodyError(ctx context.Context, resp *http.Response, body *idleBody) error {
	raw, rerr := io.ReadAll(io.LimitReader(body, maxErrorBody))
	if rerr != nil && ctx.Err() != nil {
		return &provider.Error{Kind: provider.FailCanceled, Status: resp.StatusCode, Message: "canceled", RequestWritten: true, Err: rerr}
	}
	var env errorEnvelope
	if err := json.Unmarshal(raw, &env, unmarshalOpts); err == nil && env.Error != nil {
		code, msg := envelopeFields(&env)
		return &provider.Error{
			Kind: provider.FailErrorEvent, Status: resp.StatusCode,
			Code: p.scrub.sanitize(code), Message: p.scrub.sanitize(msg), RequestWritten: true,
		}
	}
	return &provider.Error{
		Kind: provider.FailDecode, Status: resp.StatusCode, RequestWritten: true,
		Message: "expected text/event-stream, got application/json",
	}
}

// stream is the provider.Stream of one call.
type stream struct {
	dec    *decoder
	body   *idleBody
	ctx    context.Context
	idle   time.Duration
	scrub  scrubber
	err    error
	closed atomic.Bool // set by Close, which may race with a blocked Next
}

var _ provider.Stream = (*stream)(nil)

// Next advances to the next event.
func (s *stream) Next() bool {
	if s.err != nil {
		return false
	}
	if s.closed.Load() {
		if !s.dec.finished() {
			// Closed by the consumer before the end: not a normal end.
			s.err = &provider.Error{
				Kind: provider.FailCanceled, Message: "stream closed",
				RequestWritten: true, ContentStarted: s.dec.started,
			}
		}
		return false
	}
	if s.dec.Next() {
		return true
	}
	if s.dec.err != nil {
		s.err = s.classify(s.dec.err)
	}
	// Normal end or failure: release the connection now rather than at
	// Close.
	_ = s.Close()
	return false
}

// Event returns the current event.
func (s *stream) Event() provider.StreamEvent { return s.dec.Event() }

// Err returns the failure that ended the stream, nil after a normal end.
func (s *stream) Err() error { return s.err }

// Close releases the response body; it is safe to call more than once.
func (s *stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.body.Close()
}

// classify completes a decoder failure with the facts of this call.
func (s *stream) classify(err error) error {
	e := &provider.Error{RequestWritten: true, ContentStarted: s.dec.started}
	switch {
	case s.body.timedOut():
		e.Kind = provider.FailIdleTimeout
		e.Message = "no stream data for " + s.idle.String()
		e.Err = errIdleTimeout
		return e
	case s.ctx.Err() != nil:
		e.Kind, e.Message, e.Err = provider.FailCanceled, "canceled", s.ctx.Err()
		return e
	case s.closed.Load():
		e.Kind, e.Message, e.Err = provider.FailCanceled, "stream closed", err
		return e
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		e.Kind, e.Code, e.Err = pe.Kind, s.scrub.sanitize(pe.Code), pe.Err
		e.Message = s.scrub.sanitize(pe.Message)
		if e.Message == "" {
			e.Message = string(pe.Kind)
		}
		return e
	}
	// The body broke (reset, unexpected EOF): the stream was cut.
	e.Kind, e.Err = provider.FailStreamCut, err
	e.Message = s.scrub.sanitize("stream read failed: " + err.Error())
	return e
}

// errIdleTimeout is the read error of a body whose idle timer fired.
var errIdleTimeout = errors.New("responses: stream idle timeout")

// idleBody closes a response body that goes IdleTimeout without a byte. The
// timer is reset by every Read that returns data; firing cancels the
// request context and closes the body, which ends a blocked Read. No
// goroutine runs unless the timer fires.
type idleBody struct {
	rc      io.ReadCloser
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	fired   atomic.Bool
	closed  atomic.Bool
}

func newIdleBody(rc io.ReadCloser, timeout time.Duration, cancel context.CancelFunc) *idleBody {
	b := &idleBody{rc: rc, timeout: timeout, cancel: cancel}
	b.timer = time.AfterFunc(timeout, b.expire)
	return b
}

func (b *idleBody) expire() {
	b.fired.Store(true)
	b.cancel()
	b.closeBody()
}

// Read implements io.Reader.
func (b *idleBody) Read(p []byte) (int, error) {
	if b.fired.Load() {
		return 0, errIdleTimeout
	}
	n, err := b.rc.Read(p)
	if b.fired.Load() {
		return n, errIdleTimeout
	}
	if n > 0 {
		b.timer.Reset(b.timeout)
	}
	return n, err
}

// Close stops the timer, closes the body and cancels the request context.
func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.closeBody()
	b.cancel()
	return err
}

func (b *idleBody) closeBody() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.rc.Close()
}

func (b *idleBody) timedOut() bool { return b.fired.Load() }

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 || c <= ' ' || c == 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue rejects control characters other than tab, which would
// split or corrupt the request.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
