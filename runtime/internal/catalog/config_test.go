package catalog

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeConfig creates home/.octet/models.json with content and returns home.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".octet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

const goodConfig = `{
  "providers": {
    "local": {
      "base_url": "http://127.0.0.1:1234/v1/",
      "provider_mode": "openai-compatible",
      "api_key_env": "LOCAL_LLM_KEY",
      "models": [
        {"id": "qwen-coder", "name": "Qwen Coder (local)", "context_window_tokens": 32768,
         "max_output_tokens": 4096, "input_modalities": ["text", "image"], "supports_reasoning": true,
         "cost": {"input": 0, "output": 0}},
        {"id": "gpt-4o", "context_window_tokens": 8192, "max_output_tokens": 1024},
        {"id": "org/model-a", "context_window_tokens": 8192, "max_output_tokens": 1024}
      ]
    },
    "corp": {
      "base_url": "https://gw.corp.example/anthropic",
      "provider_mode": "anthropic-messages",
      "lifecycle_events": true,
      "models": [
        {"id": "house-claude", "context_window_tokens": 200000, "max_output_tokens": 64000,
         "cost": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75, "currency": "USD"}},
        {"id": "shared", "context_window_tokens": 1000, "max_output_tokens": 100}
      ]
    },
    "edge": {
      "base_url": "https://edge.example/v1",
      "models": [
        {"id": "shared", "context_window_tokens": 1000, "max_output_tokens": 100, "input_modalities": ["audio"]},
        {"id": "inline-trick", "context_window_tokens": 1000, "max_output_tokens": 100}
      ]
    }
  }
}`

func TestLoadGood(t *testing.T) {
	c, err := Load(writeConfig(t, goodConfig))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	builtins := len(Builtin())
	if got, want := len(c.Models()), builtins+7; got != want {
		t.Fatalf("len(Models()) = %d, want %d", got, want)
	}

	want := map[string]Model{
		"qwen-coder": {
			ID: "qwen-coder", Provider: "local", Name: "Qwen Coder (local)", APIModel: "qwen-coder",
			Mode: ModeOpenAICompatible, ContextWindowTokens: 32768, MaxOutputTokens: 4096,
			InputModalities: []string{"text", "image"}, SupportsReasoning: true,
			Cost:    &Cost{Currency: "USD"},
			BaseURL: "http://127.0.0.1:1234/v1", CredentialEnv: "LOCAL_LLM_KEY",
		},
		// Collides with the built-in gpt-4o, so it is qualified.
		"local/gpt-4o": {
			ID: "local/gpt-4o", Provider: "local", Name: "gpt-4o", APIModel: "gpt-4o",
			Mode: ModeOpenAICompatible, ContextWindowTokens: 8192, MaxOutputTokens: 1024,
			InputModalities: []string{"text"}, BaseURL: "http://127.0.0.1:1234/v1", CredentialEnv: "LOCAL_LLM_KEY",
		},
		// Contains '/', so it is qualified.
		"local/org/model-a": {
			ID: "local/org/model-a", Provider: "local", Name: "org/model-a", APIModel: "org/model-a",
			Mode: ModeOpenAICompatible, ContextWindowTokens: 8192, MaxOutputTokens: 1024,
			InputModalities: []string{"text"}, BaseURL: "http://127.0.0.1:1234/v1", CredentialEnv: "LOCAL_LLM_KEY",
		},
		"house-claude": {
			ID: "house-claude", Provider: "corp", Name: "house-claude", APIModel: "house-claude",
			Mode: ModeAnthropicMessages, ContextWindowTokens: 200000, MaxOutputTokens: 64000,
			InputModalities: []string{"text"},
			Cost:            &Cost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, Currency: "USD"},
			BaseURL:         "https://gw.corp.example/anthropic", LifecycleEvents: true,
		},
		// Two providers configure "shared": both are qualified.
		"corp/shared": {
			ID: "corp/shared", Provider: "corp", Name: "shared", APIModel: "shared",
			Mode: ModeAnthropicMessages, ContextWindowTokens: 1000, MaxOutputTokens: 100,
			InputModalities: []string{"text"}, BaseURL: "https://gw.corp.example/anthropic", LifecycleEvents: true,
		},
		// Empty provider_mode means openai-compatible.
		"edge/shared": {
			ID: "edge/shared", Provider: "edge", Name: "shared", APIModel: "shared",
			Mode: ModeOpenAICompatible, ContextWindowTokens: 1000, MaxOutputTokens: 100,
			InputModalities: []string{"text", "audio"}, BaseURL: "https://edge.example/v1",
		},
		// The inline prefix is reserved, so it is qualified.
		"edge/inline-trick": {
			ID: "edge/inline-trick", Provider: "edge", Name: "inline-trick", APIModel: "inline-trick",
			Mode: ModeOpenAICompatible, ContextWindowTokens: 1000, MaxOutputTokens: 100,
			InputModalities: []string{"text"}, BaseURL: "https://edge.example/v1",
		},
	}
	for id, w := range want {
		got, ok := c.Lookup(id)
		if !ok {
			t.Errorf("Lookup(%q) found nothing", id)
			continue
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("Lookup(%q) mismatch (-want +got):\n%s", id, diff)
		}
	}

	// The built-in gpt-4o is untouched by the configured one.
	if m, ok := c.Lookup("gpt-4o"); !ok || m.Provider != ProviderOpenAI {
		t.Errorf("Lookup(gpt-4o) = %+v, %v; want the built-in", m, ok)
	}
	for _, m := range c.Models() {
		if strings.HasPrefix(m.ID, InlineIDPrefix) {
			t.Errorf("catalog ID %q starts with the inline prefix", m.ID)
		}
	}
	ms := c.Models()
	for i := 1; i < len(ms); i++ {
		if ms[i-1].Provider > ms[i].Provider || (ms[i-1].Provider == ms[i].Provider && ms[i-1].ID >= ms[i].ID) {
			t.Errorf("Models() not sorted at %d", i)
		}
	}
}

