package edgetest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// Summary is what a consumer ends up with after a whole stream.
type Summary struct {
	Text      string
	Reasoning string
	// Blocks are the authenticated reasoning blocks, as the agent loop
	// records them (provider.ReasoningCollector).
	Blocks    []provider.ReasoningBlock
	ToolCalls []provider.ToolCall
	Usage     *provider.Usage
	Finish    string
	// Media are the output media reported (EventMedia), in order; the
	// caller owns their spool files.
	Media []provider.OutputMedia
}

// Signed returns s with one reasoning block holding all of s.Reasoning,
// authenticated by sig: the usual shape of a turn that reasoned once.
func (s Summary) Signed(sig string) Summary {
	return s.SignedItem("", sig)
}

// SignedItem is Signed for a block the provider gave an id.
func (s Summary) SignedItem(id, sig string) Summary {
	s.Blocks = []provider.ReasoningBlock{{Text: s.Reasoning, Signature: sig, ID: id}}
	return s
}

// Drain reads a stream to its end, checking the ordering rules every stream
// must keep: nothing after EventFinish, a finish exactly when Err is nil,
// no event after the end. check, when not nil, sees every event first (a
// package's own rules, such as no empty content events).
func Drain(t testing.TB, s provider.Stream, check func(testing.TB, provider.StreamEvent)) (Summary, []provider.StreamEvent, error) {
	t.Helper()
	defer s.Close()
	var (
		sum       Summary
		events    []provider.StreamEvent
		reasoning provider.ReasoningCollector
	)
	for s.Next() {
		ev := s.Event()
		if sum.Finish != "" {
			t.Fatalf("event %+v after EventFinish", ev)
		}
		if check != nil {
			check(t, ev)
		}
		events = append(events, ev)
		reasoning.Add(ev)
		switch ev.Kind {
		case provider.EventText:
			sum.Text += ev.Text
		case provider.EventReasoning:
			sum.Reasoning, sum.Blocks = reasoning.Text(), reasoning.Blocks()
		case provider.EventToolCall:
			sum.ToolCalls = append(sum.ToolCalls, ev.ToolCall)
		case provider.EventUsage:
			u := ev.Usage
			sum.Usage = &u
		case provider.EventFinish:
			if ev.FinishReason == "" {
				t.Fatal("EventFinish without a reason")
			}
			sum.Finish = ev.FinishReason
		case provider.EventMedia:
			if ev.Media == nil {
				t.Fatal("EventMedia without media")
			}
			sum.Media = append(sum.Media, *ev.Media)
		case provider.EventResponseCreated, provider.EventSteerAccepted, provider.EventSteerPending, provider.EventSteerFailed:
			// A natively steered call's (Request.NativeSteering): no content.
		default:
			t.Fatalf("unknown event kind %d", ev.Kind)
		}
	}
	err := s.Err()
	if (err == nil) != (sum.Finish != "") {
		t.Fatalf("Err() = %v with finish %q: a nil error needs EventFinish and vice versa", err, sum.Finish)
	}
	if s.Next() {
		t.Fatal("Next returned true after the end")
	}
	return sum, events, err
}

// NewServer starts a loopback server closed when the test ends.
func NewServer(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Client returns an HTTP client with a transport of its own, whose idle
// connections are closed when the test ends so goleak sees none.
func Client(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// SSEHandler serves body as text/event-stream after reading the request.
func SSEHandler(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}
}

// StallAfter writes and flushes body as a 200 event stream, then sends
// nothing more until the request ends.
func StallAfter(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// RefusedAddr returns a loopback host:port nothing listens on.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// AsProviderError fails the test unless err is (or wraps) a *provider.Error.
func AsProviderError(t testing.TB, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	return pe
}

// ReadFixture returns the bytes of dir/name.
func ReadFixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// eachLine calls fn with every non-empty line of raw.
func eachLine(t testing.TB, raw []byte, fn func(line []byte)) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// DataEvents frames a .chunks.jsonl fixture as one "data: <line>" event per
// non-empty line, then "data: [DONE]" (fixtures/providers/SOURCES.md).
func DataEvents(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	eachLine(t, raw, func(line []byte) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteString("\n\n")
	})
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// TypedEvents frames a .chunks.jsonl fixture as one "event: <type>" +
// "data: <line>" event per non-blank line, <type> being the line's JSON
// type; a line without one fails the test (fixtures/providers/SOURCES.md).
func TypedEvents(t testing.TB, name string, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	eachLine(t, raw, func(line []byte) {
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		var typed struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &typed); err != nil || typed.Type == "" {
			t.Fatalf("%s: line without a JSON type: %s (%v)", name, line, err)
		}
		b.WriteString("event: " + typed.Type + "\ndata: ")
		b.Write(line)
		b.WriteString("\n\n")
	})
	return b.Bytes()
}

// Recorded is a .headers.json file: the status and headers recorded with
// the stream of the same stem.
type Recorded struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers"`
}

