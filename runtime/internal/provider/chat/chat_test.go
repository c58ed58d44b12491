package chat

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

// captured is what the fake server saw of one request.
type captured struct {
	method, path string
	header       http.Header
	body         []byte
}

// captureHandler records each request and answers with a short stream.
func captureHandler(got chan<- captured) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}
}

func TestRequestBody(t *testing.T) {
	got := make(chan captured, 1)
	srv := edgetest.NewServer(t, captureHandler(got))
	p := testProvider(t, srv, func(c *Config) {
		c.Headers = map[string]string{"X-Custom": "custom-value", "OpenAI-Organization": "org-1"}
	})
	req := provider.Request{
		Model:  "gpt-4o",
		System: "Be brief.",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Text: "Weather in Paris?"},
			{
				Role: provider.RoleAssistant, Text: "Checking.", Reasoning: "private chain", ReasoningBlocks: []provider.ReasoningBlock{{Text: "private chain", Signature: "sig"}},
				ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			},
			{Role: provider.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Text: "18C"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "call_2", Name: "noop"}}},
			{Role: provider.RoleTool, ToolCallID: "call_2", ToolName: "noop", Text: "denied", IsError: true},
			{Role: provider.RoleAssistant, Text: "It is 18C."},
			{Role: provider.RoleUser, Text: "<b>&</b> \"quoted\"\n\xff"},
		},
		Tools: []provider.ToolSpec{
			{Name: "get_weather", Description: "Get weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "noop"},
		},
		MaxOutputTokens: 1024,
		ReasoningEffort: "low",
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := drain(t, s)
	if err != nil || sum.Text != "ok" {
		t.Fatalf("stream: %+v, %v", sum, err)
	}
	c := <-got

	const want = `{"model":"gpt-4o","messages":[` +
		`{"role":"system","content":"Be brief."},` +
		`{"role":"user","content":"Weather in Paris?"},` +
		`{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","content":"18C","tool_call_id":"call_1"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"noop","arguments":"{}"}}]},` +
		`{"role":"tool","content":"denied","tool_call_id":"call_2"},` +
		`{"role":"assistant","content":"It is 18C."},` +
		`{"role":"user","content":"<b>&</b> \"quoted\"\n` + "\uFFFD" + `"}],` +
		`"stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
		`{"type":"function","function":{"name":"noop","parameters":{"type":"object","properties":{}}}}],` +
		`"max_completion_tokens":1024,"reasoning_effort":"low"}`
	var gotJSON, wantJSON any
	if err := json.Unmarshal(c.body, &gotJSON); err != nil {
		t.Fatalf("server got invalid JSON: %v\n%s", err, c.body)
	}
	if err := json.Unmarshal([]byte(want), &wantJSON); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	// Field order is part of the contract of this encoder (deterministic
	// bodies make recorded tests and caches stable).
	if string(c.body) != want {
		t.Errorf("request body bytes:\n got %s\nwant %s", c.body, want)
	}
	if strings.Contains(string(c.body), "private chain") || strings.Contains(string(c.body), "sig") {
		t.Error("reasoning was sent back")
	}

	if c.method != http.MethodPost || c.path != "/v1/chat/completions" {
		t.Errorf("request line = %s %s", c.method, c.path)
	}
	wantHeaders := map[string]string{
		"Authorization":       "Bearer " + testKey,
		"Content-Type":        "application/json",
		"Accept":              "text/event-stream",
		"X-Custom":            "custom-value",
		"Openai-Organization": "org-1",
	}
	for name, v := range wantHeaders {
		if g := c.header.Get(name); g != v {
			t.Errorf("header %s = %q, want %q", name, g, v)
		}
	}
}

func TestRequestBodyMinimal(t *testing.T) {
	got := make(chan captured, 1)
	srv := edgetest.NewServer(t, captureHandler(got))
	p := testProvider(t, srv, func(c *Config) { c.APIKey = "" })
	if _, _, err := streamFrom(t, p); err != nil {
		t.Fatal(err)
	}
	c := <-got
	const want = `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
	if string(c.body) != want {
		t.Errorf("body:\n got %s\nwant %s", c.body, want)
	}
	if v, ok := c.header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", v)
	}
}

// Media payloads: the builder does not sniff, so fake bytes do.
var (
	pngMedia  = provider.Media{Type: provider.MediaImage, MIMEType: "image/png", Format: "png", Data: []byte("\x89PNG\r\n\x1a\nfake")}
	jpegMedia = provider.Media{Type: provider.MediaImage, MIMEType: "image/jpeg", Format: "jpeg", Data: []byte("\xff\xd8\xff\xe0fake")}
	wavMedia  = provider.Media{Type: provider.MediaAudio, MIMEType: "audio/wav", Format: "wav", Data: []byte("RIFF\x24\x00\x00\x00WAVEfake")}
)

