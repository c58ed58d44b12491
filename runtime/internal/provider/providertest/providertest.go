package providertest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// Summary is what a consumer ends up with after a whole stream.
type Summary = edgetest.Summary

// ErrorOpts compares provider errors without the wrapped cause.
var ErrorOpts = cmpopts.IgnoreFields(provider.Error{}, "Err")

// Suite is what a wire suite's checks need of it.
type Suite struct {
	// Key is the API key the suite's providers are configured with.
	Key string
	// Request is the request the checks send.
	Request provider.Request
	// Check is the suite's own rule for every event Drain reads (nil:
	// none beyond edgetest.Drain's).
	Check func(testing.TB, provider.StreamEvent)
}

// Drain reads a stream to its end, checking the ordering rules every stream
// must keep (nothing after EventFinish, usage before finish, a finish
// exactly when Err is nil) and the suite's own.
func (s Suite) Drain(t testing.TB, st provider.Stream) (Summary, []provider.StreamEvent, error) {
	t.Helper()
	return edgetest.Drain(t, st, s.Check)
}

// StreamFrom streams the suite's request through p and drains it; a
// failure to start fails t.
func (s Suite) StreamFrom(t testing.TB, p provider.Provider) (Summary, []provider.StreamEvent, error) {
	t.Helper()
	st, err := p.Stream(context.Background(), s.Request)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return s.Drain(t, st)
}

// Outcome streams the suite's request through p and returns what the
// consumer got: the error of Stream, or the drained stream's.
func (s Suite) Outcome(t testing.TB, p provider.Provider) (Summary, error) {
	t.Helper()
	st, err := p.Stream(context.Background(), s.Request)
	if err != nil {
		return Summary{}, err
	}
	sum, _, err := s.Drain(t, st)
	return sum, err
}

// DrainDecoder runs a bare wire decoder over its input and drains it.
func (s Suite) DrainDecoder(t testing.TB, d edge.Decoder) (Summary, []provider.StreamEvent, error) {
	t.Helper()
	return s.Drain(t, DecoderStream(d))
}

// DecoderStream adapts a bare decoder to provider.Stream (Close does
// nothing).
func DecoderStream(d edge.Decoder) provider.Stream { return decoderStream{d} }

type decoderStream struct{ edge.Decoder }

func (decoderStream) Close() error { return nil }

