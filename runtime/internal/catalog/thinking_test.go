package catalog

import "testing"

func TestAdaptiveThinking(t *testing.T) {
	for name, want := range map[string]bool{
		// Budget only.
		"claude-haiku-4-5":           false,
		"claude-haiku-4-5-20251001":  false,
		"claude-opus-4-5-20251101":   false,
		"claude-sonnet-4-5":          false,
		"claude-opus-4-1":            false,
		"claude-sonnet-4-20250514":   false,
		"claude-3-7-sonnet-20250219": false, // old naming: version first
		// Adaptive preferred or required.
		"claude-opus-4-6":                   true,
		"claude-sonnet-4-6":                 true,
		"claude-opus-4-7":                   true,
		"claude-opus-4-8":                   true,
		"claude-sonnet-5":                   true,
		"claude-sonnet-5-20260701":          true,
		"claude-opus-5-5":                   true,
		"claude-fable-5-2":                  true,
		"claude-haiku-5-5":                  true,
		"anthropic/claude-opus-4-6":         true,
		"us.anthropic.claude-opus-4-8-v1:0": true,
		"claude-opus-4-6@20260205":          true,
		"Claude-Sonnet-4.6":                 true,
		// Unreadable names keep the budget form.
		"house-claude": false,
		"claude-x":     false,
		"claude-":      false,
		"glm-4.6":      false,
		"":             false,
	} {
		if got := AdaptiveThinking(name); got != want {
			t.Errorf("AdaptiveThinking(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestBuiltinThinkingForms pins the thinking form of every built-in Claude
// model: only the 4.5 generation still takes a budget.
func TestBuiltinThinkingForms(t *testing.T) {
	budget := map[string]bool{"claude-haiku-4-5": true, "claude-opus-4-5-20251101": true}
	for _, m := range builtinModels() {
		if m.Mode != ModeAnthropicMessages {
			continue
		}
		if got := AdaptiveThinking(m.APIModel); got == budget[m.APIModel] {
			t.Errorf("%s: adaptive = %v", m.APIModel, got)
		}
	}
}
