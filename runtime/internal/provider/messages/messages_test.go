package messages

import (
	"context"
	"io"
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

// okStream is a minimal complete answer.
const okStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// captureHandler records each request and answers with a short stream.
func captureHandler(got chan<- captured) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, okStream)
	}
}

// sendRequest streams req through p against a capturing server and returns
// what the server saw.
func sendRequest(t *testing.T, req provider.Request, mod func(*Config)) captured {
	t.Helper()
	got := make(chan captured, 1)
	srv := edgetest.NewServer(t, captureHandler(got))
	p := testProvider(t, srv, mod)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := drain(t, s)
	if err != nil || sum.Text != "ok" {
		t.Fatalf("stream: %+v, %v", sum, err)
	}
	return <-got
}

func TestRequestBody(t *testing.T) {
	req := provider.Request{
		Model:  "claude-sonnet-4-5",
		System: "Be brief.",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Text: "Weather in Paris and Rome?"},
			{
				Role: provider.RoleAssistant, Text: "Checking both.",
				Reasoning: "Two cities, two calls.", ReasoningBlocks: []provider.ReasoningBlock{{Text: "Two cities, two calls.", Signature: "EqQBCkYIBxgCKkA="}},
				ToolCalls: []provider.ToolCall{
					{ID: "toolu_01", Name: "get_weather", Arguments: `{"city": "Paris"}`},
					{ID: "toolu_02", Name: "get_weather", Arguments: `{"city": "Rome"`}, // cut: invalid
				},
			},
			{Role: provider.RoleTool, ToolCallID: "toolu_01", ToolName: "get_weather", Text: "18C"},
			{Role: provider.RoleTool, ToolCallID: "toolu_02", ToolName: "get_weather", Text: "invalid arguments", IsError: true},
			{Role: provider.RoleAssistant, Text: "Paris is 18C; Rome failed.", Reasoning: "unsigned reasoning"},
			{Role: provider.RoleUser, Text: "<b>&</b> \"quoted\"\n\xff"},
		},
		Tools: []provider.ToolSpec{
			{Name: "get_weather", Description: "Get weather", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)},
			{Name: "noop"},
		},
		MaxOutputTokens: 16000,
		ReasoningEffort: "medium",
	}
	c := sendRequest(t, req, nil)

	const want = `{"model":"claude-sonnet-4-5","max_tokens":16000,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Weather in Paris and Rome?"}]},` +
		`{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"Two cities, two calls.","signature":"EqQBCkYIBxgCKkA="},` +
		`{"type":"text","text":"Checking both."},` +
		`{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}},` +
		`{"type":"tool_use","id":"toolu_02","name":"get_weather","input":{}}]},` +
		`{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"toolu_01","content":"18C","is_error":false},` +
		`{"type":"tool_result","tool_use_id":"toolu_02","content":"invalid arguments","is_error":true,"cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Paris is 18C; Rome failed."}]},` +
		`{"role":"user","content":[{"type":"text","text":"<b>&</b> \"quoted\"\n` + "\uFFFD" + `","cache_control":{"type":"ephemeral"}}]}],` +
		`"tools":[{"name":"get_weather","description":"Get weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},` +
		`{"name":"noop","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}}],` +
		`"thinking":{"type":"enabled","budget_tokens":8192},"stream":true}`
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
	if strings.Contains(string(c.body), "unsigned reasoning") {
		t.Error("reasoning without a signature was sent back")
	}
}

func TestRequestBodyMinimal(t *testing.T) {
	c := sendRequest(t, simpleRequest, func(c *Config) { c.APIKey = "" })
	const want = `{"model":"claude-test","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],"stream":true}`
	if string(c.body) != want {
		t.Errorf("body:\n got %s\nwant %s", c.body, want)
	}
	for _, h := range []string{"X-Api-Key", "Authorization"} {
		if v, ok := c.header[h]; ok {
			t.Errorf("%s sent without a key: %q", h, v)
		}
	}
}