// New builds a provider with newProvider from cfg changed by mod (when
// set), failing t on error.
func New[C, P any](t testing.TB, newProvider func(C) (P, error), cfg C, mod func(*C)) P {
	t.Helper()
	if mod != nil {
		mod(&cfg)
	}
	p, err := newProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Usage is the neutral usage of the OpenAI wires' figures.
func Usage(in, out, total, cached, reasoning int64) *provider.Usage {
	return &provider.Usage{InputTokens: in, OutputTokens: out, TotalTokens: total, CacheReadTokens: cached, ReasoningTokens: reasoning}
}

// EventOrder is the exact event sequence a fixture decodes to. (This and
// the other case types are aliases of struct literal types, so that the
// suites' tables may stay positional.)
type EventOrder = struct {
	File string
	Want []provider.StreamEvent
}

// CheckEventOrder decodes each case's fixture with decode and compares
// the events.
func CheckEventOrder(t *testing.T, cases []EventOrder, decode func(t *testing.T, file string) (Summary, []provider.StreamEvent, error)) {
	for _, tc := range cases {
		t.Run(tc.File, func(t *testing.T) {
			_, got, err := decode(t, tc.File)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.Want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// HTTPError is a server answering the request with an error status.
type HTTPError = struct {
	Name    string
	Status  int
	Headers map[string]string
	Body    string
	Want    provider.Error
}

// CommonHTTPErrors are the error answers every wire reads alike, given
// the time the provider's clock says (for an HTTP-date Retry-After) and
// the wire's error envelope for a code and a message: Retry-After as an
// HTTP date, retry-after-ms over Retry-After, a plain-text 503, an empty
// 502 and a long message cut to edge.MaxMessage bytes.
func CommonHTTPErrors(now time.Time, envelope func(code, message string) string) []HTTPError {
	status := func(code int, errCode, msg string, retry time.Duration) provider.Error {
		return provider.Error{Kind: provider.FailHTTPStatus, Status: code, Code: errCode, RequestWritten: true, Message: msg, RetryAfter: retry}
	}
	return []HTTPError{
		{
			Name: "429 Retry-After HTTP-date", Status: 429, Headers: map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)},
			Body: envelope("rate_limit_error", "slow down"),
			Want: status(429, "rate_limit_error", "slow down", 30*time.Second),
		},
		{
			Name: "429 retry-after-ms wins", Status: 429, Headers: map[string]string{"retry-after-ms": "1500", "Retry-After": "9"},
			Body: envelope("rate_limit_error", "later"),
			Want: status(429, "rate_limit_error", "later", 1500*time.Millisecond),
		},
		{
			Name: "503 plain text", Status: 503, Headers: map[string]string{"Retry-After": "2"},
			Body: "upstream connect error\r\nor disconnect\x00",
			Want: status(503, "", "upstream connect error  or disconnect", 2*time.Second),
		},
		{
			Name: "502 empty body", Status: 502,
			Want: status(502, "", "Bad Gateway", 0),
		},
		{
			Name: "long message bounded", Status: 400,
			Body: envelope("invalid_request_error", strings.Repeat("é", 600)),
			Want: status(400, "invalid_request_error", strings.Repeat("é", 254)+"…", 0),
		},
	}
}

// CheckHTTPErrors serves each case as a JSON body with its status and
// headers to a provider from open: Stream must return no stream and
// exactly the case's error, its message bounded.
func CheckHTTPErrors(t *testing.T, s Suite, cases []HTTPError, open func(t *testing.T, h http.HandlerFunc) provider.Provider) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			p := open(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.Headers {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.Status)
				_, _ = io.WriteString(w, tc.Body)
			})
			st, err := p.Stream(context.Background(), s.Request)
			if st != nil {
				t.Fatal("Stream returned a stream for an error status")
			}
			pe := edgetest.AsProviderError(t, err)
			if diff := cmp.Diff(&tc.Want, pe, ErrorOpts); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(pe.Message) > edge.MaxMessage {
				t.Errorf("message is %d bytes", len(pe.Message))
			}
		})
	}
}

// StreamFailure is a server failing the stream, and what the consumer
// must get.
type StreamFailure = struct {
	Name     string
	Handler  http.HandlerFunc
	Idle     time.Duration // the provider's idle timeout (0: its default)
	WantText string
	Want     provider.Error // an empty Message is not compared
}

// overloaded is the error code of TransportFailures' error body: a
// provider's error type, not a protocol code.
const overloaded = "overloaded_error"

// TransportFailures are the stream failures every wire meets alike: the
// stream stalls after its first text or before any byte, the server
// answers 200 with a JSON error body or with a whole answer that is not a
// stream, and the connection drops after the request. hel is the wire's
// first event whose text is "Hel"; errorBody is the wire's error envelope
// for code overloaded_error and message "Overloaded"; answer is a
// non-streamed answer of the wire.
func TransportFailures(hel, errorBody, answer string) []StreamFailure {
	jsonAnswer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = io.WriteString(w, body)
		}
	}
	return []StreamFailure{
		{
			Name:     "idle after content",
			Handler:  edgetest.StallAfter(hel),
			Idle:     100 * time.Millisecond,
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailIdleTimeout, RequestWritten: true, ContentStarted: true, Message: "no stream data for 100ms"},
		},
		{
			Name:    "idle before any byte",
			Handler: edgetest.StallAfter(""),
			Idle:    100 * time.Millisecond,
			Want:    provider.Error{Kind: provider.FailIdleTimeout, RequestWritten: true, Message: "no stream data for 100ms"},
		},
		{
			Name:    "200 JSON error body",
			Handler: jsonAnswer(errorBody),
			Want:    provider.Error{Kind: provider.FailErrorEvent, Status: 200, Code: overloaded, RequestWritten: true, Message: "Overloaded"},
		},
		{
			Name:    "200 JSON answer",
			Handler: jsonAnswer(answer),
			Want:    provider.Error{Kind: provider.FailDecode, Status: 200, RequestWritten: true, Message: "expected text/event-stream, got application/json"},
		},
		{
			Name: "connection dropped after the request",
			Handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			},
			Want: provider.Error{Kind: provider.FailStreamCut, RequestWritten: true},
		},
	}
}

