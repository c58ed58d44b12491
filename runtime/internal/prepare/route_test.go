package prepare

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/provider"
)

// builtinOpenAI is a built-in OpenAI entry of the catalog.
func builtinOpenAI(t *testing.T, home string) catalog.Model {
	t.Helper()
	cat, err := catalog.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cat.Models() {
		if m.Provider == catalog.ProviderOpenAI && !m.Inline {
			return m
		}
	}
	t.Fatal("no built-in OpenAI model")
	return catalog.Model{}
}

// TestResolveRouteCredentials: a catalog route's key comes from its
// environment variable, else from ~/.octet/credentials/<provider>.json; a
// file that is not JSON is no key (credentials_missing for a built-in
// provider), a file too large is config_invalid naming it, and the route
// the factory gets carries the key found.
func TestResolveRouteCredentials(t *testing.T) {
	e := newEnv(t)
	m := builtinOpenAI(t, e.home)
	var got Route
	e.cfg.NewProvider = func(r Route) (provider.Provider, error) { got = r; return &testProv{t: t}, nil }
	credFile := filepath.Join(e.home, ".octet", "credentials", "openai.json")
	resolve := func() (Resolved, *RunError) { return ResolveRoute(context.Background(), e.cfg, m.ID, nil) }

	if _, err := resolve(); err == nil || err.Code != protocol.CodeCredentialsMissing || !strings.Contains(err.Message, m.CredentialEnv) {
		t.Fatalf("no key anywhere: %v", err)
	}
	writeRes(t, credFile, `{"api_key":" sk-from-file "}`)
	if r, err := resolve(); err != nil || r.Key != "sk-from-file" || got.APIKey != "sk-from-file" || got.ModelID != m.ID {
		t.Fatalf("key from the file: %+v, %v (route %+v)", r.Key, err, got.ModelID)
	}
	if !got.AcceptsPromptCacheKey {
		t.Error("a built-in OpenAI route does not accept prompt_cache_key")
	}
	e.cfg.Getenv = func(k string) string {
		if k == m.CredentialEnv {
			return "sk-from-env"
		}
		return ""
	}
	if r, err := resolve(); err != nil || r.Key != "sk-from-env" {
		t.Fatalf("the environment comes first: %q, %v", r.Key, err)
	}
	e.cfg.Getenv = func(string) string { return "" }
	writeRes(t, credFile, `not json`)
	if _, err := resolve(); err == nil || err.Code != protocol.CodeCredentialsMissing {
		t.Fatalf("a file that is not JSON: %v", err)
	}
	writeRes(t, credFile, strings.Repeat(" ", 1<<20))
	if _, err := resolve(); err == nil || err.Code != protocol.CodeConfigInvalid || !strings.Contains(err.Message, "credentials/openai.json") {
		t.Fatalf("a file too large: %v", err)
	}
}

// TestResolveRouteRefusals: each way a route fails, with its code, and a
// key never in a message.
func TestResolveRouteRefusals(t *testing.T) {
	const key = "sk-very-secret-key"
	inline := func() *InlineRoute {
		return &InlineRoute{Provider: "local", BaseURL: "http://127.0.0.1:9/v1", APIKey: key}
	}
	cases := []struct {
		name       string
		model      string
		route      func() *InlineRoute
		factoryErr error
		code       protocol.Code
		msg        string
	}{
		{"no base_url", "m", func() *InlineRoute { r := inline(); r.BaseURL = ""; return r }, nil, protocol.CodeRouteInvalid, "need base_url"},
		{"bad header", "m", func() *InlineRoute { r := inline(); r.Headers = map[string]string{"Authorization": "x"}; return r }, nil, protocol.CodeHeadersRejected, ""},
		{"bad mode", "m", func() *InlineRoute { r := inline(); r.Mode = "carrier-pigeon"; return r }, nil, protocol.CodeRouteInvalid, ""},
		{"unknown model", "no-such-model", func() *InlineRoute { return nil }, nil, protocol.CodeModelNotFound, `no model "no-such-model"`},
		{"unsupported mode", "m", inline, UnsupportedModeError{Mode: "x"}, protocol.CodeUnsupported, "provider_mode x is not served"},
		{"factory error", "m", inline, errors.New("cannot dial with " + key), protocol.CodeRouteInvalid, "cannot dial with [redacted]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.factoryErr = c.factoryErr
			_, err := ResolveRoute(context.Background(), e.cfg, c.model, c.route())
			if err == nil || err.Code != c.code || !strings.Contains(err.Message, c.msg) {
				t.Fatalf("want %s (%q), got %v", c.code, c.msg, err)
			}
			if strings.Contains(err.Message, key) {
				t.Errorf("the key is in the message: %s", err.Message)
			}
		})
	}
}

// TestResolveRouteDiscovered: "provider/model" of a configured provider
// whose model is not listed resolves to the provider's route with the
// discovered defaults; a built-in provider's unknown model does not.
func TestResolveRouteDiscovered(t *testing.T) {
	e := newEnv(t)
	writeRes(t, filepath.Join(e.home, ".octet", "models.json"), `{"providers":{"lab":{"base_url":"http://127.0.0.1:9/v1",
		"models":[{"id":"listed","context_window_tokens":1000,"max_output_tokens":100}]}}}`)
	r, err := ResolveRoute(context.Background(), e.cfg, "lab/found-live", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model.APIModel != "found-live" || r.Model.BaseURL != "http://127.0.0.1:9/v1" || r.Model.ContextWindowTokens != DiscoveredContextWindow || r.Key != "" {
		t.Errorf("discovered route: %+v", r.Model)
	}
	if _, err := ResolveRoute(context.Background(), e.cfg, "openai/not-a-model", nil); err == nil || err.Code != protocol.CodeModelNotFound {
		t.Errorf("a built-in provider's unknown model: %v", err)
	}
}