func TestHeaders(t *testing.T) {
	c := sendRequest(t, simpleRequest, func(c *Config) {
		c.Headers = map[string]string{"anthropic-beta": "interleaved-thinking-2025-05-14", "X-Custom": "v"}
	})
	if c.method != http.MethodPost || c.path != "/v1/messages" {
		t.Errorf("request line = %s %s", c.method, c.path)
	}
	want := map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
		"Content-Type":      "application/json",
		"Accept":            "text/event-stream",
		"X-Custom":          "v",
	}
	for name, v := range want {
		if g := c.header.Values(name); len(g) != 1 || g[0] != v {
			t.Errorf("header %s = %q, want %q", name, g, v)
		}
	}
	if v, ok := c.header["Authorization"]; ok {
		t.Errorf("Authorization sent: %q", v)
	}

	// A custom anthropic-version replaces the default; a custom x-api-key
	// does not replace the key.
	c = sendRequest(t, simpleRequest, func(c *Config) {
		c.Headers = map[string]string{"Anthropic-Version": "2099-01-01", "x-api-key": "other"}
	})
	if g := c.header.Values("Anthropic-Version"); len(g) != 1 || g[0] != "2099-01-01" {
		t.Errorf("anthropic-version = %q, want the custom one", g)
	}
	if g := c.header.Values("X-Api-Key"); len(g) != 1 || g[0] != testKey {
		t.Errorf("x-api-key = %q, want the key", g)
	}
}

func TestEndpointPath(t *testing.T) {
	tests := []struct{ base, path string }{
		{"", "/v1/messages"},
		{"/", "/v1/messages"},
		{"/v1", "/v1/messages"},
		{"/v1/", "/v1/messages"},
		{"/anthropic", "/anthropic/v1/messages"},
		{"/proxy/anthropic/v1", "/proxy/anthropic/v1/messages"},
		{"/v1beta", "/v1beta/v1/messages"},
	}
	for _, tc := range tests {
		t.Run(tc.base, func(t *testing.T) {
			c := sendRequest(t, simpleRequest, func(c *Config) { c.BaseURL += tc.base })
			if c.path != tc.path {
				t.Errorf("base %q: path %q, want %q", tc.base, c.path, tc.path)
			}
		})
	}
	if got := endpointFor("https://api.anthropic.com"); got != "https://api.anthropic.com/v1/messages" {
		t.Errorf("endpointFor = %q", got)
	}
}

