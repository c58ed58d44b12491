package discovery

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/catalog"
)

func TestFromCatalog(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
		t.Fatal(err)
	}
	const cfg = `{"providers": {
		"local": {"base_url": "http://127.0.0.1:8080/v1/", "api_key_env": "LOCAL_KEY",
			"models": [{"id": "qwen", "context_window_tokens": 32768, "max_output_tokens": 4096}, {"id": "llama", "context_window_tokens": 8192, "max_output_tokens": 4096}]},
		"gateway": {"base_url": "https://gw.example/v1", "provider_mode": "openai-responses",
			"models": [{"id": "gpt-oss", "context_window_tokens": 131072, "max_output_tokens": 4096}]},
		"claude-proxy": {"base_url": "https://proxy.example", "provider_mode": "anthropic-messages",
			"api_key_env": "PROXY_KEY", "models": [{"id": "claude-x", "context_window_tokens": 200000, "max_output_tokens": 4096}]},
		"empty": {"base_url": "http://127.0.0.1:9090/v1", "models": []}
	}}`
	if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	env := map[string]string{"LOCAL_KEY": "k-local", "PROXY_KEY": "k-proxy"}
	got := FromCatalog(cat.Models(), func(m catalog.Model) string {
		calls[m.Provider]++
		return env[m.CredentialEnv]
	})
	want := []Endpoint{
		{Provider: "gateway", BaseURL: "https://gw.example/v1"},
		{Provider: "local", BaseURL: "http://127.0.0.1:8080/v1", APIKey: "k-local"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("endpoints (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int{"gateway": 1, "local": 1}, calls); d != "" {
		t.Errorf("key calls (-want +got):\n%s", d)
	}

	inline := catalog.Model{Provider: "inl", Mode: catalog.ModeOpenAICompatible, BaseURL: "http://x/v1", Inline: true}
	if got := FromCatalog(append(catalog.Builtin(), inline), nil); len(got) != 0 {
		t.Errorf("built-in and inline routes gave %v", got)
	}
}
