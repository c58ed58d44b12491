package catalog

import (
	"strings"
	"testing"
)

func TestNativeSteeringFlag(t *testing.T) {
	c, err := Load(writeConfig(t, `{"providers": {"p": {"base_url": "http://h/v1", "provider_mode": "openai-responses", "transport": "websocket",
		"models": [{"id": "steers", "context_window_tokens": 1000, "max_output_tokens": 100, "native_steering": true},
		           {"id": "gpt-6-named", "context_window_tokens": 1000, "max_output_tokens": 100},
		           {"id": "over-http", "context_window_tokens": 1000, "max_output_tokens": 100, "native_steering": true, "transport": "http"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"steers": true, "gpt-6-named": false, "over-http": false}
	for id, q := range want {
		m, ok := c.Lookup(id)
		if !ok {
			t.Fatalf("no %s", id)
		}
		if got := m.NativeSteeringQualified(false, false); got != q {
			t.Errorf("%s: qualified %v, want %v", id, got, q)
		}
	}
	m, _ := c.Lookup("steers")
	if m.NativeSteeringQualified(true, false) || m.NativeSteeringQualified(false, true) {
		t.Error("provider-side compaction or a cumulative ceiling must disqualify")
	}
	m.Inline = true
	if m.NativeSteeringQualified(false, false) {
		t.Error("an inline route qualified")
	}
	for _, tc := range []struct{ content, want string }{
		{`{"providers": {"p": {"base_url": "http://h/v1", "models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "native_steering": true}]}}}`,
			`providers.p.models[0]: native_steering needs provider_mode "openai-responses"`},
		{`{"providers": {"p": {"base_url": "http://h/v1", "provider_mode": "openai-responses", "models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "native_steering": "yes"}]}}}`,
			"native_steering: expected"},
	} {
		if _, err := Load(writeConfig(t, tc.content)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load = %v, want %q", err, tc.want)
		}
	}
}
