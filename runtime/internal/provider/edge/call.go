package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"

	"octet.dev/host/runtime/internal/nofollow"
	"octet.dev/host/runtime/provider"
)

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// Stream posts body, a request the mode encoded, to the route and returns
// the stream of the answer, decoded by the mode. A failure before the
// response body (connect, HTTP status, cancel, a JSON answer) is returned as
// *provider.Error; only a request that cannot be built is a plain error.
func (m *Mode) Stream(ctx context.Context, r Route, body []byte) (provider.Stream, error) {
	resp, rb, err := m.open(ctx, r, body)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// stream:true answered with a plain JSON body: an error envelope
		// some servers send with 200, or a server that ignores stream.
		defer rb.Close()
		return nil, m.jsonBodyError(ctx, r.Scrub, resp, rb)
	}
	dec := m.Decode(rb, r.MaxEvent)
	limit := r.MaxOutput
	if limit <= 0 {
		limit = provider.OutputLimit(0)
	}
	dec.SetOutputLimit(limit)
	if md, ok := dec.(MediaDecoder); ok {
		md.SetSpoolDir(r.SpoolDir)
	}
	lend, _ := dec.(EventLender)
	return &stream{
		dec:   dec,
		lend:  lend,
		body:  rb,
		ctx:   ctx,
		mode:  m.Name,
		idle:  r.Idle,
		scrub: r.Scrub,
	}, nil
}

// PostJSON posts body to the route like Stream and returns the whole JSON
// answer of a 2xx response, at most maxBytes of it (a call that is not
// streamed: the Responses compaction endpoint). Failures are classified
// as Stream's are; an answer over maxBytes, or one that is not JSON, is a
// FailDecode.
func (m *Mode) PostJSON(ctx context.Context, r Route, body []byte, maxBytes int64) ([]byte, error) {
	resp, rb, err := m.open(ctx, r, body)
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	raw, rerr := io.ReadAll(io.LimitReader(rb, maxBytes+1))
	switch {
	case rerr != nil && ctx.Err() != nil:
		return nil, &provider.Error{Kind: provider.FailCanceled, Status: resp.StatusCode, Message: "canceled", RequestWritten: true, Err: rerr}
	case rerr != nil:
		return nil, &provider.Error{Kind: provider.FailStreamCut, Status: resp.StatusCode, Message: r.Scrub.Sanitize(transportMessage(rerr)), RequestWritten: true, Err: rerr}
	case int64(len(raw)) > maxBytes:
		return nil, &provider.Error{Kind: provider.FailDecode, Status: resp.StatusCode, RequestWritten: true, Message: fmt.Sprintf("the answer is over %d bytes", maxBytes)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, &provider.Error{Kind: provider.FailDecode, Status: resp.StatusCode, RequestWritten: true, Message: "expected application/json, got " + r.Scrub.Sanitize(mt)}
	}
	return raw, nil
}

// open posts body and returns a 2xx response with its idle-bounded body;
// every other outcome is the classified error.
func (m *Mode) open(ctx context.Context, r Route, body []byte) (*http.Response, *idleBody, error) {
	// The request context is also canceled by the idle timer and by Close,
	// so a stalled read always ends.
	rctx, cancel := context.WithCancel(ctx)
	var written, connected atomic.Bool
	// The idle timeout also bounds each stall of the request write and the
	// wait for the response headers once the whole request is written: a
	// server that never reads the request, or reads it and never answers,
	// must not hang the run (the body's own idle timer starts only with
	// the body).
	hw := &headerWatch{idle: r.Idle, cancel: cancel}
	// After an outage, opening the request (dial, TLS handshake) gets only
	// what is left of the max network wait (provider.WithOpenTimeout); the
	// same watch, stopped once the connection is ready.
	var ow *headerWatch
	if d := provider.OpenTimeout(ctx); d > 0 {
		ow = &headerWatch{idle: d, cancel: cancel}
		ow.touch()
	}
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) {
			connected.Store(true)
			if ow != nil {
				ow.stop()
			}
		},
		// A header written to the connection's buffer may be flushed at
		// any moment after, so the first one counts (CONTRACT §12: only
		// a request with no byte written is a network wait).
		WroteHeaderField: func(string, []string) { written.Store(true) },
		WroteHeaders:     func() { written.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			written.Store(true)
			hw.wrote()
		},
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, trace), http.MethodPost, r.URL, nil)
	if err != nil {
		// Only a broken endpoint can fail here, and Route validated it:
		// a plain error, never a network wait.
		cancel()
		return nil, nil, fmt.Errorf("%s: building the HTTP request: %w", m.Name, err)
	}
	hw.setBody(hreq, body)
	for name, values := range r.Header {
		hreq.Header[name] = values
	}

	resp, err := r.Client.Do(hreq)
	if ow != nil && ow.stop() && !written.Load() && ctx.Err() == nil {
		hw.stop()
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		return nil, nil, &provider.Error{Kind: provider.FailConnect,
			Message: "no connection within the " + ow.idle.String() + " left of the max network wait",
			Err:     fmt.Errorf("%s: opening the request: %w", m.Name, provider.ErrOpenTimeout)}
	}
	if hw.stop() && ctx.Err() == nil {
		// The timer fired: whatever Do returned, the answer did not come
		// in time (a response that raced the timer has a canceled body).
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		return nil, nil, hw.timeoutError(m.Name)
	}
	if err != nil {
		cancel()
		return nil, nil, requestError(ctx, r.Scrub, err, written.Load(), connected.Load())
	}
	if nofollow.IsRedirect(resp.StatusCode) {
		// Never followed (Route's client), never read: the Location and a
		// redirect page may carry what the server wants echoed.
		resp.Body.Close()
		cancel()
		return nil, nil, &provider.Error{Kind: provider.FailHTTPStatus, Status: resp.StatusCode, RequestWritten: true,
			Message: nofollow.Refused}
	}
	rb := newIdleBody(resp.Body, r.Idle, cancel)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer rb.Close()
		return nil, nil, m.statusError(ctx, r, resp, rb)
	}
	return resp, rb, nil
}

