package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// modelList serves an OpenAI model list of n models whose ids are prefix
// and a number padded to width bytes.
func modelList(t *testing.T, n, width int, prefix string) string {
	t.Helper()
	// The body is built once and written in one piece, so that the
	// server's own speed (under -race, on a busy machine) does not eat the
	// host's 2 s discovery timeout.
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%s%0*d"}`, prefix, width-len(prefix), i)
	}
	b.WriteString(`]}`)
	body := b.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// The models event always fits its frame: a
// list of 200,000 models or two of 5,000 long ids are cut, with a
// discovery_truncated issue per endpoint saying how many were left out,
// instead of a protocol_error and no list at all.
func TestModelsDiscoveryIsBounded(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{})
	providers := map[string]any{}
	for name, url := range map[string]string{
		"huge":  modelList(t, 200_000, 8, "m"),
		"long1": modelList(t, 5_000, 200, "a"),
		"long2": modelList(t, 5_000, 200, "b"),
		"small": modelList(t, 3, 8, "s"),
	} {
		// A provider is known through its models: one configured model
		// each, which the list then repeats.
		providers[name] = map[string]any{"base_url": url, "provider_mode": "openai-compatible",
			"models": []any{map[string]any{"id": "configured", "context_window_tokens": 8192, "max_output_tokens": 1024}}}
	}
	dir := filepath.Join(e.home, ".octet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), mustJSON(t, map[string]any{"providers": providers}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data, err := e.c.Models(ctx, false)
	if err != nil {
		t.Fatalf("models: %v", err)
	}
	count := map[string]int{}
	for _, m := range data.Models {
		if m.Name != "configured" && !strings.HasSuffix(m.ID, "/configured") {
			count[m.Provider]++
		}
	}
	issues := map[string]string{}
	for _, is := range data.Discovery {
		if is.Code != "discovery_truncated" {
			t.Errorf("issue %+v", is)
			continue
		}
		issues[is.Provider] = is.Message
	}
	if count["small"] != 3 || issues["small"] != "" {
		t.Errorf("small endpoint: %d models, issue %q", count["small"], issues["small"])
	}
	t.Logf("listed %v; issues %v", count, issues)
	for _, p := range []string{"huge", "long1", "long2"} {
		left := map[string]int{"huge": 200_000, "long1": 5_000, "long2": 5_000}[p] - count[p]
		if count[p] < 500 || !strings.HasPrefix(issues[p], fmt.Sprintf("%d more models were left out", left)) {
			t.Errorf("%s: %d models listed, issue %q", p, count[p], issues[p])
		}
	}
}
