package responses

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies")

// captured is what the fake server saw of one request.
type captured struct {
	method, path string
	header       http.Header
	body         []byte
}

// okStream is a minimal complete answer.
const okStream = "event: response.output_text.delta\n" +
	`data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"ok"}` + "\n\n" +
	"event: response.completed\n" +
	`data: {"type":"response.completed","response":{"status":"completed","usage":null}}` + "\n\n"

// captureHandler records each request and answers with a short stream.
func captureHandler(got chan<- captured) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, okStream)
	}
}

// multiTurn is a conversation with parallel tool calls, an error result, a
// call with no arguments, reasoning with and without encrypted content, and
// text that needs escaping (and one invalid UTF-8 byte).
var multiTurn = provider.Request{
	Model:  "gpt-5",
	System: "Be brief.",
	Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "Weather in Paris and Rome?"},
		{
			Role: provider.RoleAssistant, Text: "Checking both.", Reasoning: "private chain", ReasoningBlocks: []provider.ReasoningBlock{{Text: "private chain", Signature: "enc-1", ID: "rs_1"}},
			ToolCalls: []provider.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome"}`},
			},
		},
		{Role: provider.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Text: "18C"},
		{Role: provider.RoleTool, ToolCallID: "call_2", ToolName: "get_weather", Text: "denied", IsError: true},
		{Role: provider.RoleAssistant, ReasoningBlocks: []provider.ReasoningBlock{{Signature: "enc-2", ID: "rs_2"}}, ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "noop"}}},
		{Role: provider.RoleTool, ToolCallID: "call_3", ToolName: "noop", Text: ""},
		{Role: provider.RoleAssistant, Text: "Paris 18C; Rome unknown.", Reasoning: "no signature"},
		{Role: provider.RoleUser, Text: "<b>&</b> \"quoted\"\n\xff"},
	},
	Tools: []provider.ToolSpec{
		{Name: "get_weather", Description: "Get weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		{Name: "noop"},
	},
	MaxOutputTokens: 1024,
	ReasoningEffort: "low",
}

// checkGolden compares a request body with a golden file, indented for
// review; the byte order of members is part of the comparison.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	v := jsontext.Value(append([]byte(nil), body...))
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	got := string(v) + "\n"
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("request body differs from %s (-want +got):\n%s", path, diff)
	}
}

func TestRequestBody(t *testing.T) {
	tests := []struct {
		golden string
		mod    func(*Config)
	}{
		{"request_multiturn.golden.json", func(c *Config) {
			c.IncludeEncryptedReasoning = true
			c.Headers = map[string]string{"X-Custom": "custom-value", "OpenAI-Organization": "org-1"}
		}},
		// Without include: no reasoning items, no include, and store
		// as configured.
		{"request_multiturn_plain.golden.json", func(c *Config) { c.Store = true }},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			got := make(chan captured, 1)
			srv := edgetest.NewServer(t, captureHandler(got))
			p := testProvider(t, srv, tc.mod)
			s, err := p.Stream(context.Background(), multiTurn)
			if err != nil {
				t.Fatal(err)
			}
			sum, _, err := drain(t, s)
			if err != nil || sum.Text != "ok" || sum.Finish != provider.FinishStop {
				t.Fatalf("stream: %+v, %v", sum, err)
			}
			c := <-got
			checkGolden(t, tc.golden, c.body)
			if strings.Contains(string(c.body), "private chain") || strings.Contains(string(c.body), "no signature") {
				t.Error("reasoning text was sent back")
			}
			if c.method != http.MethodPost || c.path != "/v1/responses" {
				t.Errorf("request line = %s %s", c.method, c.path)
			}
			wantHeaders := map[string]string{
				"Authorization": "Bearer " + testKey,
				"Content-Type":  "application/json",
				"Accept":        "text/event-stream",
			}
			if strings.Contains(tc.golden, "plain") {
				wantHeaders["X-Custom"] = ""
			} else {
				wantHeaders["X-Custom"] = "custom-value"
				wantHeaders["Openai-Organization"] = "org-1"
			}
			for name, v := range wantHeaders {
				if g := c.header.Get(name); g != v {
					t.Errorf("header %s = %q, want %q", name, g, v)
				}
			}
		})
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
	const want = `{"model":"gpt-test","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"store":false,"stream":true}`
	if string(c.body) != want {
		t.Errorf("body:\n got %s\nwant %s", c.body, want)
	}
	if v, ok := c.header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", v)
	}
}