func TestThinking(t *testing.T) {
	tests := []struct {
		name     string
		effort   string
		max      int
		cfg      thinkingConfig
		wantMax  int
		thinking string // JSON, "" for none
		output   string // output_config JSON, "" for none
	}{
		{name: "no effort", max: 4000, wantMax: 4000},
		{name: "low, default max", effort: "low", wantMax: 8192, thinking: `{"type":"enabled","budget_tokens":2048}`},
		// The budget is at most three quarters of max_tokens and at most
		// max_tokens-1024: the answer keeps room.
		{name: "medium at three quarters", effort: "medium", max: 8192, wantMax: 8192, thinking: `{"type":"enabled","budget_tokens":6144}`},
		{name: "high", effort: "high", max: 64000, wantMax: 64000, thinking: `{"type":"enabled","budget_tokens":24576}`},
		{name: "high, 16384 leaves a quarter", effort: "high", max: 16384, wantMax: 16384, thinking: `{"type":"enabled","budget_tokens":12288}`},
		{name: "high capped", effort: "high", max: 16000, wantMax: 16000, thinking: `{"type":"enabled","budget_tokens":12000}`},
		{name: "small cap keeps the fixed reserve", effort: "medium", max: 3000, wantMax: 3000, thinking: `{"type":"enabled","budget_tokens":1976}`},
		{name: "smallest cap: minimum budget plus reserve", effort: "low", max: 2048, wantMax: 2048, thinking: `{"type":"enabled","budget_tokens":1024}`},
		// Below 2048 the minimum budget and the reserve do not both fit:
		// no thinking.
		{name: "one below the smallest cap", effort: "high", max: 2047, wantMax: 2047},
		{name: "cap just above the minimum", effort: "low", max: 1025, wantMax: 1025},
		{name: "cap below the minimum", effort: "low", max: 1024, wantMax: 1024},
		{name: "explicit budget", effort: "low", max: 32000, cfg: thinkingConfig{budget: 5000}, wantMax: 32000, thinking: `{"type":"enabled","budget_tokens":5000}`},
		{name: "explicit budget capped", effort: "low", max: 32000, cfg: thinkingConfig{budget: 30000}, wantMax: 32000, thinking: `{"type":"enabled","budget_tokens":24000}`},
		{name: "adaptive", effort: "high", max: 32000, cfg: thinkingConfig{adaptive: true}, wantMax: 32000,
			thinking: `{"type":"adaptive"}`, output: `{"effort":"high"}`},
		// Adaptive thinking has no budget to cap, whatever max_tokens is.
		{name: "adaptive, small cap", effort: "high", max: 1024, cfg: thinkingConfig{adaptive: true}, wantMax: 1024,
			thinking: `{"type":"adaptive"}`, output: `{"effort":"high"}`},
		{name: "adaptive without effort", max: 32000, cfg: thinkingConfig{adaptive: true}, wantMax: 32000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := simpleRequest
			req.ReasoningEffort, req.MaxOutputTokens = tc.effort, tc.max
			body, err := buildRequest(req, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				MaxTokens    int            `json:"max_tokens"`
				Thinking     map[string]any `json:"thinking"`
				OutputConfig map[string]any `json:"output_config"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got.MaxTokens != tc.wantMax {
				t.Errorf("max_tokens = %d, want %d", got.MaxTokens, tc.wantMax)
			}
			check := func(field string, v map[string]any, want string) {
				t.Helper()
				if want == "" {
					if v != nil {
						t.Errorf("%s = %v, want none", field, v)
					}
					return
				}
				var w map[string]any
				if err := json.Unmarshal([]byte(want), &w); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(w, v); diff != "" {
					t.Errorf("%s (-want +got):\n%s", field, diff)
				}
			}
			check("thinking", got.Thinking, tc.thinking)
			check("output_config", got.OutputConfig, tc.output)
		})
	}
}

// TestPairingRule: every tool_use is answered in the next user turn, and a
// user turn answers nothing else, whatever the neutral conversation holds.
func TestPairingRule(t *testing.T) {
	asst := func(ids ...string) provider.Message {
		m := provider.Message{Role: provider.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: id, Name: "t", Arguments: "{}"})
		}
		return m
	}
	result := func(id, text string) provider.Message {
		return provider.Message{Role: provider.RoleTool, ToolCallID: id, ToolName: "t", Text: text}
	}
	user := func(text string) provider.Message { return provider.Message{Role: provider.RoleUser, Text: text} }
	use := func(id string) string { return `{"type":"tool_use","id":"` + id + `","name":"t","input":{}}` }
	res := func(id, text string, isErr bool) string {
		s := `{"type":"tool_result","tool_use_id":"` + id + `"`
		if text != "" {
			s += `,"content":` + quote(text)
		}
		if isErr {
			return s + `,"is_error":true}`
		}
		return s + `,"is_error":false}`
	}
	missing := func(id string) string { return res(id, provider.MissingToolResult, true) }
	text := func(s string) string { return `{"type":"text","text":` + quote(s) + `}` }
	msg := func(role string, blocks ...string) string {
		return `{"role":"` + role + `","content":[` + strings.Join(blocks, ",") + `]}`
	}

	tests := []struct {
		name string
		in   []provider.Message
		want []string
	}{
		{
			name: "canceled after the first of two results",
			in:   []provider.Message{user("go"), asst("a", "b"), result("a", "ok"), user("next")},
			want: []string{msg("user", text("go")), msg("assistant", use("a"), use("b")),
				msg("user", res("a", "ok", false), missing("b"), text("next"))},
		},
		{
			name: "conversation ends with tool_use",
			in:   []provider.Message{user("go"), asst("a")},
			want: []string{msg("user", text("go")), msg("assistant", use("a")), msg("user", missing("a"))},
		},
		{
			name: "next assistant turn without results",
			in:   []provider.Message{user("go"), asst("a"), {Role: provider.RoleAssistant, Text: "later"}},
			want: []string{msg("user", text("go")), msg("assistant", use("a")), msg("user", missing("a")),
				msg("assistant", text("later"))},
		},
		{
			name: "results go before user text",
			in:   []provider.Message{user("go"), asst("a", "b"), user("wait"), result("b", "B"), result("a", "A")},
			want: []string{msg("user", text("go")), msg("assistant", use("a"), use("b")),
				msg("user", res("b", "B", false), res("a", "A", false), text("wait"))},
		},
		{
			name: "result that answers no tool_use",
			in:   []provider.Message{user("go"), result("x", "stray")},
			want: []string{msg("user", text("go"), text("Result of tool call x (t):\nstray"))},
		},
		{
			name: "result for an older turn and a duplicate",
			in: []provider.Message{user("go"), asst("a"), result("a", "A"), asst("b"), result("a", "again"),
				{Role: provider.RoleTool, ToolCallID: "b", Text: "B", IsError: true}, {Role: provider.RoleTool, ToolCallID: "b", Text: "B2", IsError: true}},
			want: []string{msg("user", text("go")), msg("assistant", use("a")), msg("user", res("a", "A", false)),
				msg("assistant", use("b")),
				msg("user", res("b", "B", true), text("Result of tool call a (t):\nagain"), text("Result of tool call b, an error:\nB2"))},
		},
		{
			name: "empty turns dropped, user turns merged",
			in: []provider.Message{user("one"), {Role: provider.RoleAssistant}, user(""), user("two"),
				{Role: provider.RoleAssistant, Reasoning: "no signature"}, user("three")},
			want: []string{msg("user", text("one"), text("two"), text("three"))},
		},
		{
			name: "empty result content",
			in:   []provider.Message{user("go"), asst("a"), result("a", "")},
			want: []string{msg("user", text("go")), msg("assistant", use("a")), msg("user", res("a", "", false))},
		},
		{
			name: "signature without reasoning text",
			in:   []provider.Message{user("go"), {Role: provider.RoleAssistant, ReasoningBlocks: []provider.ReasoningBlock{{Signature: "sig"}}, Text: "hi"}, user("more")},
			want: []string{msg("user", text("go")),
				msg("assistant", `{"type":"thinking","thinking":"","signature":"sig"}`, text("hi")), msg("user", text("more"))},
		},
		{
			// The API rejects a tool-use turn whose thinking was dropped,
			// reordered or changed: every block goes back as it came.
			name: "reasoning blocks replayed in order, redacted thinking included, unsigned text left out",
			in: []provider.Message{user("go"), {
				Role: provider.RoleAssistant, Reasoning: "one two tail",
				ReasoningBlocks: []provider.ReasoningBlock{{Text: "one", Signature: "S1"}, {Redacted: "R1"}, {Text: " two", Signature: "S2"}},
				ToolCalls:       []provider.ToolCall{{ID: "a", Name: "t", Arguments: "{}"}},
			}, result("a", "ok")},
			want: []string{msg("user", text("go")),
				msg("assistant",
					`{"type":"thinking","thinking":"one","signature":"S1"}`,
					`{"type":"redacted_thinking","data":"R1"}`,
					`{"type":"thinking","thinking":" two","signature":"S2"}`,
					use("a")),
				msg("user", res("a", "ok", false))},
		},
		{
			// Interleaved thinking: a block that followed a tool_use goes
			// back after it; one past the last call goes last.
			name: "interleaved thinking keeps its place among the tool calls",
			in: []provider.Message{user("go"), {
				Role: provider.RoleAssistant, Text: "t",
				ReasoningBlocks: []provider.ReasoningBlock{{Text: "one", Signature: "S1"}, {Text: "two", Signature: "S2", AfterToolCalls: 1},
					{Redacted: "R3", AfterToolCalls: 9}},
				ToolCalls: []provider.ToolCall{{ID: "a", Name: "t", Arguments: "{}"}, {ID: "b", Name: "t", Arguments: "{}"}},
			}, result("a", "ok"), result("b", "ok")},
			want: []string{msg("user", text("go")),
				msg("assistant",
					`{"type":"thinking","thinking":"one","signature":"S1"}`, text("t"), use("a"),
					`{"type":"thinking","thinking":"two","signature":"S2"}`, use("b"),
					`{"type":"redacted_thinking","data":"R3"}`),
				msg("user", res("a", "ok", false), res("b", "ok", false))},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotS := requestMessages(t, provider.Request{Model: "m", Messages: tc.in})
			if diff := cmp.Diff(tc.want, gotS); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
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

func TestBuildRequestMedia(t *testing.T) {
	const (
		png  = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgpmYWtl"}}`
		jpeg = `{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4GZha2U="}}`
	)
	tests := []struct {
		name string
		in   []provider.Message
		want string
	}{
		{
			name: "text, then images in order",
			in:   []provider.Message{{Role: provider.RoleUser, Text: "What is this?", Media: []provider.Media{pngMedia, jpegMedia}}},
			want: `{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[` +
				`{"type":"text","text":"What is this?"},` + png + `,` + jpeg + `]}],"stream":true}`,
		},
		{
			name: "images without text",
			in:   []provider.Message{{Role: provider.RoleUser, Media: []provider.Media{pngMedia}}},
			want: `{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[` + png + `]}],"stream":true}`,
		},
		{
			// Merged user turns keep each message's blocks together, in
			// order; tool results still go first.
			name: "merged into the user turn after tool results",
			in: []provider.Message{
				{Role: provider.RoleUser, Text: "go"},
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a", Name: "t", Arguments: "{}"}}},
				{Role: provider.RoleUser, Text: "first", Media: []provider.Media{pngMedia}},
				{Role: provider.RoleTool, ToolCallID: "a", ToolName: "t", Text: "A"},
				{Role: provider.RoleUser, Text: "second", Media: []provider.Media{jpegMedia}},
			},
			want: `{"model":"m","max_tokens":8192,"messages":[` +
				`{"role":"user","content":[{"type":"text","text":"go"}]},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"A","is_error":false},` +
				`{"type":"text","text":"first"},` + png + `,{"type":"text","text":"second"},` + jpeg + `]}],"stream":true}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildRequest(provider.Request{Model: "m", Messages: tc.in}, thinkingConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if got := withoutBreakpoints(string(got)); got != tc.want {
				t.Errorf("body:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestBuildRequestRefusesAudio: the runtime routes audio elsewhere; this
// is the backstop.
func TestBuildRequestRefusesAudio(t *testing.T) {
	req := provider.Request{Model: "m", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "hi"},
		{Role: provider.RoleAssistant, Text: "yes?"},
		{Role: provider.RoleUser, Text: "listen", Media: []provider.Media{pngMedia, wavMedia}},
	}}
	_, err := buildRequest(req, thinkingConfig{})
	const want = "messages: message 2 carries audio, which this wire mode does not accept"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestToolInput(t *testing.T) {
	tests := map[string]string{
		`{"a": 1}`:          `{"a": 1}`,
		" \n{\"a\":1} ":     " \n{\"a\":1} ",
		"":                  `{}`,
		"null":              `{}`,
		"[1, 2]":            `{}`,
		`"text"`:            `{}`,
		`{"a": 1`:           `{}`,
		`{"a": 1}{"b": 2}`:  `{}`,
		"{\"a\": \"\xff\"}": `{}`,
	}
	for in, want := range tests {
		if got := string(toolInput(in)); got != want {
			t.Errorf("toolInput(%q) = %q, want %q", in, got, want)
		}
	}
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestBuildRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  provider.Request
	}{
		{"no model", provider.Request{Messages: simpleRequest.Messages}},
		{"unknown role", provider.Request{Model: "m", Messages: []provider.Message{{Role: "system", Text: "x"}}}},
		{"bad schema", provider.Request{Model: "m", Tools: []provider.ToolSpec{{Name: "t", Parameters: []byte(`{"type":`)}}}},
		{"unknown effort", provider.Request{Model: "m", Messages: simpleRequest.Messages, ReasoningEffort: "max"}},
		{"unknown media type", provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Text: "x", Media: []provider.Media{{Type: "video"}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := buildRequest(tc.req, thinkingConfig{}); err == nil {
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
		return string(edgetest.ReadFixture(t, filepath.Join("testdata", "anthropic", "errors"), name))
	}
	tests := []providertest.HTTPError{
		{
			Name: "400 missing tool_result fixture", Status: 400, Body: fixture("vercel_400-invalid-request-missing-tool-result.json"),
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "invalid_request_error", RequestWritten: true,
				Message: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_issue8112_custom. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		},
		{
			Name: "400 unexpected tool_use_id fixture", Status: 400, Body: fixture("vercel_400-invalid-request-tool-result.json"),
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "invalid_request_error", RequestWritten: true,
				Message: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_issue_17366_invalid. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		},
		{
			Name: "529 overloaded", Status: 529,
			Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 529, Code: "overloaded_error", RequestWritten: true, Message: "Overloaded"},
		},
		{
			Name: "429 Retry-After seconds", Status: 429, Headers: map[string]string{"Retry-After": "7", "anthropic-ratelimit-requests-remaining": "0"},
			Body: `{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 429, Code: "rate_limit_error", RequestWritten: true,
				Message: "Number of request tokens has exceeded your per-minute rate limit", RetryAfter: 7 * time.Second},
		},
		{
			Name: "500 api_error", Status: 500,
			Body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 500, Code: "api_error", RequestWritten: true, Message: "Internal server error"},
		},
		{
			Name: "413 request_too_large", Status: 413,
			Body: `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 413, Code: "request_too_large", RequestWritten: true,
				Message: "Request exceeds the maximum allowed number of bytes."},
		},
		{
			Name: "gateway OpenAI-style envelope", Status: 400,
			Body: `{"error":{"message":"bad input","code":"invalid_value"}}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 400, Code: "invalid_value", RequestWritten: true, Message: "bad input"},
		},
		{
			Name: "top-level fields", Status: 404,
			Body: `{"type":"not_found","message":"model: claude-nope"}`,
			Want: provider.Error{Kind: provider.FailHTTPStatus, Status: 404, Code: "not_found", RequestWritten: true, Message: "model: claude-nope"},
		},
	}
	tests = append(tests, providertest.CommonHTTPErrors(now, func(code, msg string) string {
		return `{"type":"error","error":{"type":"` + code + `","message":"` + msg + `"}}`
	})...)
	providertest.CheckHTTPErrors(t, suite, tests, func(t *testing.T, h http.HandlerFunc) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) { c.Now = func() time.Time { return now } })
	})
}

