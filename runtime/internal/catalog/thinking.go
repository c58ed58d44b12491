package catalog

import (
	"strconv"
	"strings"
)

// AdaptiveThinking reports whether an Anthropic model is asked to think with
// {"type":"adaptive"} (the model sizes its own thinking, guided by the
// effort) rather than with a fixed budget_tokens.
//
// Claude Opus 4.6 and Sonnet 4.6 take both and deprecate the budget; Opus
// 4.7, 4.8 and every Claude 5 model reject budget_tokens with HTTP 400;
// earlier models (Opus 4.5, Haiku 4.5 and before) know only the budget. The
// rule reads the Claude version from the model name, after any gateway
// prefix ("anthropic/", "us.anthropic."): a name it cannot read keeps the
// budget form, which every Anthropic-compatible server understands.
func AdaptiveThinking(apiModel string) bool {
	name := strings.ToLower(apiModel)
	i := strings.LastIndex(name, "claude-")
	if i < 0 {
		return false
	}
	// claude-<family>-<major>[-<minor>][-<date>|@<date>|:<version>]
	parts := strings.FieldsFunc(name[i+len("claude-"):], func(r rune) bool { return r == '-' || r == '@' || r == ':' || r == '.' })
	if len(parts) < 2 || strings.Trim(parts[0], "abcdefghijklmnopqrstuvwxyz") != "" {
		return false // claude-3-7-sonnet and older put the version first
	}
	major, ok := version(parts[1])
	if !ok {
		return false
	}
	minor := 0
	if len(parts) > 2 {
		if m, ok := version(parts[2]); ok {
			minor = m
		}
	}
	return major >= 5 || (major == 4 && minor >= 6)
}

// version reads a one- or two-digit version number; a longer run of digits
// is a date, not a version.
func version(s string) (int, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
