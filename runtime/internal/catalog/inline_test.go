package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestValidateBaseURL(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr string // empty: valid
	}{
		{"http://127.0.0.1:1234/v1", ""},
		{"https://api.openai.com/v1", ""},
		{"https://api.anthropic.com", ""},
		{"https://api.anthropic.com/", ""},
		{"http://[::1]:8080/v1", ""},
		{"http://localhost", ""},
		{"", "empty"},
		{"api.openai.com/v1", "absolute"},
		{"/v1", "absolute"},
		{"ftp://example.com/v1", "http or https"},
		{"file:///etc/passwd", "http or https"},
		{"HTTP://example.com", ""}, // url.Parse lower-cases the scheme
		{"http:example.com", "host"},
		{"http:///v1", "host"},
		{"http://:8080/v1", "host"},
		{"https://user:secret@example.com/v1", "userinfo"},
		{"https://user@example.com/v1", "userinfo"},
		{"https://example.com/v1?key=secret", "query"},
		{"https://example.com/v1?", "query"},
		{"https://example.com/v1#frag", "fragment"},
		{"https://example.com/v1#", "fragment"},
		{"https://exa mple.com/v1", "spaces or control"},
		{"https://example.com/v1\n", "spaces or control"},
		{"https://example.com:99999999/v1", "port"},
		{"https://example.com:0/v1", "port"},
		{"https://example.com:443/v1", ""},
		{"https://exa%zzmple.com/", "not a valid URL"},
	}
	for _, tt := range tests {
		err := ValidateBaseURL(tt.raw)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateBaseURL(%q) = %v, want nil", tt.raw, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ValidateBaseURL(%q) = %v, want error containing %q", tt.raw, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("ValidateBaseURL(%q) error echoes the URL: %v", tt.raw, err)
		}
	}
}

// wantInlineID computes the documented derivation independently.
func wantInlineID(provider, base, mode, model string) string {
	sum := sha256.Sum256([]byte(provider + "\x00" + base + "\x00" + mode + "\x00" + model))
	return "inline-" + hex.EncodeToString(sum[:])[:16]
}