func TestBuildRequestMedia(t *testing.T) {
	tests := []struct {
		name string
		msgs []provider.Message
		want string
	}{
		{
			name: "text, then media in order",
			msgs: []provider.Message{{Role: provider.RoleUser, Text: "What is this?", Media: []provider.Media{pngMedia, wavMedia, jpegMedia}}},
			want: `{"model":"m","messages":[{"role":"user","content":[` +
				`{"type":"text","text":"What is this?"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgpmYWtl"}},` +
				`{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZmFrZQ==","format":"wav"}},` +
				`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4GZha2U="}}]}],` +
				`"stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "media without text",
			msgs: []provider.Message{{Role: provider.RoleUser, Media: []provider.Media{pngMedia}}},
			want: `{"model":"m","messages":[{"role":"user","content":[` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgpmYWtl"}}]}],` +
				`"stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "only the message with media takes the array form",
			msgs: []provider.Message{
				{Role: provider.RoleUser, Text: "a"},
				{Role: provider.RoleAssistant, Text: "b"},
				{Role: provider.RoleUser, Text: "c", Media: []provider.Media{wavMedia}},
			},
			want: `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},` +
				`{"role":"user","content":[{"type":"text","text":"c"},` +
				`{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZmFrZQ==","format":"wav"}}]}],` +
				`"stream":true,"stream_options":{"include_usage":true}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildRequest(provider.Request{Model: "m", Messages: tc.msgs})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("body:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestBuildRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  provider.Request
	}{
		{"no model", provider.Request{Messages: simpleRequest.Messages}},
		{"unknown role", provider.Request{Model: "m", Messages: []provider.Message{{Role: "system", Text: "x"}}}},
		{"bad schema", provider.Request{Model: "m", Tools: []provider.ToolSpec{{Name: "t", Parameters: []byte(`{"type":`)}}}},
		{"unknown media type", provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Text: "x", Media: []provider.Media{{Type: "video"}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := buildRequest(tc.req); err == nil {
				t.Error("buildRequest succeeded")
			}
		})
	}
}

// errorOpts compares provider errors on their facts, not the wrapped error.
var errorOpts = cmpopts.IgnoreFields(provider.Error{}, "Err")

func TestHTTPErrors(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fixture := func(name string) string {
		return string(edgetest.ReadFixture(t, filepath.Join("testdata", "openai-chat", "errors"), name))
	}
	tests := []providertest.HTTPError{
		{
			Name: "400 unsupported parameter fixture", Status: 400, Body: fixture("vercel_400-unsupported-parameter.json"),
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "unsupported_parameter", RequestWritten: true,
				Message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."},
		},
		{
			Name: "400 unknown parameter fixture", Status: 400, Body: fixture("vercel_400-unknown-parameter.json"),
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "unknown_parameter", RequestWritten: true,
				Message: "Unknown parameter: 'response_format'."},
		},
		{
			Name: "429 Retry-After seconds", Status: 429, Headers: map[string]string{"Retry-After": "7"},
			Body: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 429, Code: "rate_limit_exceeded", RequestWritten: true,
				Message: "Rate limit reached", RetryAfter: 7 * time.Second},
		},
		{
			Name: "429 Retry-After in the past", Status: 429, Headers: map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)},
			Body: `{"error":{"message":"later","type":"requests"}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 429, Code: "requests", RequestWritten: true, Message: "later"},
		},
		{
			Name: "500 envelope", Status: 500,
			Body: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 500, Code: "server_error", RequestWritten: true,
				Message: "The server had an error while processing your request. Sorry about that!"},
		},
		{
			Name: "top-level envelope with numeric code", Status: 400,
			Body: `{"object":"error","message":"bad input","type":"BadRequestError","param":null,"code":400}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "400", RequestWritten: true, Message: "bad input"},
		},
		{
			Name: "array envelope", Status: 400,
			Body: `[{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}]`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "400", RequestWritten: true, Message: "Invalid JSON payload"},
		},
		{
			Name: "string error", Status: 404, Body: `{"error":"model not found"}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 404, RequestWritten: true, Message: "model not found"},
		},
	}
	tests = append(tests, providertest.CommonHTTPErrors(now, func(code, msg string) string {
		return `{"error":{"message":"` + msg + `","type":"` + code + `","code":null}}`
	})...)
	providertest.CheckHTTPErrors(t, suite, tests, func(t *testing.T, h http.HandlerFunc) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) { c.Now = func() time.Time { return now } })
	})
}

// TestKeyNeverInErrors: a server that echoes the key (whole or masked the
// way OpenAI does) must not get it into an error (CONTRACT §11).
func TestKeyNeverInErrors(t *testing.T) {
	echo, masked := suite.KeyEcho("Incorrect API key provided", 6)
	echo += " Bearer " + testKey
	sse, js := "text/event-stream", "application/json"
	bodies := map[string]http.HandlerFunc{
		"401 envelope":     providertest.Answer(401, "", `{"error":{"message":"`+echo+`","type":"invalid_request_error","code":"invalid_api_key"}}`),
		"401 plain":        providertest.Answer(401, "", echo),
		"mid-stream error": providertest.Answer(200, sse, `data: {"error":{"message":"`+echo+`","code":"`+testKey+`"}}`+"\n\n"),
		"200 JSON error":   providertest.Answer(200, js, `{"error":{"message":"`+echo+`"}}`),
	}
	providertest.CheckKeyNeverInErrors(t, suite, masked, "Incorrect API key provided", bodies, func(t *testing.T, h http.HandlerFunc) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) {
			c.Headers = map[string]string{"api-key": providertest.HeaderSecret}
		})
	})
}

