package copilot

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Initiator values of X-Initiator.
const (
	InitiatorUser  = "user"  // a call that answers a user's prompt
	InitiatorAgent = "agent" // tool follow-ups and auxiliary calls
)

type initiatorKey struct{}

// WithInitiator marks the model calls made with ctx as initiated by who
// (InitiatorUser or InitiatorAgent), overriding what the body says. An
// auxiliary call (a summary, a sub-run) sets InitiatorAgent.
func WithInitiator(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, initiatorKey{}, who)
}

// InitiatorOf returns the initiator WithInitiator set on ctx, or "".
func InitiatorOf(ctx context.Context) string {
	who, _ := ctx.Value(initiatorKey{}).(string)
	return who
}

// Client returns the HTTP client of Copilot inference: every request gets
// the current session (checked, and exchanged when due, before each one),
// is sent to the session's allowlisted origin with the identity headers,
// X-Request-Id, X-Initiator and, exactly when the body holds an image,
// Copilot-Vision-Request: true. A 401 answer (which comes before any stream
// byte) invalidates the session, exchanges once and sends the request once
// more; a second 401 is handed back. A session that cannot be had is
// answered as a synthetic HTTP error (401 for a login problem, 429 for a
// rate limit, 403 for an origin off the allowlist), so that recovery
// classifies it rather than waiting for the network.
func (p *Provider) Client() *http.Client {
	base := http.DefaultTransport
	if p.HTTPClient != nil && p.HTTPClient.Transport != nil {
		base = p.HTTPClient.Transport
	}
	c := &http.Client{Transport: &transport{p: p, base: base}}
	if p.HTTPClient != nil {
		c.Timeout = p.HTTPClient.Timeout
	}
	return c
}

type transport struct {
	p    *Provider
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	ctx := req.Context()
	vision := HasImage(body)
	who := InitiatorOf(ctx)
	if who != InitiatorUser && who != InitiatorAgent {
		who = InitiatorFromBody(body)
	}
	hs, err := t.p.Host.Headers()
	if err != nil {
		return synthetic(req, http.StatusUnauthorized, "copilot_identity", err.Error()), nil
	}
	for attempt := 0; ; attempt++ {
		s, err := t.p.Session(ctx)
		if err != nil {
			if r := sessionFailure(req, err); r != nil {
				return r, nil
			}
			return nil, err
		}
		out := req.Clone(ctx)
		out.URL.Scheme, out.URL.Host = schemeHost(s.API)
		out.Host = ""
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		setSessionHeaders(out.Header, s, hs)
		out.Header.Set("X-Request-Id", requestID())
		out.Header.Set("X-Initiator", who)
		out.Header.Set("Openai-Intent", "conversation-agent")
		if vision {
			out.Header.Set("Copilot-Vision-Request", "true")
		} else {
			out.Header.Del("Copilot-Vision-Request")
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			t.p.Invalidate(s)
			continue
		}
		return resp, nil
	}
}

func schemeHost(e Endpoint) (string, string) {
	s, h, _ := strings.Cut(e.String(), "://")
	return s, h
}

// sessionFailure turns a session failure into a synthetic answer recovery
// classifies (nil: a transport failure, left to network recovery).
func sessionFailure(req *http.Request, err error) *http.Response {
	var xe *ExchangeError
	if errors.As(err, &xe) {
		switch xe.Reason {
		case ReasonUnreachable:
			return nil
		case ReasonRateLimited:
			r := synthetic(req, http.StatusTooManyRequests, xe.Reason, xe.Error())
			if xe.RetryAfter > 0 {
				r.Header.Set("Retry-After", strconv.Itoa(int((xe.RetryAfter+999_999_999)/1_000_000_000)))
			}
			return r
		case ReasonOriginNotAllowed, ReasonNotEntitled:
			return synthetic(req, http.StatusForbidden, xe.Reason, xe.Error())
		}
		return synthetic(req, http.StatusUnauthorized, xe.Reason, xe.Error())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return synthetic(req, http.StatusUnauthorized, "copilot_login", err.Error())
}

// synthetic is an error answer made by this host (the request never left).
func synthetic(req *http.Request, status int, code, msg string) *http.Response {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: req,
	}
}

func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// HasImage reports whether a Chat Completions or Responses request body
// holds an image anywhere (a user message, a tool result, history): a
// content part of type image_url or input_image.
func HasImage(body []byte) bool {
	if !bytes.Contains(body, []byte(`"image_url"`)) && !bytes.Contains(body, []byte(`"input_image"`)) {
		return false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() != '"' || tok.String() != "type" {
			continue
		}
		// A string "type" at an object's name position is a member name.
		if k, n := dec.StackIndex(dec.StackDepth()); k != '{' || n%2 != 1 {
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if v.Kind() == '"' && (v.String() == "image_url" || v.String() == "input_image") {
			return true
		}
	}
}

// InitiatorFromBody says who initiated a call by its last input item: a
// user message is the user's prompt; anything else (a tool result, an
// assistant turn) is the agent's follow-up.
func InitiatorFromBody(body []byte) string {
	var b struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Input []struct {
			Role string `json:"role"`
			Type string `json:"type"`
		} `json:"input"`
	}
	if json.Unmarshal(body, &b) != nil {
		return InitiatorAgent
	}
	if n := len(b.Messages); n > 0 && b.Messages[n-1].Role == "user" {
		return InitiatorUser
	}
	if n := len(b.Input); n > 0 && b.Input[n-1].Role == "user" && (b.Input[n-1].Type == "" || b.Input[n-1].Type == "message") {
		return InitiatorUser
	}
	return InitiatorAgent
}
