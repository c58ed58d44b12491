package rpc

import "testing"

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{"delay_ms": "delayMs", "filesChanged": "filesChanged", "a_b_c": "aBC", "x": "x",
		"cache_read_tokens": "cacheReadTokens", "_lead": "_lead", "trail_": "trail", "mid__x": "midX", "v_2": "v2"} {
		if got := Camel(in); got != want {
			t.Errorf("Camel(%q) = %q, want %q", in, got, want)
		}
	}
}
