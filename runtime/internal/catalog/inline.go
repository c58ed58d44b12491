package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/runtime/internal/customheader"
)

// Defaults and limits for inline routes.
const (
	// DefaultInlineContextWindow is used when an inline route names no window.
	DefaultInlineContextWindow = 128_000
	// DefaultInlineMaxOutput is used when an inline route names no output cap.
	DefaultInlineMaxOutput = 16_384
	// MaxTokenLimit bounds any declared window or output cap.
	MaxTokenLimit = 100_000_000
	// MaxHeaderCount is the largest number of custom headers a route may set.
	MaxHeaderCount = customheader.MaxEntries
	// maxProviderNameLen and maxModelNameLen bound the names of a route.
	maxProviderNameLen = 64
	maxModelNameLen    = 256
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

// ValidateBaseURL checks that raw is an absolute http or https URL with a
// host and without userinfo, query or fragment. Each error says which rule
// failed; none repeats the URL, which could carry a secret.
func ValidateBaseURL(raw string) error {
	if raw == "" {
		return errors.New("base_url is empty")
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f {
			return errors.New("base_url must not contain spaces or control characters")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("base_url is not a valid URL")
	}
	if !u.IsAbs() {
		return errors.New("base_url must be an absolute URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("base_url scheme must be http or https")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return errors.New("base_url must include a host")
	}
	if u.User != nil {
		return errors.New("base_url must not contain userinfo")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return errors.New("base_url port must be between 1 and 65535")
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		return errors.New("base_url must not contain a query")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("base_url must not contain a fragment")
	}
	return nil
}

// validateProviderName checks a configured or inline provider name: 1 to 64
// ASCII letters, digits, '-', '_' or '.', not starting with "inline-".
func validateProviderName(name string) error {
	if name == "" {
		return errors.New("provider is required")
	}
	if len(name) > maxProviderNameLen {
		return fmt.Errorf("provider name is longer than %d bytes", maxProviderNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return fmt.Errorf("provider name %q may contain only ASCII letters, digits, '-', '_' and '.'", textutil.Truncate(name, 64))
		}
	}
	if name == "." || name == ".." {
		return fmt.Errorf("provider name %q is not allowed", name)
	}
	if strings.HasPrefix(name, InlineIDPrefix) {
		return fmt.Errorf("provider name must not start with %q", InlineIDPrefix)
	}
	return nil
}

// validateModelName checks a provider-side model name: 1 to 256 bytes of
// UTF-8 without control characters.
func validateModelName(name string) error {
	if name == "" {
		return errors.New("model is required")
	}
	if len(name) > maxModelNameLen {
		return fmt.Errorf("model name is longer than %d bytes", maxModelNameLen)
	}
	if !utf8.ValidString(name) {
		return errors.New("model name is not valid UTF-8")
	}
	for _, r := range name {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return errors.New("model name must not contain control characters")
		}
	}
	return nil
}

// tokenLimits validates a context window and output cap: both positive,
// the output cap smaller than the window.
func tokenLimits(window, output int) (int, int, error) {
	switch {
	case window <= 0:
		return 0, 0, errors.New("context_window_tokens must be a positive integer")
	case output <= 0:
		return 0, 0, errors.New("max_output_tokens must be a positive integer")
	case window > MaxTokenLimit:
		return 0, 0, fmt.Errorf("context_window_tokens is larger than %d", MaxTokenLimit)
	case output >= window:
		return 0, 0, errors.New("max_output_tokens must be smaller than context_window_tokens")
	}
	return window, output, nil
}