func TestLookup(t *testing.T) {
	c, err := Load(writeConfig(t, goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id           string
		wantProvider string
		wantAPIModel string
		wantOK       bool
	}{
		{"gpt-5", "openai", "gpt-5", true},
		{"openai/gpt-5", "openai", "gpt-5", true},
		{"anthropic/claude-opus-5-5", "anthropic", "claude-opus-5-5", true},
		{"claude-opus-5-5", "anthropic", "claude-opus-5-5", true},
		{"qwen-coder", "local", "qwen-coder", true},
		{"local/qwen-coder", "local", "qwen-coder", true},
		{"local/gpt-4o", "local", "gpt-4o", true},
		{"local/org/model-a", "local", "org/model-a", true},
		{"edge/shared", "edge", "shared", true},
		{"shared", "", "", false}, // ambiguous, so only the qualified forms exist
		{"org/model-a", "", "", false},
		{"anthropic/gpt-5", "", "", false},
		{"GPT-5", "", "", false},
		{"", "", "", false},
		{"/gpt-5", "", "", false},
		{"openai/", "", "", false},
		{"inline-0123456789abcdef", "", "", false},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.id)
		if ok != tt.wantOK {
			t.Errorf("Lookup(%q) ok = %v, want %v", tt.id, ok, tt.wantOK)
			continue
		}
		if ok && (m.Provider != tt.wantProvider || m.APIModel != tt.wantAPIModel) {
			t.Errorf("Lookup(%q) = %s/%s, want %s/%s", tt.id, m.Provider, m.APIModel, tt.wantProvider, tt.wantAPIModel)
		}
	}

	// Lookup returns a copy.
	m, _ := c.Lookup("qwen-coder")
	m.InputModalities[0] = "mutated"
	m.Cost.Input = 99
	again, _ := c.Lookup("qwen-coder")
	if again.InputModalities[0] != ModalityText || again.Cost.Input != 0 {
		t.Errorf("mutating a Lookup result changed the catalog: %+v", again)
	}
}

