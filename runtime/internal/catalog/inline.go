package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"octet.dev/host/runtime/internal/customheader"
)

// Defaults and limits for inline routes.
const (
	// DefaultInlineContextWindow is used when an inline route names no window.
	DefaultInlineContextWindow = 128_000
	// DefaultInlineMaxOutput is used when an inline route names no output cap.
	DefaultInlineMaxOutput = 16_384
	// MaxHeaderCount is the largest number of custom headers a route may set.
	MaxHeaderCount = customheader.MaxEntries
)

// InlineSpec is the route part of a run request that defines its own route
// (CONTRACT §8). Zero values and nil pointers mean "not given".
type InlineSpec struct {
	// Provider names the route's provider; required.
	Provider string
	// BaseURL is the endpoint root; required and checked by ValidateBaseURL.
	BaseURL string
	// Model is the model name sent to the provider; required.
	Model string
	// Mode is the provider_mode; empty means openai-compatible.
	Mode string
	// ContextWindowTokens and MaxOutputTokens default to
	// DefaultInlineContextWindow and DefaultInlineMaxOutput (at most half
	// the window) when nil; a value must be positive.
	ContextWindowTokens *int
	MaxOutputTokens     *int
	// InputModalities may contain "text", "image" and "audio".
	InputModalities []string
	// Vision is the legacy flag: true is the same as declaring "image".
	Vision *bool
	// SupportsReasoning defaults to false.
	SupportsReasoning *bool
}

// InlineRoute validates spec and builds its Model. The Model's ID is
// "inline-" followed by the first 16 hex digits of
// SHA-256(provider NUL base_url NUL mode NUL model), where base_url has its
// trailing slashes trimmed and mode is the effective wire mode; its Name and
// APIModel are the requested model name. Errors name the field that failed
// and never echo the base URL.
func InlineRoute(spec InlineSpec) (Model, error) {
	if err := validateProviderName(spec.Provider); err != nil {
		return Model{}, err
	}
	if err := ValidateBaseURL(spec.BaseURL); err != nil {
		return Model{}, err
	}
	if err := validateModelName(spec.Model); err != nil {
		return Model{}, err
	}
	mode := ModeOpenAICompatible
	if spec.Mode != "" {
		m, err := ParseMode(spec.Mode)
		if err != nil {
			return Model{}, err
		}
		mode = m
	}
	window := DefaultInlineContextWindow
	if spec.ContextWindowTokens != nil {
		window = *spec.ContextWindowTokens
	}
	output := min(DefaultInlineMaxOutput, window/2)
	if spec.MaxOutputTokens != nil {
		output = *spec.MaxOutputTokens
	}
	window, output, err := tokenLimits(window, output)
	if err != nil {
		return Model{}, err
	}
	modalities, err := normalizeModalities(spec.InputModalities, spec.Vision)
	if err != nil {
		return Model{}, err
	}
	base := strings.TrimRight(spec.BaseURL, "/")
	reasoning := spec.SupportsReasoning != nil && *spec.SupportsReasoning
	return Model{
		ID:                  InlineID(spec.Provider, base, mode, spec.Model),
		Provider:            spec.Provider,
		Name:                spec.Model,
		APIModel:            spec.Model,
		Mode:                mode,
		ContextWindowTokens: window,
		MaxOutputTokens:     output,
		InputModalities:     modalities,
		SupportsReasoning:   reasoning,
		BaseURL:             base,
		Inline:              true,
	}, nil
}

// InlineID returns the ID of the inline route with the given provider, base
// URL, mode and model. The parts are joined with NUL bytes, which none of
// them may contain, so distinct routes get distinct digests.
func InlineID(provider, baseURL string, mode Mode, model string) string {
	sum := sha256.Sum256([]byte(provider + "\x00" + baseURL + "\x00" + string(mode) + "\x00" + model))
	return InlineIDPrefix + hex.EncodeToString(sum[:])[:16]
}