func TestBuildRequest(t *testing.T) {
	tests := []struct {
		name string
		req  provider.Request
		opts requestOptions
		want string
	}{
		{
			name: "no messages",
			req:  provider.Request{Model: "m"},
			want: `{"model":"m","input":[],"store":false,"stream":true}`,
		},
		{
			name: "empty assistant message is kept",
			req:  provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleAssistant}}},
			want: `{"model":"m","input":[{"type":"message","role":"assistant","content":""}],"store":false,"stream":true}`,
		},
		{
			name: "reasoning-only assistant message",
			req:  provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleAssistant, ReasoningBlocks: []provider.ReasoningBlock{{Signature: "enc", ID: "rs_1"}}}}},
			opts: requestOptions{encrypted: true},
			want: `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"}],"include":["reasoning.encrypted_content"],"store":false,"stream":true}`,
		},
		{
			name: "every encrypted reasoning item goes back, in order",
			req: provider.Request{Model: "m", Messages: []provider.Message{{
				Role: provider.RoleAssistant, Text: "t",
				ReasoningBlocks: []provider.ReasoningBlock{{Text: "a", Signature: "enc-1", ID: "rs_1"}, {Text: "b", Signature: "enc-2", ID: "rs_2"}},
			}}},
			opts: requestOptions{encrypted: true},
			want: `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc-1"},{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"enc-2"},` +
				`{"type":"message","role":"assistant","content":"t"}],"include":["reasoning.encrypted_content"],"store":false,"stream":true}`,
		},
		{
			// The API requires the id on a reasoning input item; a server
			// that gave none gets the answer back without its reasoning.
			name: "a reasoning block without an item id is left out",
			req: provider.Request{Model: "m", Messages: []provider.Message{{
				Role: provider.RoleAssistant, Text: "t", ReasoningBlocks: []provider.ReasoningBlock{{Text: "a", Signature: "enc-1"}},
			}}},
			opts: requestOptions{encrypted: true},
			want: `{"model":"m","input":[{"type":"message","role":"assistant","content":"t"}],"include":["reasoning.encrypted_content"],"store":false,"stream":true}`,
		},
		{
			name: "reasoning that followed a function call goes back after it",
			req: provider.Request{Model: "m", Messages: []provider.Message{{
				Role:            provider.RoleAssistant,
				ReasoningBlocks: []provider.ReasoningBlock{{Signature: "enc-1", ID: "rs_1"}, {Signature: "enc-2", ID: "rs_2", AfterToolCalls: 1}},
				ToolCalls:       []provider.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}, {ID: "c2", Name: "f", Arguments: "{}"}},
			}}},
			opts: requestOptions{encrypted: true},
			want: `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc-1"},` +
				`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},` +
				`{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"enc-2"},` +
				`{"type":"function_call","call_id":"c2","name":"f","arguments":"{}"},` +
				// The conversation ends before their results: each call
				// gets its stand-in.
				`{"type":"function_call_output","call_id":"c1","output":"No result: the tool call did not complete."},` +
				`{"type":"function_call_output","call_id":"c2","output":"No result: the tool call did not complete."}],` +
				`"include":["reasoning.encrypted_content"],"store":false,"stream":true}`,
		},
		{
			name: "text, then images in order",
			req: provider.Request{Model: "m", Messages: []provider.Message{
				{Role: provider.RoleUser, Text: "What is this?", Media: []provider.Media{pngMedia, jpegMedia}},
			}},
			want: `{"model":"m","input":[{"role":"user","content":[` +
				`{"type":"input_text","text":"What is this?"},` +
				`{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgpmYWtl","detail":"auto"},` +
				`{"type":"input_image","image_url":"data:image/jpeg;base64,/9j/4GZha2U=","detail":"auto"}]}],` +
				`"store":false,"stream":true}`,
		},
		{
			name: "negative max output tokens are left out",
			req:  provider.Request{Model: "m", MaxOutputTokens: -1},
			want: `{"model":"m","input":[],"store":false,"stream":true}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildRequest(tc.req, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("body:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Media payloads: the builder does not sniff, so fake bytes do.
var (
	pngMedia  = provider.Media{Type: provider.MediaImage, MIMEType: "image/png", Format: "png", Data: []byte("\x89PNG\r\n\x1a\nfake")}
	jpegMedia = provider.Media{Type: provider.MediaImage, MIMEType: "image/jpeg", Format: "jpeg", Data: []byte("\xff\xd8\xff\xe0fake")}
	wavMedia  = provider.Media{Type: provider.MediaAudio, MIMEType: "audio/wav", Format: "wav", Data: []byte("RIFF\x24\x00\x00\x00WAVEfake")}
)

// TestBuildRequestRefusesAudio: the runtime routes audio elsewhere; this
// is the backstop.
func TestBuildRequestRefusesAudio(t *testing.T) {
	req := provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "hi"},
		{Role: provider.RoleAssistant, Text: "yes?"},
		{Role: provider.RoleUser, Text: "listen", Media: []provider.Media{pngMedia, wavMedia}},
	}}
	_, err := buildRequest(req, requestOptions{})
	const want = "responses: message 2 carries audio, which this wire mode does not accept"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
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
			if _, err := buildRequest(tc.req, requestOptions{}); err == nil {
				t.Error("buildRequest succeeded")
			}
		})
	}
}

// errorOpts compares provider errors on their facts, not the wrapped error.
var errorOpts = cmpopts.IgnoreFields(provider.Error{}, "Err")

// errorFixtures are the recorded error bodies TestHTTPErrors serves.
var errorFixtures = []string{
	"vercel_400-unsupported-parameter-temperature.json",
	"vercel_429-insufficient-quota.json",
}

func TestHTTPErrors(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fixture := func(name string) string {
		return string(edgetest.ReadFixture(t, filepath.Join(fixtureDir, "errors"), name))
	}
	tests := []providertest.HTTPError{
		{
			Name: "400 unsupported parameter fixture", Status: 400, Body: fixture(errorFixtures[0]),
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "invalid_request_error", RequestWritten: true,
				Message: "Unsupported parameter: 'temperature' is not supported with this model."},
		},
		{
			Name: "429 insufficient quota fixture", Status: 429, Body: fixture(errorFixtures[1]),
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 429, Code: "insufficient_quota", RequestWritten: true,
				Message: quotaMessage},
		},
		{
			Name: "429 Retry-After seconds", Status: 429, Headers: map[string]string{"Retry-After": "7"},
			Body: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 429, Code: "rate_limit_exceeded", RequestWritten: true,
				Message: "Rate limit reached", RetryAfter: 7 * time.Second},
		},
		{
			Name: "500 envelope", Status: 500,
			Body: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 500, Code: "server_error", RequestWritten: true,
				Message: "The server had an error while processing your request. Sorry about that!"},
		},
		{
			Name: "400 body that is not an envelope", Status: 400, Body: `{"detail":"bad"}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, RequestWritten: true, Message: `{"detail":"bad"}`},
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
		"401 envelope":    providertest.Answer(401, "", `{"error":{"message":"`+echo+`","type":"invalid_request_error","code":"invalid_api_key"}}`),
		"401 plain":       providertest.Answer(401, "", echo),
		"error event":     providertest.Answer(200, sse, "event: error\ndata: "+`{"type":"error","code":"`+testKey+`","message":"`+echo+`"}`+"\n\n"),
		"response.failed": providertest.Answer(200, sse, "data: "+`{"type":"response.failed","response":{"error":{"code":"x","message":"`+echo+`"}}}`+"\n\n"),
		"200 JSON error":  providertest.Answer(200, js, `{"error":{"message":"`+echo+`"}}`),
	}
	providertest.CheckKeyNeverInErrors(t, suite, masked, "Incorrect API key provided", bodies, func(t *testing.T, h http.HandlerFunc) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) {
			c.Headers = map[string]string{"api-key": providertest.HeaderSecret}
		})
	})
}

