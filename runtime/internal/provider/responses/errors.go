package responses

import (
	"bytes"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

// maxErrorBody bounds how much of a non-2xx body is read.
const maxErrorBody = 64 << 10

// maxMessage bounds provider.Error.Message, in bytes.
const maxMessage = 512

// redacted replaces a credential in a message.
const redacted = "[redacted]"

// scrubber removes credentials from text that may echo them: the API key and
// custom header values (which often carry keys too, e.g. Azure's api-key).
type scrubber struct {
	secrets []string // longest first, so a secret that contains another goes whole
}

// minSecretLen keeps short, common header values ("1", "json") from being
// treated as secrets and shredding messages.
const minSecretLen = 8

func newScrubber(apiKey string, headers map[string]string) scrubber {
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
	return scrubber{secrets: s}
}

// sanitize returns msg without credentials or control characters, as valid
// UTF-8, bounded to maxMessage bytes (CONTRACT §11: keys never appear in
// errors).
func (s scrubber) sanitize(msg string) string {
	for _, sec := range s.secrets {
		msg = strings.ReplaceAll(msg, sec, redacted)
	}
	msg = redactMasked(msg)
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	msg = strings.TrimSpace(msg)
	if len(msg) > maxMessage {
		const ellipsis = "…"
		cut := maxMessage - len(ellipsis)
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + ellipsis
	}
	return msg
}

// redactMasked replaces key-like words that contain a run of '*', the way
// OpenAI echoes a wrong key ("sk-abc***********wxyz"): the visible ends are
// still part of a credential.
func redactMasked(msg string) string {
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

// errorEnvelope is an OpenAI-style error body. Some compatible servers put
// the fields at the top level instead of under "error".
type errorEnvelope struct {
	Error   *wireError `json:"error"`
	Message flexString `json:"message"`
	Type    flexString `json:"type"`
	Code    flexString `json:"code"`
}

// parseErrorBody extracts (code, message) from an error body. When the body
// is not a known envelope, the message is the body text itself.
func parseErrorBody(body []byte) (code, msg string) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		// Some gateways wrap the envelope in an array.
		var list []errorEnvelope
		if json.Unmarshal(body, &list, unmarshalOpts) == nil && len(list) > 0 {
			return envelopeFields(&list[0])
		}
	}
	var env errorEnvelope
	if json.Unmarshal(body, &env, unmarshalOpts) == nil {
		if code, msg := envelopeFields(&env); code != "" || msg != "" {
			return code, msg
		}
	}
	return "", string(body)
}

func envelopeFields(env *errorEnvelope) (code, msg string) {
	if e := env.Error; e != nil {
		return e.code(), string(e.Message)
	}
	w := wireError{Message: env.Message, Type: env.Type, Code: env.Code}
	return w.code(), string(w.Message)
}

// retryAfter reads the server's requested delay: retry-after-ms first (an
// OpenAI extension, milliseconds), then Retry-After as delta-seconds or an
// HTTP-date relative to now. It is zero when neither is usable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return clampDuration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return clampDuration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// clampDuration converts nanoseconds to a Duration without overflow (NaN and
// +Inf are rejected by the callers' >= 0 checks or clamp to the maximum).
func clampDuration(ns float64) time.Duration {
	if math.IsNaN(ns) || ns <= 0 {
		return 0
	}
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
