package discovery

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/runtime/internal/provider/edge"
)

// redacted replaces a credential in a message.
const redacted = "[redacted]"

// scrubber removes an endpoint's API key from text that may echo it.
type scrubber struct {
	secrets []string // longest first, so a form that contains another goes whole
}

// newScrubber returns a scrubber for key as sent (trimmed) and URL-escaped,
// the way a server may echo it.
func newScrubber(key string) scrubber {
	var s []string
	add := func(v string) {
		if v != "" && !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	trimmed := strings.TrimSpace(key)
	add(trimmed)
	add(url.QueryEscape(trimmed))
	add(url.PathEscape(trimmed))
	sort.SliceStable(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return scrubber{secrets: s}
}

// sanitize returns msg without the key or a masked echo of a key, as valid
// UTF-8 without control characters, trimmed and bounded to MaxMessageBytes.
// The key is removed again after the control characters are replaced, so a
// key split by a control character cannot survive.
func (s scrubber) sanitize(msg string) string {
	msg = s.scrub(msg)
	msg = edge.RedactMasked(msg)
	msg = clean(msg)
	msg = s.scrub(msg)
	return textutil.Fit(msg, MaxMessageBytes)
}

func (s scrubber) scrub(msg string) string {
	for _, sec := range s.secrets {
		msg = strings.ReplaceAll(msg, sec, redacted)
	}
	return msg
}

// clean returns msg as valid UTF-8 with control characters replaced by
// spaces, runs of spaces folded, and the ends trimmed.
func clean(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, msg)
	return strings.Join(strings.Fields(msg), " ")
}

// isControl reports C0 controls, DEL and C1 controls.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0
}