// ev frames one event the way the API does, event line included.
func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

func textDelta(i int, s string) string {
	return ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":`+itoa(i)+`,"content_index":0,"delta":`+quote(s)+`}`)
}

func itoa(i int) string { return strconv.Itoa(i) }

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var oneTextEvent = textDelta(0, "Hel")

func TestStreamFailures(t *testing.T) {
	callAdded := ev("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}`)
	argsDelta := ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\":"}`)
	tests := []providertest.StreamFailure{
		{
			Name:     "cut after content",
			Handler:  edgetest.SSEHandler([]byte(oneTextEvent + textDelta(0, "lo"))),
			WantText: "Hello",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before response.completed"},
		},
		{
			Name:    "cut inside a function call",
			Handler: edgetest.SSEHandler([]byte(callAdded + argsDelta)),
			Want:    provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before response.completed"},
		},
		{
			Name:    "empty body",
			Handler: edgetest.SSEHandler(nil),
			Want:    provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, Message: "stream ended before response.completed"},
		},
		{
			Name:     "cut inside an event",
			Handler:  edgetest.SSEHandler([]byte(oneTextEvent + `data: {"type":"response.output_text.delta","output_index":0,"delta":"lo"}`)),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before response.completed"},
		},
		{
			Name:     "cut inside the terminal event's JSON",
			Handler:  edgetest.SSEHandler([]byte(oneTextEvent + `data: {"type":"response.completed","response":{"status":"comp`)),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before response.completed"},
		},
		{
			Name:     "[DONE] is not an end",
			Handler:  edgetest.SSEHandler([]byte(oneTextEvent + "data: [DONE]\n\n")),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before response.completed"},
		},
		{
			Name: "response.failed",
			Handler: edgetest.SSEHandler([]byte(oneTextEvent + ev("response.failed",
				`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"usage":null}}`))),
			WantText: "Hel",
			Want: provider.Error{Kind: provider.FailErrorEvent, Code: "server_error", RequestWritten: true, ContentStarted: true,
				Message: "The model failed to generate a response."},
		},
		{
			Name:    "response.failed without an error object",
			Handler: edgetest.SSEHandler([]byte(ev("response.failed", `{"type":"response.failed","response":{"status":"failed","error":null}}`))),
			Want:    provider.Error{Kind: provider.FailErrorEvent, RequestWritten: true, Message: "response failed"},
		},
		{
			Name: "error event, documented top-level shape",
			Handler: edgetest.SSEHandler([]byte(oneTextEvent + ev("error",
				`{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":3}`))),
			WantText: "Hel",
			Want: provider.Error{Kind: provider.FailErrorEvent, Code: "rate_limit_exceeded", RequestWritten: true, ContentStarted: true,
				Message: "Rate limit reached"},
		},
		{
			Name: "error event, nested shape with type only",
			Handler: edgetest.SSEHandler([]byte(ev("error",
				`{"type":"error","error":{"type":"server_error","code":null,"message":"Internal error","param":null}}`))),
			Want: provider.Error{Kind: provider.FailErrorEvent, Code: "server_error", RequestWritten: true, Message: "Internal error"},
		},
		{
			Name:    "error event without JSON type",
			Handler: edgetest.SSEHandler([]byte("event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"overloaded_error\"}}\n\n")),
			Want:    provider.Error{Kind: provider.FailErrorEvent, Code: "overloaded_error", RequestWritten: true, Message: "overloaded"},
		},
		{
			Name:     "invalid JSON",
			Handler:  edgetest.SSEHandler([]byte(oneTextEvent + "data: {\"type\":\n\n")),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailDecode, RequestWritten: true, ContentStarted: true, Message: "invalid event JSON"},
		},
		{
			Name:     "known event of the wrong shape",
			Handler:  edgetest.SSEHandler([]byte(oneTextEvent + `data: {"type":"response.output_text.delta","output_index":0,"delta":{"text":"x"}}` + "\n\n")),
			WantText: "Hel",
			Want: provider.Error{Kind: provider.FailDecode, RequestWritten: true, ContentStarted: true,
				Message: "invalid response.output_text.delta event"},
		},
	}
	tests = append(tests, providertest.TransportFailures(oneTextEvent, `{"error":{"message":"Overloaded","code":"overloaded_error"}}`, `{"object":"response","output":[]}`)...)
	providertest.CheckStreamFailures(t, suite, tests, func(t *testing.T, h http.HandlerFunc, idle time.Duration) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) { c.IdleTimeout = idle })
	})
}

