package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestBuiltinWellFormed checks every built-in entry against the catalog's
// invariants.
func TestBuiltinWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Builtin() {
		t.Run(m.ID, func(t *testing.T) {
			if m.ID == "" || m.Name == "" || m.Provider == "" || m.APIModel == "" {
				t.Fatalf("empty identity field: %+v", m)
			}
			if seen[m.ID] {
				t.Errorf("duplicate ID %q", m.ID)
			}
			seen[m.ID] = true
			if strings.HasPrefix(m.ID, InlineIDPrefix) {
				t.Errorf("ID %q starts with the reserved inline prefix", m.ID)
			}
			if strings.Contains(m.ID, "/") {
				t.Errorf("ID %q contains '/', which is reserved for provider/model lookups", m.ID)
			}
			if m.APIModel != m.ID {
				t.Errorf("APIModel = %q, want the ID %q", m.APIModel, m.ID)
			}
			if m.Inline {
				t.Error("built-in model is marked Inline")
			}
			if !m.Mode.Valid() {
				t.Errorf("unknown mode %q", m.Mode)
			}
			if !(m.ContextWindowTokens > m.MaxOutputTokens && m.MaxOutputTokens > 0) {
				t.Errorf("want window > max output > 0, got window %d, output %d", m.ContextWindowTokens, m.MaxOutputTokens)
			}
			if len(m.InputModalities) == 0 || m.InputModalities[0] != ModalityText {
				t.Errorf("modalities %v do not start with text", m.InputModalities)
			}
			if norm, err := normalizeModalities(m.InputModalities, nil); err != nil || !slices.Equal(norm, m.InputModalities) {
				t.Errorf("modalities %v are not canonical (normalized %v, err %v)", m.InputModalities, norm, err)
			}
			if c := m.Cost; c != nil {
				if c.Currency != CurrencyUSD {
					t.Errorf("currency = %q, want USD", c.Currency)
				}
				if c.Input <= 0 || c.Output <= 0 || c.CacheRead < 0 || c.CacheWrite < 0 {
					t.Errorf("implausible prices %+v", *c)
				}
				if c.CacheRead > c.Input {
					t.Errorf("cache read %v costs more than input %v", c.CacheRead, c.Input)
				}
			}
			switch m.Provider {
			case ProviderOpenAI:
				if m.BaseURL != OpenAIBaseURL || m.CredentialEnv != OpenAICredentialEnv {
					t.Errorf("OpenAI route has base %q, credential %q", m.BaseURL, m.CredentialEnv)
				}
				if m.Mode == ModeAnthropicMessages {
					t.Error("OpenAI route uses the Anthropic wire mode")
				}
			case ProviderAnthropic:
				if m.BaseURL != AnthropicBaseURL || m.CredentialEnv != AnthropicCredentialEnv {
					t.Errorf("Anthropic route has base %q, credential %q", m.BaseURL, m.CredentialEnv)
				}
				if m.Mode != ModeAnthropicMessages {
					t.Errorf("Anthropic route uses mode %q", m.Mode)
				}
			default:
				t.Errorf("unknown built-in provider %q", m.Provider)
			}
			if err := ValidateBaseURL(m.BaseURL); err != nil {
				t.Errorf("base URL: %v", err)
			}
			if slices.Contains(m.InputModalities, ModalityAudio) && !m.Audio() {
				t.Error("audio model on a route that cannot carry audio")
			}
		})
	}
}

// TestBuiltinCoverage pins the entries the brief asks for, so an edit that
// drops one is noticed.
func TestBuiltinCoverage(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{
		"gpt-6.2-sol", "gpt-6-luna", "gpt-5.6", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1",
		"gpt-5.3-codex", "gpt-4.1", "gpt-4o", "o3", "gpt-audio-1.5",
		"claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-4-5", "claude-opus-4-6",
	} {
		if _, ok := c.Lookup(id); !ok {
			t.Errorf("built-in model %q is missing", id)
		}
	}
	audio := 0
	for _, m := range Builtin() {
		if m.Audio() {
			audio++
		}
	}
	if audio == 0 {
		t.Error("no built-in model takes native audio")
	}
}

// TestFamilyDefaults pins the bare family names the protocol source's
// examples use: gpt-5.6 resolves to a route shaped like the family's
// flagship tier (the assumption documented beside the entry), and
// gpt-audio-1.5 takes text and audio but no image, as OpenAI's model page
// states.
func TestFamilyDefaults(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	def, ok := c.Lookup("gpt-5.6")
	if !ok {
		t.Fatal("gpt-5.6 is not in the catalog")
	}
	sol, _ := c.Lookup("gpt-5.6-sol")
	if def.APIModel != "gpt-5.6" || def.Provider != ProviderOpenAI || def.Mode != sol.Mode ||
		def.ContextWindowTokens != sol.ContextWindowTokens || def.MaxOutputTokens != sol.MaxOutputTokens ||
		!slices.Equal(def.InputModalities, sol.InputModalities) || def.SupportsReasoning != sol.SupportsReasoning ||
		(def.Cost == nil) != (sol.Cost == nil) {
		t.Errorf("gpt-5.6 = %+v\nwant the shape of gpt-5.6-sol %+v", def, sol)
	}
	if m, ok := c.Lookup("openai/gpt-5.6"); !ok || m.ID != "gpt-5.6" {
		t.Errorf("openai/gpt-5.6 = %+v, %v", m, ok)
	}
	audio, _ := c.Lookup("gpt-audio-1.5")
	if audio.Vision() || !audio.Audio() || !slices.Equal(audio.EffectiveModalities(), []string{ModalityText, ModalityAudio}) {
		t.Errorf("gpt-audio-1.5 modalities %v (vision %v, audio %v)", audio.InputModalities, audio.Vision(), audio.Audio())
	}
}