// CheckStreamFailures runs each case against a provider from open (given
// the case's idle timeout): the text received before the failure and the
// failure must be the case's.
func CheckStreamFailures(t *testing.T, s Suite, cases []StreamFailure, open func(t *testing.T, h http.HandlerFunc, idle time.Duration) provider.Provider) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			sum, err := s.Outcome(t, open(t, tc.Handler, tc.Idle))
			if sum.Text != tc.WantText {
				t.Errorf("text = %q, want %q", sum.Text, tc.WantText)
			}
			pe := edgetest.AsProviderError(t, err)
			opts := []cmp.Option{ErrorOpts}
			if tc.Want.Message == "" {
				opts = append(opts, cmpopts.IgnoreFields(provider.Error{}, "Message"))
			}
			if diff := cmp.Diff(&tc.Want, pe, opts...); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// HeaderSecret is the value of the custom header CheckKeyNeverInErrors's
// providers must be configured with.
const HeaderSecret = "header-secret-value"

// KeyEcho is what a server that echoes secrets says: useful (the part of
// the message that must survive), s.Key whole, the key masked as the
// provider masks it (the first keep characters, 20 stars, the last four)
// and HeaderSecret. It returns the masked form too, for
// CheckKeyNeverInErrors.
func (s Suite) KeyEcho(useful string, keep int) (echo, masked string) {
	masked = s.Key[:keep] + strings.Repeat("*", 20) + s.Key[len(s.Key)-4:]
	return useful + ": " + s.Key + " (also " + masked + "). Header secret: " + HeaderSecret + ".", masked
}

// Answer is a handler that answers with status and body, and with
// contentType unless it is "".
func Answer(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// CheckKeyNeverInErrors serves each body (servers echoing the key, whole
// or masked, and HeaderSecret) to a provider from open, configured with
// s.Key and a header carrying HeaderSecret: the error must contain none of
// them, yet keep the message's useful part (useful) (CONTRACT §11).
func CheckKeyNeverInErrors(t *testing.T, s Suite, masked, useful string, bodies map[string]http.HandlerFunc, open func(t *testing.T, h http.HandlerFunc) provider.Provider) {
	for name, h := range bodies {
		t.Run(name, func(t *testing.T) {
			_, err := s.Outcome(t, open(t, h))
			if err == nil {
				t.Fatal("no error")
			}
			pe := edgetest.AsProviderError(t, err)
			for _, text := range []string{err.Error(), pe.Message, pe.Code} {
				for _, secret := range []string{s.Key, s.Key[len(s.Key)-8:], masked[len(masked)-4:], HeaderSecret} {
					if strings.Contains(text, secret) {
						t.Errorf("error text %q contains %q", text, secret)
					}
				}
			}
			if !strings.Contains(pe.Message, useful) {
				t.Errorf("message lost its useful part: %q", pe.Message)
			}
		})
	}
}

// BadConfig is a route setting that every wire's New must refuse, in the
// fields the wires' Configs share.
type BadConfig struct {
	BaseURL       string
	APIKey        string
	Headers       map[string]string
	IdleTimeout   time.Duration
	MaxEventBytes int
}

// CheckNewRefuses gives newFrom each setting every wire must refuse (a
// missing, non-HTTP, hostless, credentialed, query- or fragment-bearing base
// URL; a key or header that would split the request; a negative timeout or
// bound), each a variation of the valid base URL base: New must fail, with
// no key in its error.
func CheckNewRefuses(t *testing.T, base string, newFrom func(BadConfig) error) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		t.Fatalf("base %q is not an absolute URL", base)
	}
	withUser := *u
	withUser.User = url.UserPassword("user", "pw")
	bad := []BadConfig{
		{BaseURL: ""},
		{BaseURL: "ftp://" + u.Host + u.Path},
		{BaseURL: "http:///" + strings.TrimPrefix(u.Path, "/")},
		{BaseURL: withUser.String()},
		{BaseURL: base + "?x=1"},
		{BaseURL: base + "#frag"},
		{BaseURL: base, APIKey: "sk\r\nX: y"},
		{BaseURL: base, Headers: map[string]string{"Bad Name": "v"}},
		{BaseURL: base, Headers: map[string]string{"X-Ok": "a\nb"}},
		{BaseURL: base, IdleTimeout: -1},
		{BaseURL: base, MaxEventBytes: -1},
	}
	for _, b := range bad {
		if err := newFrom(b); err == nil {
			t.Errorf("New(%+v) succeeded", b)
		} else if b.APIKey != "" && strings.Contains(err.Error(), b.APIKey) {
			t.Errorf("validation error contains the key: %v", err)
		}
	}
}