// PlainStream is what a fixture without a .headers.json is served with.
func PlainStream() Recorded {
	return Recorded{Status: http.StatusOK, Headers: map[string][]string{"Content-Type": {"text/event-stream"}}}
}

// ReadRecorded reads the .headers.json at path. A missing file fails the
// test when required, else gives PlainStream.
func ReadRecorded(t testing.TB, path string, required bool) Recorded {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		if required {
			t.Fatal(err)
		}
		return PlainStream()
	}
	var rec Recorded
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return rec
}

// Handler serves body with the recorded status and headers, except the
// framing headers the test server sets itself and any named in skip.
func (rec Recorded) Handler(body []byte, skip ...string) http.HandlerFunc {
	drop := map[string]bool{"Transfer-Encoding": true, "Connection": true, "Content-Length": true}
	for _, k := range skip {
		drop[http.CanonicalHeaderKey(k)] = true
	}
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for k, vs := range rec.Headers {
			if drop[http.CanonicalHeaderKey(k)] {
				continue
			}
			w.Header()[http.CanonicalHeaderKey(k)] = vs
		}
		w.WriteHeader(rec.Status)
		_, _ = w.Write(body)
	}
}

// BenchDecodeDeltas measures the per-delta cost of decoding in, a stream
// of n text deltas served from memory, with the decoder open returns. One
// op is one whole stream; ns/delta and allocs/delta are the figures to
// watch.
func BenchDecodeDeltas(b *testing.B, in []byte, n int, open func(io.Reader) provider.Stream) {
	var ms0, ms1 runtime.MemStats
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		d := open(bytes.NewReader(in))
		texts := 0
		for d.Next() {
			if d.Event().Kind == provider.EventText {
				texts++
			}
		}
		if err := d.Err(); err != nil || texts != n {
			b.Fatalf("texts %d err %v", texts, err)
		}
	}
	runtime.ReadMemStats(&ms1)
	deltas := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deltas, "ns/delta")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/deltas, "allocs/delta")
}

// CheckRetryAfter checks edge.RetryAfter against the Retry-After and
// Retry-After-Ms forms providers send.
func CheckRetryAfter(t testing.TB) {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "12"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "12"}, 12 * time.Second},
		{map[string]string{"Retry-After": "1e300"}, time.Duration(1<<63 - 1)},
		{map[string]string{"Retry-After": "NaN"}, 0},
	}
	for _, tc := range tests {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := edge.RetryAfter(h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

// CheckSanitize checks edge.Scrubber with key as the API key (masked the
// way a provider echoes it) and headerSecret the value of a secret header
// named headerName, beside a short header value that must stay.
func CheckSanitize(t testing.TB, key, masked, headerName, headerSecret string) {
	t.Helper()
	s := edge.NewScrubber(key, map[string]string{"X-Short": "v1", headerName: headerSecret})
	tests := []struct{ in, want string }{
		{"key " + key + " here", "key [redacted] here"},
		{"masked " + masked + "!", "masked [redacted]!"},
		{headerSecret + " and v1", "[redacted] and v1"},
		{"line\nbreak\ttab\x00nul", "line break tab nul"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"  trimmed  ", "trimmed"},
	}
	for _, tc := range tests {
		if got := s.Sanitize(tc.in); got != tc.want {
			t.Errorf("sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := s.Sanitize(strings.Repeat("a", 2000)); len(got) > edge.MaxMessage {
		t.Errorf("sanitize did not bound: %d bytes", len(got))
	}
}
