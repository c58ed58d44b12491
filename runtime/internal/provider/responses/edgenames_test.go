package responses

import (
	"net/http"
	"time"

	"octet.dev/host/runtime/internal/provider/edge"
)

// The names the tests of this package use for what moved to package edge.

const maxMessage = edge.MaxMessage

func retryAfter(h http.Header, now time.Time) time.Duration { return edge.RetryAfter(h, now) }

type scrubber struct{ edge.Scrubber }

func newScrubber(apiKey string, headers map[string]string) scrubber {
	return scrubber{edge.NewScrubber(apiKey, headers)}
}

func (s scrubber) sanitize(msg string) string { return s.Sanitize(msg) }

type textOnly = edge.TextOnly

func unescape(dst, raw []byte) ([]byte, bool) { return edge.Unescape(dst, raw) }

func surrogatesPaired(raw []byte) bool { return edge.SurrogatesPaired(raw) }