func TestLoadNullsMeanAbsent(t *testing.T) {
	c, err := Load(writeConfig(t, `{"providers": {"p": {"base_url": "http://h/v1", "models": [
		{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "input_modalities": null, "cost": null}]},
		"q": {"base_url": "http://h/v1", "models": null}}}`))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	m, ok := c.Lookup("p/m")
	if !ok || m.Cost != nil || !slices.Equal(m.InputModalities, []string{"text"}) {
		t.Errorf("Lookup(p/m) = %+v, %v", m, ok)
	}
	if got, want := len(c.Models()), len(Builtin())+1; got != want {
		t.Errorf("len(Models()) = %d, want %d", got, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatalf("Load with no models.json: %v", err)
	}
	if diff := cmp.Diff(Builtin(), c.Models()); diff != "" {
		t.Errorf("catalog differs from the built-ins (-want +got):\n%s", diff)
	}
	if _, err := Load(""); err == nil {
		t.Error("Load(\"\") succeeded, want an error")
	}
}

func TestLoadErrors(t *testing.T) {
	model := `{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100}`
	provider := func(body string) string {
		return `{"providers": {"local": {"base_url": "http://h/v1", ` + body + `}}}`
	}
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{"empty file", ``, "unexpected end of file"},
		{"truncated", `{"providers": {`, "unexpected end of file"},
		{"malformed", "{\n  \"providers\": {,}\n}", "invalid JSON at line 2"},
		{"not an object", `[]`, "expected an object"},
		{"trailing data", `{} {}`, "after the top-level object"},
		{"unknown top-level field", `{"provider": {}}`, "provider: unknown field"},
		{"unknown provider field", provider(`"baseurl": "x", "models": []`), "providers.local.baseurl: unknown field"},
		{"wrong letter case", provider(`"Base_URL": "http://h/v1"`), "providers.local.Base_URL: unknown field"},
		{"unknown model field", provider(`"models": [{"id": "m", "vision": true}]`), "providers.local.models[0].vision: unknown field"},
		{"unknown cost field", provider(`"models": [{"id": "m", "cost": {"input": 1, "output": 2, "cached": 1}}]`), "cost.cached: unknown field"},
		{"duplicate provider", `{"providers": {"a": {"base_url": "http://h"}, "a": {"base_url": "http://h"}}}`, `duplicate provider "a"`},
		{"duplicate key", provider(`"provider_mode": "openai-compatible", "provider_mode": "openai-responses"`), "provider_mode: duplicate key"},
		{"duplicate model id", provider(`"models": [` + model + `, ` + model + `]`), `models[1]: duplicate model id "m"`},
		{"wrong type", provider(`"models": [{"id": "m", "context_window_tokens": "big"}]`), "expected an integer"},
		{"fractional tokens", provider(`"models": [{"id": "m", "context_window_tokens": 1.5}]`), "expected an integer"},
		{"huge tokens", provider(`"models": [{"id": "m", "context_window_tokens": 1e30}]`), "expected an integer"},
		{"null scalar", provider(`"api_key_env": null`), "providers.local.api_key_env: expected a string, found null"},
		{"object for string", `{"providers": {"local": {"base_url": {}}}}`, "providers.local.base_url: expected a string, found an object"},
		{"string for array", provider(`"models": "m"`), "providers.local.models: expected an array, found a string"},
		{"native compaction on chat", provider(`"native_compaction": true`), `providers.local: native_compaction needs provider_mode "openai-responses"`},
		{"native compaction on a chat model", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "native_compaction": true}]`), `providers.local.models[0]: native_compaction needs provider_mode "openai-responses"`},
		{"string for native_compaction", provider(`"native_compaction": "yes"`), "providers.local.native_compaction: expected true or false, found a string"},
		{"string for lifecycle_events", provider(`"lifecycle_events": "yes"`), "providers.local.lifecycle_events: expected true or false, found a string"},
		{"null lifecycle_events", provider(`"lifecycle_events": null`), "providers.local.lifecycle_events: expected true or false, found null"},
		{"lifecycle_events on a model", provider(`"models": [{"id": "m", "lifecycle_events": true}]`), "providers.local.models[0].lifecycle_events: unknown field"},
		{"number for bool", provider(`"models": [{"id": "m", "supports_reasoning": 1}]`), "models[0].supports_reasoning: expected true or false, found a number"},
		{"reasoning_updates without reasoning", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "reasoning_updates": true}]`), "models[0]: reasoning_updates needs supports_reasoning"},
		{"reasoning_ultra without updates", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true, "reasoning_ultra": true}]`), "models[0]: reasoning_ultra needs reasoning_updates"},
		{"string for reasoning_updates", provider(`"models": [{"id": "m", "reasoning_updates": "yes"}]`), "models[0].reasoning_updates: expected true or false, found a string"},
		{"string for a provider's reasoning_updates", provider(`"reasoning_updates": "yes"`), "providers.local.reasoning_updates: expected true or false, found a string"},
		{"null for a provider's reasoning_updates", provider(`"reasoning_updates": null`), "providers.local.reasoning_updates: expected true or false, found null"},
		{"missing base url", `{"providers": {"local": {"models": []}}}`, "base_url is empty"},
		{"base url with userinfo", `{"providers": {"local": {"base_url": "https://u:p@h/v1"}}}`, "userinfo"},
		{"bad mode", provider(`"provider_mode": "chat"`), "provider_mode must be"},
		{"bad env name", provider(`"api_key_env": "1KEY"`), "api_key_env"},
		{"reserved provider", `{"providers": {"openai": {"base_url": "http://h/v1"}}}`, "reserved"},
		{"bad provider name", `{"providers": {"a b": {"base_url": "http://h/v1"}}}`, "provider name"},
		{"inline provider name", `{"providers": {"inline-x": {"base_url": "http://h/v1"}}}`, "must not start with"},
		{"missing model id", provider(`"models": [{"context_window_tokens": 1000, "max_output_tokens": 100}]`), "id: model is required"},
		{"missing window", provider(`"models": [{"id": "m", "max_output_tokens": 100}]`), "context_window_tokens must be a positive integer"},
		{"output not below window", provider(`"models": [{"id": "m", "context_window_tokens": 100, "max_output_tokens": 100}]`), "smaller than"},
		{"unknown modality", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "input_modalities": ["video"]}]`), "unknown modality"},
		{"cost without output", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "cost": {"input": 1}}]`), "input and output prices are required"},
		{"negative cost", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "cost": {"input": -1, "output": 1}}]`), "not negative"},
		{"other currency", provider(`"models": [{"id": "m", "context_window_tokens": 1000, "max_output_tokens": 100, "cost": {"input": 1, "output": 1, "currency": "EUR"}}]`), "currency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := writeConfig(t, tt.content)
			c, err := Load(home)
			if err == nil {
				t.Fatalf("Load succeeded with %d models, want error containing %q", len(c.Models()), tt.wantErr)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "~/.octet/models.json: ") {
				t.Errorf("error %q does not name ~/.octet/models.json", msg)
			}
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("error %q does not contain %q", msg, tt.wantErr)
			}
			if strings.Contains(msg, home) {
				t.Errorf("error %q contains the absolute home path", msg)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	home := t.TempDir()
	// A directory where the file should be.
	if err := os.MkdirAll(filepath.Join(home, ".octet", "models.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Load(home)
	if err == nil || !strings.HasPrefix(err.Error(), "~/.octet/models.json: ") || strings.Contains(err.Error(), home) {
		t.Fatalf("Load = %v, want an error naming ~/.octet/models.json without the home path", err)
	}
}

// TestLifecycleEventsOnlyConfigured: provider_lifecycle is opted into per
// configured provider; no built-in model and no inline route has it, and
// a configured provider without the member does not either.
func TestLifecycleEventsOnlyConfigured(t *testing.T) {
	for _, m := range Builtin() {
		if m.LifecycleEvents {
			t.Errorf("built-in %s has lifecycle events", m.ID)
		}
	}
	m, err := InlineRoute(InlineSpec{Provider: "corp", BaseURL: "http://127.0.0.1:1/v1", Model: "house-claude"})
	if err != nil || m.LifecycleEvents {
		t.Errorf("inline route %+v, %v", m, err)
	}
	c, err := Load(writeConfig(t, goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		if want := m.Provider == "corp"; m.LifecycleEvents != want {
			t.Errorf("%s: LifecycleEvents %v, want %v", m.ID, m.LifecycleEvents, want)
		}
	}
}

func TestNativeCompactionOnlyDeclared(t *testing.T) {
	for _, m := range Builtin() {
		if m.NativeCompaction {
			t.Errorf("built-in %s compacts natively", m.ID)
		}
	}
	m, err := InlineRoute(InlineSpec{Provider: "corp", BaseURL: "http://127.0.0.1:1/v1", Model: "gpt", Mode: string(ModeOpenAIResponses)})
	if err != nil || m.NativeCompaction {
		t.Errorf("inline route %+v, %v", m, err)
	}
	c, err := Load(writeConfig(t, `{"providers": {"resp": {"base_url": "http://h/v1", "provider_mode": "openai-responses", "native_compaction": true,
		"models": [{"id": "a", "context_window_tokens": 1000, "max_output_tokens": 100}, {"id": "b", "context_window_tokens": 1000, "max_output_tokens": 100, "native_compaction": false}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		if want := m.APIModel == "a"; m.NativeCompaction != want {
			t.Errorf("%s: NativeCompaction %v, want %v", m.ID, m.NativeCompaction, want)
		}
	}
}

// TestReasoningQualificationOnlyConfigured: reasoning updates and Ultra
// are declared by a configured model, never by a built-in entry or an
// inline route, and the members reach the model.
func TestReasoningQualificationOnlyConfigured(t *testing.T) {
	for _, m := range Builtin() {
		if m.ReasoningUpdates || m.ReasoningUltra {
			t.Errorf("built-in %s is qualified for reasoning updates", m.ID)
		}
	}
	yes := true
	m, err := InlineRoute(InlineSpec{Provider: "corp", BaseURL: "http://127.0.0.1:1/v1", Model: "gpt-5-ultra", SupportsReasoning: &yes})
	if err != nil || m.ReasoningUpdates || m.ReasoningUltra {
		t.Errorf("inline route %+v, %v", m, err)
	}
	c, err := Load(writeConfig(t, `{"providers": {"lab": {"base_url": "http://h/v1", "models": [
		{"id": "a", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true, "reasoning_updates": true, "reasoning_ultra": true},
		{"id": "b", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true, "reasoning_updates": true},
		{"id": "c", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]bool{}
	for _, m := range c.Models() {
		if m.Provider == "lab" {
			got[m.ID] = [2]bool{m.ReasoningUpdates, m.ReasoningUltra}
		}
	}
	if want := map[string][2]bool{"a": {true, true}, "b": {true, false}, "c": {false, false}}; !maps.Equal(got, want) {
		t.Errorf("qualification %v, want %v", got, want)
	}
}

// TestEndpointReasoningUpdates: a configured provider's reasoning_updates
// is its endpoint's declaration, on every model it serves, whatever the
// models declare; absent, the endpoint declares nothing. Every built-in
// endpoint declares it (their APIs take reasoning changes during a run),
// no inline route's does.
func TestEndpointReasoningUpdates(t *testing.T) {
	for _, m := range Builtin() {
		if !m.EndpointReasoningUpdates {
			t.Errorf("built-in %s: its endpoint does not declare reasoning updates", m.ID)
		}
	}
	yes := true
	m, err := InlineRoute(InlineSpec{Provider: "corp", BaseURL: "http://127.0.0.1:1/v1", Model: "m", SupportsReasoning: &yes})
	if err != nil || m.EndpointReasoningUpdates {
		t.Errorf("inline route %+v, %v", m, err)
	}
	c, err := Load(writeConfig(t, `{"providers": {
		"lab": {"base_url": "http://h/v1", "provider_mode": "anthropic-messages", "reasoning_updates": true, "models": [
			{"id": "a", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true, "reasoning_updates": true},
			{"id": "b", "context_window_tokens": 1000, "max_output_tokens": 100}]},
		"plain": {"base_url": "http://p/v1", "models": [
			{"id": "c", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true, "reasoning_updates": true}]},
		"off": {"base_url": "http://o/v1", "reasoning_updates": false, "models": [
			{"id": "d", "context_window_tokens": 1000, "max_output_tokens": 100, "supports_reasoning": true, "reasoning_updates": true}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]bool{}
	for _, m := range c.Models() {
		if !strings.HasPrefix(m.BaseURL, "https://api.") {
			got[m.ID] = [2]bool{m.ReasoningUpdates, m.EndpointReasoningUpdates}
		}
	}
	if want := map[string][2]bool{"a": {true, true}, "b": {false, true}, "c": {true, false}, "d": {true, false}}; !maps.Equal(got, want) {
		t.Errorf("model and endpoint declarations %v, want %v", got, want)
	}
}