// requestError classifies a failure before any response arrived.
func requestError(ctx context.Context, scrub Scrubber, err error, written, connected bool) error {
	e := &provider.Error{RequestWritten: written, Err: err, Message: scrub.Sanitize(transportMessage(err))}
	switch {
	case ctx.Err() != nil:
		e.Kind = provider.FailCanceled
	case !written:
		// No byte of the request left: the provider cannot have seen
		// it (dial, DNS, refused, unreachable, TLS). connected tells the
		// two phases apart in the message only.
		e.Kind = provider.FailConnect
		if connected {
			e.Message = scrub.Sanitize("request not sent: " + transportMessage(err))
		}
	default:
		// The request may have reached the provider and no answer came.
		e.Kind = provider.FailStreamCut
	}
	return e
}

// transportMessage is err's text with the endpoint cut to its origin. The
// *url.Error of net/http names the whole request URL, and an inline
// base_url's path may carry a secret (some gateways put a token there);
// scheme and host say where the call went.
func transportMessage(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err.Error()
	}
	where := "the provider"
	if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
		where = u.Scheme + "://" + u.Host
	}
	return ue.Op + " " + where + ": " + ue.Err.Error()
}

// statusError builds the error for a non-2xx response.
func (m *Mode) statusError(ctx context.Context, r Route, resp *http.Response, body io.Reader) error {
	raw, rerr := io.ReadAll(io.LimitReader(body, maxErrorBody))
	code, msg := parseErrorBody(raw, m.ErrorFields)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e := &provider.Error{
		Kind:           provider.FailHTTPStatus,
		Status:         resp.StatusCode,
		Code:           r.Scrub.Sanitize(code),
		Message:        r.Scrub.Sanitize(msg),
		RequestWritten: true,
		RetryAfter:     RetryAfter(resp.Header, r.Now()),
	}
	if rerr != nil && ctx.Err() != nil {
		e.Kind, e.Err = provider.FailCanceled, rerr
	}
	return e
}

// jsonBodyError handles a 2xx application/json answer to a streaming call.
func (m *Mode) jsonBodyError(ctx context.Context, scrub Scrubber, resp *http.Response, body io.Reader) error {
	raw, rerr := io.ReadAll(io.LimitReader(body, maxErrorBody))
	if rerr != nil && ctx.Err() != nil {
		return &provider.Error{Kind: provider.FailCanceled, Status: resp.StatusCode, Message: "canceled", RequestWritten: true, Err: rerr}
	}
	if code, msg, ok := parseErrorEnvelope(raw, m.ErrorFields); ok {
		return &provider.Error{
			Kind: provider.FailErrorEvent, Status: resp.StatusCode,
			Code: scrub.Sanitize(code), Message: scrub.Sanitize(msg), RequestWritten: true,
		}
	}
	return &provider.Error{
		Kind: provider.FailDecode, Status: resp.StatusCode, RequestWritten: true,
		Message: "expected text/event-stream, got application/json",
	}
}
