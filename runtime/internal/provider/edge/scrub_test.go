package edge

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestScrubber(t *testing.T) {
	s := NewScrubber("sk-abcdefghijklmnop", map[string]string{
		"X-Short": "v1", "Api-Key": "azure-secret-key", "X-Longer": "azure-secret-key-2",
	})
	for _, tc := range []struct{ in, want string }{
		{"key sk-abcdefghijklmnop here", "key [redacted] here"},
		{"masked sk-abc**********mnop!", "masked [redacted]!"},
		{"azure-secret-key and v1", "[redacted] and v1"},
		{"azure-secret-key-2", "[redacted]"}, // the longer secret goes whole
		{"  ctl\x00chars\ttab\r\n ", "ctl chars tab"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"a *** b", "a [redacted] b"},
		{"no secrets", "no secrets"},
	} {
		if got := s.Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{strings.Repeat("a", 2000), strings.Repeat("é", 600), strings.Repeat("€", 300)} {
		got := s.Sanitize(in)
		if len(got) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
			t.Errorf("Sanitize of %d bytes: %d bytes, valid %v, %q…", len(in), len(got), utf8.ValidString(got), got[len(got)-8:])
		}
	}
	var zero Scrubber
	if got := zero.Sanitize(" plain\n"); got != "plain" {
		t.Errorf("zero Scrubber: %q", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{map[string]string{"Retry-After": " 1.5 "}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "1e300"}, time.Duration(1<<63 - 1)},
		{map[string]string{"Retry-After": "NaN"}, 0},
		{map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:05:05 GMT"}, time.Minute},
		{map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:00:00 GMT"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "-1", "Retry-After": "9"}, 9 * time.Second},
		{map[string]string{"Retry-After-Ms": "x", "Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After-Ms": "Inf"}, time.Duration(1<<63 - 1)},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