// CheckConnectionRefused aims a provider from newAt at a closed port:
// Stream must fail with FailConnect, nothing written, wrapping the
// *net.OpError, without the key.
func CheckConnectionRefused(t *testing.T, s Suite, newAt func(hostport string) (provider.Provider, error)) {
	p, err := newAt(edgetest.RefusedAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stream(context.Background(), s.Request)
	if st != nil {
		t.Fatal("got a stream from a closed port")
	}
	pe := edgetest.AsProviderError(t, err)
	if pe.Kind != provider.FailConnect || pe.RequestWritten || pe.ContentStarted || pe.Status != 0 {
		t.Errorf("got %+v, want FailConnect with RequestWritten false", pe)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("underlying error %v is not a *net.OpError", pe.Err)
	}
	if strings.Contains(err.Error(), s.Key) {
		t.Error("key in error")
	}
}

// CheckToolArrayBytes: the size size reports for the budget is the size of
// the tools member of a real request body (from build), byte for byte.
func CheckToolArrayBytes(t *testing.T, build func(provider.Request) ([]byte, error), size func([]provider.ToolSpec) (int, error)) {
	specs := []provider.ToolSpec{
		{Name: "read", Description: "Read a file <with> \"quotes\" & more", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "noop"},
	}
	req := provider.Request{Model: "m", MaxOutputTokens: 100, Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}, Tools: specs}
	body, err := build(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(body, &got, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	n, err := size(specs)
	if err != nil || n != len(got.Tools) || n == 0 {
		t.Errorf("ToolArrayBytes = %d, %v; the body's tools member is %d bytes: %s", n, err, len(got.Tools), got.Tools)
	}
	if n, err := size(nil); n != 0 || err != nil {
		t.Errorf("no tools: %d, %v", n, err)
	}
	if _, err := size([]provider.ToolSpec{{Name: "bad", Parameters: []byte("{")}}); err == nil {
		t.Error("invalid parameters JSON: no error")
	}
}

// CheckCallIDsUnique: a history with a repeated or malformed tool-call id
// (written before the host assigned ids) is sent by build with unique,
// well-formed ids, each result answering its own call,
// and the caller's history is left alone.
func CheckCallIDsUnique(t *testing.T, build func(provider.Request) ([]byte, error)) {
	req := provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "dup", Name: "ls", Arguments: "{}"}, {ID: "dup", Name: "ls", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "dup", ToolName: "ls", Text: "first"},
		{Role: provider.RoleTool, ToolCallID: "dup", ToolName: "ls", Text: "second"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "bad id/x", Name: "ls", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "bad id/x", ToolName: "ls", Text: "third"},
	}}
	body, err := build(req)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if strings.Count(s, "\"dup\"") != 2 || strings.Contains(s, "bad id") ||
		strings.Count(s, "\"call_h1_1\"") != 2 || strings.Count(s, "\"call_h4_0\"") != 2 {
		t.Errorf("body %s", s)
	}
	if req.Messages[1].ToolCalls[1].ID != "dup" {
		t.Error("the caller's history was modified")
	}
}
