package chat

import (
	"context"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
)

// prompt_cache_key goes only to a route configured to accept it: an
// OpenAI-compatible server may refuse a member it does not know.
func TestPromptCacheKey(t *testing.T) {
	for _, accepts := range []bool{false, true} {
		got := make(chan captured, 1)
		srv := edgetest.NewServer(t, captureHandler(got))
		p := testProvider(t, srv, func(c *Config) { c.PromptCacheKey = accepts })
		req := simpleRequest
		req.CacheKey = "octet-0123abcd"
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := drain(t, s); err != nil {
			t.Fatal(err)
		}
		body := string((<-got).body)
		has := strings.Contains(body, `"prompt_cache_key":"octet-0123abcd"`)
		if has != accepts || (!accepts && strings.Contains(body, "prompt_cache_key")) {
			t.Errorf("PromptCacheKey %v: body %s", accepts, body)
		}
	}
}