// TestKeyNeverInErrors: a server that echoes the key (whole or masked) must
// not get it into an error (CONTRACT §11).
func TestKeyNeverInErrors(t *testing.T) {
	echo, masked := suite.KeyEcho("invalid x-api-key", 10)
	envelope := `{"type":"error","error":{"type":"authentication_error","message":"` + echo + `"}}`
	bodies := map[string]http.HandlerFunc{
		"401 envelope":     providertest.Answer(401, "", envelope),
		"401 plain":        providertest.Answer(401, "", echo),
		"mid-stream error": providertest.Answer(200, "text/event-stream", "event: error\ndata: "+`{"type":"error","error":{"type":"`+testKey+`","message":"`+echo+`"}}`+"\n\n"),
		"200 JSON error":   providertest.Answer(200, "application/json", envelope),
	}
	providertest.CheckKeyNeverInErrors(t, suite, masked, "invalid x-api-key", bodies, func(t *testing.T, h http.HandlerFunc) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) {
			c.Headers = map[string]string{"X-Gateway-Key": providertest.HeaderSecret}
		})
	})
}

// startHel is the start of a message with one text delta.
const startHel = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"

func TestStreamFailures(t *testing.T) {
	tests := []providertest.StreamFailure{
		{
			Name: "mid-stream overloaded_error event",
			Handler: edgetest.SSEHandler([]byte(startHel +
				"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n")),
			WantText: "Hel",
			Want: provider.Error{Kind: provider.FailErrorEvent, Code: "overloaded_error", RequestWritten: true, ContentStarted: true,
				Message: "Overloaded"},
		},
		{
			Name:    "error event before content",
			Handler: edgetest.SSEHandler([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n")),
			Want:    provider.Error{Kind: provider.FailErrorEvent, Code: "api_error", RequestWritten: true, Message: "Internal server error"},
		},
		{
			Name:     "cut after content",
			Handler:  edgetest.SSEHandler([]byte(startHel)),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before message_stop"},
		},
		{
			Name: "cut after message_delta",
			Handler: edgetest.SSEHandler([]byte(startHel + "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n")),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before message_stop"},
		},
		{
			Name:    "empty body",
			Handler: edgetest.SSEHandler(nil),
			Want:    provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, Message: "stream ended before message_stop"},
		},
		{
			Name:     "cut inside an event",
			Handler:  edgetest.SSEHandler([]byte(startHel + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}")),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before message_stop"},
		},
		{
			Name:     "invalid JSON",
			Handler:  edgetest.SSEHandler([]byte(startHel + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n")),
			WantText: "Hel",
			Want:     provider.Error{Kind: provider.FailDecode, RequestWritten: true, ContentStarted: true, Message: "invalid event JSON"},
		},
	}
	tests = append(tests, providertest.TransportFailures(startHel, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, `{"type":"message","content":[{"type":"text","text":"hi"}]}`)...)
	providertest.CheckStreamFailures(t, suite, tests, func(t *testing.T, h http.HandlerFunc, idle time.Duration) provider.Provider {
		return testProvider(t, edgetest.NewServer(t, h), func(c *Config) { c.IdleTimeout = idle })
	})
}

func TestConnectionRefused(t *testing.T) {
	providertest.CheckConnectionRefused(t, suite, func(addr string) (provider.Provider, error) {
		return New(Config{BaseURL: "http://" + addr, APIKey: testKey, HTTPClient: edgetest.Client(t)})
	})
}

func TestCancel(t *testing.T) {
	edgetest.CheckCancel(t, func(t *testing.T, ctx context.Context, h http.HandlerFunc) (provider.Stream, error) {
		return testProvider(t, edgetest.NewServer(t, h), nil).Stream(ctx, simpleRequest)
	}, startHel, true)
}

func TestNew(t *testing.T) {
	providertest.CheckNewRefuses(t, "https://host", func(b providertest.BadConfig) error {
		_, err := New(Config{BaseURL: b.BaseURL, APIKey: b.APIKey, Headers: b.Headers, IdleTimeout: b.IdleTimeout, MaxEventBytes: b.MaxEventBytes})
		return err
	})
	if _, err := New(Config{BaseURL: "https://host", ThinkingBudget: -1}); err == nil {
		t.Error("New with a negative thinking budget succeeded")
	}
	p, err := New(Config{BaseURL: "https://api.anthropic.com/", ThinkingBudget: 4096, AdaptiveThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.CloseIdleConnections()
	if p.endpoint != "https://api.anthropic.com/v1/messages" || p.idle != DefaultIdleTimeout ||
		p.maxEvent != DefaultMaxEventBytes || p.now == nil || p.client == nil ||
		p.thinking != (thinkingConfig{budget: 4096, adaptive: true}) {
		t.Errorf("defaults not filled: %+v", p)
	}
}

func TestRetryAfter(t *testing.T) {
	edgetest.CheckRetryAfter(t)
}

func TestSanitize(t *testing.T) {
	edgetest.CheckSanitize(t, "sk-ant-abcdefghijklmnop", "sk-ant-abc**********mnop", "X-Gateway-Key", "gateway-secret-key")
}
