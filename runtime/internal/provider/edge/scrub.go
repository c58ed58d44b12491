package edge

import (
	"sort"
	"strings"

	"octet.dev/host/internal/textutil"
)

// MaxMessage bounds provider.Error.Message, in bytes.
const MaxMessage = 512

// redacted replaces a credential in a message.
const redacted = "[redacted]"

// minSecretLen keeps short, common header values ("1", "json") from being
// treated as secrets and shredding messages.
const minSecretLen = 8

// Scrubber removes credentials from text that may echo them: the API key and
// custom header values (which often carry keys too, e.g. Azure's api-key or
// a gateway's Authorization). The zero Scrubber knows no secret but still
// masks, cleans and bounds.
type Scrubber struct {
	secrets []string // longest first, so a secret that contains another goes whole
}

// NewScrubber returns a Scrubber for a route's API key and custom headers.
func NewScrubber(apiKey string, headers map[string]string) Scrubber {
	var s []string
	if apiKey != "" {
		s = append(s, apiKey)
	}
	for _, v := range headers {
		if len(v) >= minSecretLen {
			s = append(s, v)
		}
	}
	sort.Slice(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return Scrubber{secrets: s}
}

// Sanitize returns msg without credentials or control characters, as valid
// UTF-8, bounded to MaxMessage bytes (CONTRACT §11: keys never appear in
// errors).
func (s Scrubber) Sanitize(msg string) string {
	for _, sec := range s.secrets {
		msg = strings.ReplaceAll(msg, sec, redacted)
	}
	msg = RedactMasked(msg)
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	msg = strings.TrimSpace(msg)
	return textutil.Fit(msg, MaxMessage)
}

// RedactMasked replaces key-like words that contain a run of '*', the way
// APIs echo a wrong key ("sk-abc***********wxyz"): the visible ends are
// still part of a credential.
func RedactMasked(msg string) string {
	if !strings.Contains(msg, "***") {
		return msg
	}
	var b strings.Builder
	i := 0
	for i < len(msg) {
		if !isKeyChar(msg[i]) {
			b.WriteByte(msg[i])
			i++
			continue
		}
		j := i
		for j < len(msg) && isKeyChar(msg[j]) {
			j++
		}
		word := msg[i:j]
		if strings.Contains(word, "***") {
			b.WriteString(redacted)
		} else {
			b.WriteString(word)
		}
		i = j
	}
	return b.String()
}

func isKeyChar(c byte) bool {
	return c == '-' || c == '_' || c == '*' || c == '.' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