// TestIncomplete: response.incomplete ends the stream normally with the
// usage and a length finish, and a function call whose arguments were cut
// is never emitted.
func TestIncomplete(t *testing.T) {
	incomplete := func(reason string) string {
		return ev("response.incomplete", `{"type":"response.incomplete","response":{"status":"incomplete",`+
			`"incomplete_details":{"reason":"`+reason+`"},`+
			`"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":10},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":8},"total_tokens":46}}}`)
	}
	doneCall := ev("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_ok","name":"whole","arguments":""}}`) +
		ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}`) +
		ev("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{}"}`) +
		ev("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_ok","name":"whole","arguments":"{}","status":"completed"}}`)
	cutCall := ev("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_2","call_id":"call_cut","name":"half","arguments":""}}`) +
		ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"path\":\"/et"}`)
	cutDoneCall := ev("response.output_item.added", `{"type":"response.output_item.added","output_index":3,"item":{"type":"function_call","id":"fc_3","call_id":"call_cut2","name":"half","arguments":""}}`) +
		ev("response.output_item.done", `{"type":"response.output_item.done","output_index":3,"item":{"type":"function_call","id":"fc_3","call_id":"call_cut2","name":"half","arguments":"{\"a\":","status":"incomplete"}}`)
	tests := []struct {
		name string
		body string
		want summary
	}{
		{
			name: "max_output_tokens after text",
			body: oneTextEvent + incomplete("max_output_tokens"),
			want: summary{Text: "Hel", Usage: usage(30, 16, 46, 10, 8), Finish: provider.FinishLength},
		},
		{
			name: "max_output_tokens inside a function call",
			body: textDelta(0, "Let me look.") + doneCall + cutCall + cutDoneCall + incomplete("max_output_tokens"),
			want: summary{
				Text:      "Let me look.",
				ToolCalls: []provider.ToolCall{{ID: "call_ok", Name: "whole", Arguments: "{}"}},
				Usage:     usage(30, 16, 46, 10, 8),
				Finish:    provider.FinishLength,
			},
		},
		{
			name: "content_filter",
			body: oneTextEvent + incomplete("content_filter"),
			want: summary{Text: "Hel", Usage: usage(30, 16, 46, 10, 8), Finish: provider.FinishRefusal},
		},
		{
			name: "other reason",
			body: oneTextEvent + incomplete("something_new"),
			want: summary{Text: "Hel", Usage: usage(30, 16, 46, 10, 8), Finish: provider.FinishOther},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := edgetest.NewServer(t, edgetest.SSEHandler([]byte(tc.body)))
			got, _, err := streamFrom(t, testProvider(t, srv, nil))
			if err != nil {
				t.Fatalf("Err() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	providertest.CheckConnectionRefused(t, suite, func(addr string) (provider.Provider, error) {
		return New(Config{BaseURL: "http://" + addr + "/v1", APIKey: testKey, HTTPClient: edgetest.Client(t)})
	})
}

func TestCancel(t *testing.T) {
	edgetest.CheckCancel(t, func(t *testing.T, ctx context.Context, h http.HandlerFunc) (provider.Stream, error) {
		return testProvider(t, edgetest.NewServer(t, h), nil).Stream(ctx, simpleRequest)
	}, oneTextEvent, true)
}

func TestNew(t *testing.T) {
	providertest.CheckNewRefuses(t, "https://host/v1", func(b providertest.BadConfig) error {
		_, err := New(Config{BaseURL: b.BaseURL, APIKey: b.APIKey, Headers: b.Headers, IdleTimeout: b.IdleTimeout, MaxEventBytes: b.MaxEventBytes})
		return err
	})
	p, err := New(Config{BaseURL: "https://api.example.com/v1/", Store: true, IncludeEncryptedReasoning: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.CloseIdleConnections()
	if p.endpoint != "https://api.example.com/v1/responses" || p.idle != DefaultIdleTimeout ||
		p.maxEvent != DefaultMaxEventBytes || p.now == nil || p.client == nil || !p.store || !p.encrypted {
		t.Errorf("defaults not filled: %+v", p)
	}
}

func TestRetryAfter(t *testing.T) {
	edgetest.CheckRetryAfter(t)
}

func TestSanitize(t *testing.T) {
	edgetest.CheckSanitize(t, "sk-abcdefghijklmnop", "sk-abc**********mnop", "Api-Key", "azure-secret-key")
}
