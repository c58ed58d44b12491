package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"octet.dev/host/internal/textutil"
)

// The checks of a route's declared fields, the same for an inline route
// (InlineRoute) and for a provider of ~/.octet/models.json (config.go).
// Each error names the field that failed.

// Limits of a route's declared fields.
const (
	// MaxTokenLimit bounds any declared window or output cap.
	MaxTokenLimit = 100_000_000
	// maxProviderNameLen and maxModelNameLen bound the names of a route.
	maxProviderNameLen = 64
	maxModelNameLen    = 256
)

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
			return fmt.Errorf("provider name %q may contain only ASCII letters, digits, '-', '_' and '.'", name)
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

// ParseMode returns the Mode named by s. The match is exact: no other
// spelling or letter case is accepted.
func ParseMode(s string) (Mode, error) {
	m := Mode(s)
	if !m.Valid() {
		return "", fmt.Errorf("provider_mode must be %q, %q or %q, not %q",
			ModeOpenAICompatible, ModeOpenAIResponses, ModeAnthropicMessages, textutil.Truncate(s, 64))
	}
	return m, nil
}

// normalizeModalities validates declared input modalities and an optional
// legacy vision flag, and returns the canonical list: "text" first, then
// "image" and "audio" when present. Unknown values and duplicates are
// errors; vision true adds "image"; vision false together with "image" is a
// contradiction.
func normalizeModalities(declared []string, vision *bool) ([]string, error) {
	var image, audio bool
	seen := make(map[string]bool, len(declared))
	for _, d := range declared {
		if seen[d] {
			return nil, fmt.Errorf("input_modalities lists %q twice", d)
		}
		seen[d] = true
		switch d {
		case ModalityText:
		case ModalityImage:
			image = true
		case ModalityAudio:
			audio = true
		default:
			return nil, fmt.Errorf("input_modalities: unknown modality %q (allowed: text, image, audio)", d)
		}
	}
	if vision != nil {
		if *vision {
			image = true
		} else if image {
			return nil, fmt.Errorf("vision is false but input_modalities includes image")
		}
	}
	out := []string{ModalityText}
	if image {
		out = append(out, ModalityImage)
	}
	if audio {
		out = append(out, ModalityAudio)
	}
	return out, nil
}
