package responses

import (
	"context"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
)

// Request.CacheKey goes out as prompt_cache_key; none without one.
func TestPromptCacheKey(t *testing.T) {
	for _, key := range []string{"", "octet-0123abcd"} {
		got := make(chan captured, 1)
		srv := edgetest.NewServer(t, captureHandler(got))
		p := testProvider(t, srv, nil)
		req := simpleRequest
		req.CacheKey = key
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := drain(t, s); err != nil {
			t.Fatal(err)
		}
		body := string((<-got).body)
		want := `"prompt_cache_key":"` + key + `",`
		if key == "" && strings.Contains(body, "prompt_cache_key") || key != "" && !strings.Contains(body, want) {
			t.Errorf("CacheKey %q: body %s", key, body)
		}
	}
}