const oneTextChunk = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"

func TestStreamFailures(t *testing.T) {
	tests := []providertest.StreamFailure{
		{
			Name:     "cut after content",
			Handler:  edgetest.SSEHandler([]byte(oneTextChunk + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n")),
			WantText: "Hello",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before [DONE]"},
		},
		{
			Name:    "empty body",
			Handler: edgetest.SSEHandler(nil),
			Want:    provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, Message: "stream ended before [DONE]"},
		},
		{
			Name:     "cut inside an event",
			Handler:  edgetest.SSEHandler([]byte(oneTextChunk + `data: {"choices":[{"index":0,"delta":{"content":"lo"}}]}`)),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before [DONE]"},
		},
		{
			Name:     "mid-stream error chunk",
			Handler:  edgetest.SSEHandler([]byte(oneTextChunk + `data: {"error":{"message":"The server is overloaded","type":"server_error","code":"overloaded"}}` + "\n\n")),
			WantText: "Hel",
			Want: provider.Error{Kind: provider.FailErrorEvent, Code: "overloaded", RequestWritten: true, ContentStarted: true,
				Message: "The server is overloaded"},
		},
		{
			Name:    "mid-stream error chunk, type only",
			Handler: edgetest.SSEHandler([]byte(`data: {"error":{"message":"Internal error","type":"internal_error","code":null}}` + "\n\n")),
			Want:    provider.Error{Kind: provider.FailErrorEvent, Code: "internal_error", RequestWritten: true, Message: "Internal error"},
		},
		{
			Name:    "error event type",
			Handler: edgetest.SSEHandler([]byte("event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"overloaded_error\"}}\n\n")),
			Want:    provider.Error{Kind: provider.FailErrorEvent, Code: "overloaded_error", RequestWritten: true, Message: "overloaded"},
		},
		{
			Name:     "invalid JSON",
			Handler:  edgetest.SSEHandler([]byte(oneTextChunk + "data: {\"choices\":[\n\n")),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailDecode, RequestWritten: true, ContentStarted: true, Message: "invalid chunk JSON"},
		},
	}
	tests = append(tests, providertest.TransportFailures(oneTextChunk, `{"error":{"message":"Overloaded","type":"server_error","code":"overloaded_error"}}`, `{"choices":[{"message":{"content":"hi"}}]}`)...)
	providertest.CheckStreamFailures(t, suite, tests, func(t *testing.T, h http.HandlerFunc, idle time.Duration) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) { c.IdleTimeout = idle })
	})
}

func TestConnectionRefused(t *testing.T) {
	providertest.CheckConnectionRefused(t, suite, func(addr string) (provider.Provider, error) {
		return New(Config{BaseURL: "http://" + addr + "/v1", APIKey: testKey, HTTPClient: edgetest.Client(t)})
	})
}

// TestDNSFailure resolves nothing: the dialer reports a DNS error, as the
// system resolver does for an unknown host, without any network traffic.
// It is a pre-send outage: FailConnect with RequestWritten false.
func TestDNSFailure(t *testing.T) {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: "provider.invalid", IsNotFound: true}}
	}}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := New(Config{BaseURL: "http://provider.invalid/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), simpleRequest)
	pe := edgetest.AsProviderError(t, err)
	var dns *net.DNSError
	if pe.Kind != provider.FailConnect || pe.RequestWritten || !errors.As(err, &dns) {
		t.Errorf("got %+v, want FailConnect with RequestWritten false wrapping the DNS error", pe)
	}
}

func TestCancel(t *testing.T) {
	edgetest.CheckCancel(t, func(t *testing.T, ctx context.Context, h http.HandlerFunc) (provider.Stream, error) {
		return testProvider(t, edgetest.NewServer(t, h), nil).Stream(ctx, simpleRequest)
	}, oneTextChunk, false)
}

func TestNew(t *testing.T) {
	providertest.CheckNewRefuses(t, "https://host/v1", func(b providertest.BadConfig) error {
		_, err := New(Config{BaseURL: b.BaseURL, APIKey: b.APIKey, Headers: b.Headers, IdleTimeout: b.IdleTimeout, MaxEventBytes: b.MaxEventBytes})
		return err
	})
	p, err := New(Config{BaseURL: "https://api.example.com/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.CloseIdleConnections()
	if p.endpoint != "https://api.example.com/v1/chat/completions" || p.idle != DefaultIdleTimeout ||
		p.maxEvent != DefaultMaxEventBytes || p.now == nil || p.client == nil {
		t.Errorf("defaults not filled: %+v", p)
	}
}

func TestRetryAfter(t *testing.T) {
	edgetest.CheckRetryAfter(t)
}

func TestSanitize(t *testing.T) {
	edgetest.CheckSanitize(t, "sk-abcdefghijklmnop", "sk-abc**********mnop", "Api-Key", "azure-secret-key")
}
