package fakeprovider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The Messages endpoint takes cache_control breakpoints where the API
// does and refuses what the API refuses: a fifth breakpoint, one on a
// thinking block, a malformed one, a 1h after a 5m.
func TestAnthropicCacheControl(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "a"}, {Text: "b"}, {Text: "c"}, {Text: "d"}}})
	c := newClient(t)
	bp := map[string]any{"type": "ephemeral"}
	ttl := func(v string) map[string]any { return map[string]any{"type": "ephemeral", "ttl": v} }
	text := func(cc any) map[string]any {
		b := map[string]any{"type": "text", "text": "x"}
		if cc != nil {
			b["cache_control"] = cc
		}
		return b
	}
	body := func(tools, system []any, content []any, top any) map[string]any {
		b := requestBody(ModeAnthropic, "m")
		if tools != nil {
			b["tools"] = tools
		}
		if system != nil {
			b["system"] = system
		}
		b["messages"] = []any{map[string]any{"role": "user", "content": content}}
		if top != nil {
			b["cache_control"] = top
		}
		return b
	}
	tool := func(cc any) map[string]any {
		t := map[string]any{"name": "t", "input_schema": map[string]any{"type": "object"}}
		if cc != nil {
			t["cache_control"] = cc
		}
		return t
	}
	thinking := map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "thinking", "thinking": "t", "signature": "s", "cache_control": bp},
		map[string]any{"type": "text", "text": "x"},
	}}
	withThinking := body(nil, nil, []any{text(nil)}, nil)
	withThinking["messages"] = append(withThinking["messages"].([]any), thinking,
		map[string]any{"role": "user", "content": []any{text(nil)}})

	for _, tc := range []struct {
		name string
		body map[string]any
		want string // "" accepts; else a piece of the error message
	}{
		{"four: tool, system, two blocks", body([]any{tool(bp)}, []any{text(bp)}, []any{text(bp), text(bp)}, nil), ""},
		{"null is no breakpoint", body([]any{tool(bp)}, []any{text(bp)}, []any{text(bp), text(bp), map[string]any{"type": "text", "text": "y", "cache_control": nil}}, nil), ""},
		{"1h before 5m", body([]any{tool(ttl("1h"))}, []any{text(ttl("5m"))}, []any{text(bp)}, nil), ""},
		{"five", body([]any{tool(bp)}, []any{text(bp)}, []any{text(bp), text(bp), text(bp)}, nil), "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"the top-level one counts", body([]any{tool(bp)}, []any{text(bp)}, []any{text(bp), text(bp)}, bp), "Found 5."},
		{"on a thinking block", withThinking, "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted"},
		{"unknown type", body(nil, nil, []any{text(map[string]any{"type": "persistent"})}, nil), "messages.0.content.0.cache_control.type"},
		{"unknown member", body(nil, nil, []any{text(map[string]any{"type": "ephemeral", "scope": "x"})}, nil), "cache_control.scope: Extra inputs"},
		{"bad ttl", body(nil, nil, []any{text(ttl("10m"))}, nil), "cache_control.ttl"},
		{"not an object", body([]any{tool("ephemeral")}, nil, []any{text(nil)}, nil), "tools.0.cache_control"},
		{"1h after 5m", body([]any{tool(bp)}, []any{text(ttl("1h"))}, []any{text(nil)}, nil), "system.0.cache_control"},
	} {
		resp := send(t, c, s, ModeAnthropic, tc.body)
		got := readAll(t, resp)
		if tc.want == "" {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d: %s", tc.name, resp.StatusCode, got)
			}
			continue
		}
		var env map[string]any
		if err := json.Unmarshal(got, &env); err != nil {
			t.Fatalf("%s: %v: %s", tc.name, err, got)
		}
		if resp.StatusCode != http.StatusBadRequest || at(env, "error", "type") != "invalid_request_error" ||
			!strings.Contains(str(at(env, "error", "message")), tc.want) {
			t.Errorf("%s: status %d, body %s; want a 400 saying %q", tc.name, resp.StatusCode, got, tc.want)
		}
	}
	// The other modes do not look at cache_control.
	b := requestBody(ModeChat, "m")
	b["cache_control"] = "anything"
	resp := send(t, c, s, ModeChat, b)
	if readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("chat: status %d", resp.StatusCode)
	}
}

// Requests keeps each body byte for byte.
func TestRequestsKeepRawBody(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "a"}}})
	c := newClient(t)
	const raw = `{"model":"m", "stream":true,"input":"hi"}`
	readAll(t, send(t, c, s, ModeResponses, raw))
	reqs := s.Requests()
	if len(reqs) != 1 || string(reqs[0].RawBody) != raw || reqs[0].Body["input"] != "hi" {
		t.Fatalf("requests %+v", reqs)
	}
}