func TestInlineRoute(t *testing.T) {
	tests := []struct {
		name    string
		spec    InlineSpec
		want    Model
		wantErr string
	}{
		{
			name: "source example",
			spec: InlineSpec{
				Provider: "local", BaseURL: "http://127.0.0.1:1234/v1", Model: "local-model",
				Mode: "openai-compatible", ContextWindowTokens: new(32768), MaxOutputTokens: new(4096),
				InputModalities: []string{"image"}, SupportsReasoning: boolPtr(false),
			},
			want: Model{
				ID:       wantInlineID("local", "http://127.0.0.1:1234/v1", "openai-compatible", "local-model"),
				Provider: "local", Name: "local-model", APIModel: "local-model",
				Mode: ModeOpenAICompatible, ContextWindowTokens: 32768, MaxOutputTokens: 4096,
				InputModalities: []string{"text", "image"}, BaseURL: "http://127.0.0.1:1234/v1", Inline: true,
			},
		},
		{
			name: "defaults and trailing slash",
			spec: InlineSpec{Provider: "lab", BaseURL: "https://llm.lab.example/v1/", Model: "m"},
			want: Model{
				ID:       wantInlineID("lab", "https://llm.lab.example/v1", "openai-compatible", "m"),
				Provider: "lab", Name: "m", APIModel: "m", Mode: ModeOpenAICompatible,
				ContextWindowTokens: DefaultInlineContextWindow, MaxOutputTokens: DefaultInlineMaxOutput,
				InputModalities: []string{"text"}, BaseURL: "https://llm.lab.example/v1", Inline: true,
			},
		},
		{
			name: "anthropic with vision flag and reasoning",
			spec: InlineSpec{
				Provider: "corp", BaseURL: "https://gw.corp.example/anthropic", Model: "claude-x",
				Mode: "anthropic-messages", ContextWindowTokens: new(200000), MaxOutputTokens: new(64000),
				Vision: boolPtr(true), SupportsReasoning: boolPtr(true),
			},
			want: Model{
				ID:       wantInlineID("corp", "https://gw.corp.example/anthropic", "anthropic-messages", "claude-x"),
				Provider: "corp", Name: "claude-x", APIModel: "claude-x", Mode: ModeAnthropicMessages,
				ContextWindowTokens: 200000, MaxOutputTokens: 64000, InputModalities: []string{"text", "image"},
				SupportsReasoning: true, BaseURL: "https://gw.corp.example/anthropic", Inline: true,
			},
		},
		{
			name: "audio declared on responses stays declared",
			spec: InlineSpec{
				Provider: "p", BaseURL: "http://h/v1", Model: "m", Mode: "openai-responses",
				ContextWindowTokens: new(1000), MaxOutputTokens: new(100), InputModalities: []string{"text", "audio"},
			},
			want: Model{
				ID:       wantInlineID("p", "http://h/v1", "openai-responses", "m"),
				Provider: "p", Name: "m", APIModel: "m", Mode: ModeOpenAIResponses,
				ContextWindowTokens: 1000, MaxOutputTokens: 100, InputModalities: []string{"text", "audio"},
				BaseURL: "http://h/v1", Inline: true,
			},
		},
		{name: "no provider", spec: InlineSpec{BaseURL: "http://h/v1", Model: "m"}, wantErr: "provider is required"},
		{name: "provider with slash", spec: InlineSpec{Provider: "a/b", BaseURL: "http://h/v1", Model: "m"}, wantErr: "provider name"},
		{name: "provider inline prefix", spec: InlineSpec{Provider: "inline-x", BaseURL: "http://h/v1", Model: "m"}, wantErr: "inline-"},
		{name: "no base url", spec: InlineSpec{Provider: "p", Model: "m"}, wantErr: "base_url is empty"},
		{name: "base url with query", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1?k=v", Model: "m"}, wantErr: "query"},
		{name: "no model", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1"}, wantErr: "model is required"},
		{name: "model with NUL", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "a\x00b"}, wantErr: "control"},
		{name: "bad mode", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", Mode: "openai"}, wantErr: "provider_mode"},
		{name: "negative window", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", ContextWindowTokens: new(-1)}, wantErr: "context_window_tokens"},
		{name: "output not below window", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", ContextWindowTokens: new(4096), MaxOutputTokens: new(4096)}, wantErr: "smaller than"},
		{name: "window too large", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", ContextWindowTokens: new(MaxTokenLimit + 1), MaxOutputTokens: new(10)}, wantErr: "larger than"},
		{name: "unknown modality", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", InputModalities: []string{"video"}}, wantErr: "unknown modality"},
		{name: "vision contradiction", spec: InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", InputModalities: []string{"image"}, Vision: boolPtr(false)}, wantErr: "vision is false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InlineRoute(tt.spec)
			checkResult(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestInlineIDDistinguishesRoutes(t *testing.T) {
	base := InlineSpec{Provider: "p", BaseURL: "http://h/v1", Model: "m", Mode: "openai-compatible"}
	variants := []InlineSpec{
		base,
		{Provider: "q", BaseURL: base.BaseURL, Model: base.Model, Mode: base.Mode},
		{Provider: base.Provider, BaseURL: "http://h/v2", Model: base.Model, Mode: base.Mode},
		{Provider: base.Provider, BaseURL: base.BaseURL, Model: "n", Mode: base.Mode},
		{Provider: base.Provider, BaseURL: base.BaseURL, Model: base.Model, Mode: "openai-responses"},
		// Moving text across the field boundary must change the ID.
		{Provider: "p", BaseURL: "http://h/v1", Model: "m2", Mode: base.Mode},
	}
	seen := map[string]int{}
	for i, v := range variants {
		m, err := InlineRoute(v)
		if err != nil {
			t.Fatalf("variant %d: %v", i, err)
		}
		if j, dup := seen[m.ID]; dup {
			t.Errorf("variants %d and %d share ID %s", j, i, m.ID)
		}
		seen[m.ID] = i
		if !strings.HasPrefix(m.ID, InlineIDPrefix) || len(m.ID) != len(InlineIDPrefix)+16 {
			t.Errorf("variant %d: malformed ID %q", i, m.ID)
		}
	}
	// The same route always gets the same ID, and a trailing slash or the
	// default mode does not change it.
	a, _ := InlineRoute(base)
	b, _ := InlineRoute(InlineSpec{Provider: "p", BaseURL: "http://h/v1/", Model: "m"})
	if a.ID != b.ID {
		t.Errorf("equivalent routes got IDs %s and %s", a.ID, b.ID)
	}
}

func TestInlineIDsNeverCollideWithCatalog(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		if strings.HasPrefix(m.ID, InlineIDPrefix) {
			t.Errorf("catalog ID %q uses the inline prefix", m.ID)
		}
		r, err := InlineRoute(InlineSpec{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.APIModel, Mode: string(m.Mode)})
		if err != nil {
			t.Fatalf("inline route for %s: %v", m.ID, err)
		}
		if _, ok := c.Lookup(r.ID); ok {
			t.Errorf("inline ID %s for %s resolves in the catalog", r.ID, m.ID)
		}
	}
}
