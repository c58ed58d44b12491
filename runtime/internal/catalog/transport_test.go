package catalog

import (
	"strings"
	"testing"
)

// TestTransport: a configured openai-responses provider may ask for the
// WebSocket transport, a model may override its provider's, and anything
// else is refused with a message naming the place.
func TestTransport(t *testing.T) {
	c, err := Load(writeConfig(t, `{"providers": {
	  "ws": {"base_url": "https://ws.example/v1", "provider_mode": "openai-responses", "transport": "websocket",
	    "models": [{"id": "a", "context_window_tokens": 1000, "max_output_tokens": 100}, {"id": "b", "context_window_tokens": 1000, "max_output_tokens": 100, "transport": "http"}]},
	  "plain": {"base_url": "https://plain.example/v1", "provider_mode": "openai-responses",
	    "models": [{"id": "c", "context_window_tokens": 1000, "max_output_tokens": 100}, {"id": "d", "context_window_tokens": 1000, "max_output_tokens": 100, "transport": "websocket"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": TransportWebSocket, "b": TransportHTTP, "c": "", "d": TransportWebSocket}
	for id, tr := range want {
		m, ok := c.Lookup(id)
		if !ok || m.Transport != tr {
			t.Errorf("%s: transport %q (found %v), want %q", id, m.Transport, ok, tr)
		}
	}
	for _, m := range Builtin() {
		if m.Transport == TransportWebSocket && m.Mode != ModeOpenAIResponses {
			t.Errorf("built-in %s asks for websocket on %s", m.ID, m.Mode)
		}
	}
	m, err := InlineRoute(InlineSpec{Provider: "corp", BaseURL: "http://127.0.0.1:1/v1", Model: "x", Mode: string(ModeOpenAIResponses)})
	if err != nil || m.Transport != "" {
		t.Errorf("inline route %+v, %v", m, err)
	}
	for _, tc := range []struct{ name, content, wantErr string }{
		{"unknown", `{"providers": {"p": {"base_url": "http://h/v1", "provider_mode": "openai-responses", "transport": "grpc"}}}`,
			`providers.p: transport must be "http" or "websocket", not "grpc"`},
		{"chat provider", `{"providers": {"p": {"base_url": "http://h/v1", "transport": "websocket"}}}`,
			`providers.p: transport "websocket" needs provider_mode "openai-responses"`},
		{"anthropic model", `{"providers": {"p": {"base_url": "http://h", "provider_mode": "anthropic-messages", "models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "transport": "websocket"}]}}}`,
			`providers.p.models[0]: transport "websocket" needs provider_mode "openai-responses"`},
		{"wrong type", `{"providers": {"p": {"base_url": "http://h/v1", "transport": true}}}`,
			"providers.p.transport: expected a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Load = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
