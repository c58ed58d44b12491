package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/sse"
	"octet.dev/host/runtime/provider"
)

// lineDecoder is the smallest Decoder built the way the modes build theirs:
// each "data: x" event is text x, "data: !code msg" fails the stream with an
// error event, and "data: [END]" finishes it.
type lineDecoder struct {
	sse *sse.Reader
	Queue
	done     bool
	maxEvent int
	err      error
}

func newLineDecoder(r io.Reader, maxEventBytes int) Decoder {
	d := &lineDecoder{}
	d.sse, d.maxEvent = NewSSE(r, maxEventBytes)
	return d
}

func (d *lineDecoder) Next() bool {
	for !d.Pop() {
		if d.done || d.err != nil {
			return false
		}
		d.step()
	}
	return true
}

func (d *lineDecoder) Err() error     { return d.err }
func (d *lineDecoder) Finished() bool { return d.done && d.Drained() }

func (d *lineDecoder) step() {
	if !d.sse.Next() {
		if err := d.sse.Err(); err != nil {
			d.err = ReadFailure(err, d.maxEvent)
			return
		}
		d.err = Failure(provider.FailStreamCut, "", "stream ended before [END]", nil)
		return
	}
	data := string(d.sse.Event().Data)
	switch {
	case data == "[END]":
		d.Add(provider.StreamEvent{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
		d.done = true
	case strings.HasPrefix(data, "!"):
		code, msg, _ := strings.Cut(data[1:], " ")
		d.err = Failure(provider.FailErrorEvent, code, msg, nil)
	default:
		d.Push(provider.StreamEvent{Kind: provider.EventText, Text: data})
	}
}

const testKey = "sk-test-0123456789abcdefSECRET"

var testMode = &Mode{
	Name:        "test",
	Endpoint:    func(base string) string { return strings.TrimRight(base, "/") + "/stream" },
	KeyHeader:   "Authorization",
	KeyPrefix:   "Bearer ",
	ErrorFields: OpenAIErrorFields,
	Decode:      newLineDecoder,
}

// testRoute returns a checked route to srv with the given idle timeout.
func testRoute(t *testing.T, srv *httptest.Server, idle time.Duration) Route {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	r, errs := testMode.Route(Config{
		BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: tr},
		IdleTimeout: idle, Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return r
}

func newServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func sseBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

// stallAfter writes body, then holds the response open until the client
// goes away.
func stallAfter(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// drain reads s to its end and returns the text and the error.
func drain(s provider.Stream) (string, error) {
	var b strings.Builder
	for s.Next() {
		b.WriteString(s.Event().Text)
	}
	return b.String(), s.Err()
}

func asError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	return pe
}

func TestStreamSendsTheRequest(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got, body = r, nil
		body, _ = io.ReadAll(r.Body)
		sseBody("data: Hel\n\ndata: lo\n\ndata: [END]\n\n")(w, r)
	})
	s, err := testMode.Stream(context.Background(), testRoute(t, srv, 0), []byte(`{"q":1}`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := drain(s)
	if text != "Hello" || err != nil {
		t.Fatalf("got %q, %v; want Hello and a normal end", text, err)
	}
	if got.Method != http.MethodPost || got.URL.Path != "/v1/stream" || string(body) != `{"q":1}` {
		t.Errorf("request %s %s %s", got.Method, got.URL.Path, body)
	}
	for name, want := range map[string]string{
		"Content-Type": "application/json", "Accept": "text/event-stream", "Authorization": "Bearer " + testKey,
	} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after the end: %v", err)
	}
}

func TestStreamHTTPErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		ctype   string
		headers map[string]string
		body    string
		want    provider.Error
	}{
		{
			name: "envelope with retry-after-ms", status: 429,
			headers: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"},
			body:    `{"error":{"message":"Rate limited for key ` + testKey + `","type":"requests","code":"rate_limit_exceeded"}}`,
			want: provider.Error{Kind: provider.FailHTTPStatus, Status: 429, Code: "rate_limit_exceeded", RequestWritten: true,
				Message: "Rate limited for key [redacted]", RetryAfter: 1500 * time.Millisecond},
		},
		{
			name: "array envelope, HTTP-date", status: 503,
			headers: map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:04:15 GMT"},
			body:    `[{"error":{"message":"overloaded","code":503}}]`,
			want: provider.Error{Kind: provider.FailHTTPStatus, Status: 503, Code: "503", RequestWritten: true,
				Message: "overloaded", RetryAfter: 10 * time.Second},
		},
		{
			name: "plain text body", status: 502, body: "bad gateway\r\nupstream",
			want: provider.Error{Kind: provider.FailHTTPStatus, Status: 502, RequestWritten: true, Message: "bad gateway  upstream"},
		},
		{
			name: "empty body", status: 500,
			want: provider.Error{Kind: provider.FailHTTPStatus, Status: 500, RequestWritten: true, Message: "Internal Server Error"},
		},
		{
			name: "200 JSON error envelope", status: 200, ctype: "application/json; charset=utf-8",
			body: `{"error":{"message":"busy","code":"overloaded"}}`,
			want: provider.Error{Kind: provider.FailErrorEvent, Status: 200, Code: "overloaded", RequestWritten: true, Message: "busy"},
		},
		{
			name: "200 JSON answer", status: 200, ctype: "application/json",
			body: `{"message":"not an error object"}`,
			want: provider.Error{Kind: provider.FailDecode, Status: 200, RequestWritten: true,
				Message: "expected text/event-stream, got application/json"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.headers {
					w.Header().Set(k, v)
				}
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			s, err := testMode.Stream(context.Background(), testRoute(t, srv, 0), nil)
			if s != nil {
				t.Fatal("got a stream")
			}
			if pe := asError(t, err); *pe != tc.want {
				t.Errorf("got  %+v\nwant %+v", *pe, tc.want)
			}
		})
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		idle     time.Duration
		wantText string
		want     provider.Error
	}{
		{
			name:     "cut after content",
			handler:  sseBody("data: Hel\n\n"),
			wantText: "Hel",
			want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream ended before [END]"},
		},
		{
			name:    "error event, sanitized",
			handler: sseBody("data: !overloaded key " + testKey + "\x01\n\n"),
			want:    provider.Error{Kind: provider.FailErrorEvent, Code: "overloaded", RequestWritten: true, Message: "key [redacted]"},
		},
		{
			name:    "error event without message",
			handler: sseBody("data: !code_only\n\n"),
			want:    provider.Error{Kind: provider.FailErrorEvent, Code: "code_only", RequestWritten: true, Message: "error_event"},
		},
		{
			name:     "idle after content",
			handler:  stallAfter("data: Hel\n\n"),
			idle:     100 * time.Millisecond,
			wantText: "Hel",
			want:     provider.Error{Kind: provider.FailIdleTimeout, RequestWritten: true, ContentStarted: true, Message: "no stream data for 100ms"},
		},
		{
			name: "connection dropped mid-body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Length", "100")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "data: Hel\n\n")
			},
			wantText: "Hel",
			want:     provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Message: "stream read failed: unexpected EOF"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.handler)
			s, err := testMode.Stream(context.Background(), testRoute(t, srv, tc.idle), nil)
			if err != nil {
				t.Fatal(err)
			}
			text, err := drain(s)
			if text != tc.wantText {
				t.Errorf("text %q, want %q", text, tc.wantText)
			}
			pe := asError(t, err)
			got := *pe
			got.Err = nil
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if tc.want.Kind == provider.FailIdleTimeout {
				if !errors.Is(err, ErrIdleTimeout) || pe.Err.Error() != "test: stream idle timeout" {
					t.Errorf("idle timeout error %v", pe.Err)
				}
			}
		})
	}
}

func TestStreamConnectFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, errs := testMode.Route(Config{BaseURL: "http://" + addr + "/gw/tok-in-path-0123", APIKey: testKey})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	_, err = testMode.Stream(context.Background(), r, nil)
	pe := asError(t, err)
	if pe.Kind != provider.FailConnect || pe.RequestWritten || pe.Status != 0 || pe.Err == nil {
		t.Errorf("got %+v, want FailConnect with RequestWritten false", pe)
	}
	// The message says where the call went, not the endpoint's path,
	// which may carry a secret.
	if !strings.Contains(pe.Message, "http://"+addr) || strings.Contains(pe.Message, "tok-in-path") || !strings.Contains(pe.Message, "refused") {
		t.Errorf("message %q: want the origin and the cause, not the path", pe.Message)
	}
}

func TestStreamRequestWrittenThenDropped(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	})
	_, err := testMode.Stream(context.Background(), testRoute(t, srv, 0), []byte("{}"))
	if pe := asError(t, err); pe.Kind != provider.FailStreamCut || !pe.RequestWritten {
		t.Errorf("got %+v, want FailStreamCut with RequestWritten", pe)
	}
}

func TestStreamCancel(t *testing.T) {
	t.Run("before the request", func(t *testing.T) {
		srv := newServer(t, sseBody("data: [END]\n\n"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := testMode.Stream(ctx, testRoute(t, srv, 0), nil)
		if pe := asError(t, err); pe.Kind != provider.FailCanceled {
			t.Errorf("got %+v, want FailCanceled", pe)
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		srv := newServer(t, stallAfter("data: Hel\n\n"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := testMode.Stream(ctx, testRoute(t, srv, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if !s.Next() || s.Event().Text != "Hel" {
			t.Fatalf("first event %+v, err %v", s.Event(), s.Err())
		}
		cancel()
		if s.Next() {
			t.Fatalf("Next after cancel returned %+v", s.Event())
		}
		if pe := asError(t, s.Err()); pe.Kind != provider.FailCanceled || !pe.ContentStarted || !pe.RequestWritten {
			t.Errorf("got %+v, want FailCanceled, written, started", pe)
		}
	})
	t.Run("Close from another goroutine", func(t *testing.T) {
		srv := newServer(t, stallAfter("data: Hel\n\n"))
		s, err := testMode.Stream(context.Background(), testRoute(t, srv, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Next() {
			t.Fatal(s.Err())
		}
		time.AfterFunc(50*time.Millisecond, func() { _ = s.Close() })
		if s.Next() {
			t.Fatalf("Next after Close returned %+v", s.Event())
		}
		if pe := asError(t, s.Err()); pe.Kind != provider.FailCanceled || !pe.ContentStarted {
			t.Errorf("got %+v, want FailCanceled, started", pe)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
	t.Run("Close after the finish is a normal end", func(t *testing.T) {
		srv := newServer(t, sseBody("data: a\n\ndata: [END]\n\n"))
		s, err := testMode.Stream(context.Background(), testRoute(t, srv, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			if s.Event().Kind == provider.EventFinish {
				_ = s.Close()
			}
		}
		if err := s.Err(); err != nil {
			t.Errorf("Err after a finish = %v", err)
		}
	})
}

func TestStreamEventTooLarge(t *testing.T) {
	srv := newServer(t, sseBody("data: "+strings.Repeat("x", 300)+"\n\n"))
	r := testRoute(t, srv, 0)
	r.MaxEvent = 100
	s, err := testMode.Stream(context.Background(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(s)
	pe := asError(t, err)
	if pe.Kind != provider.FailDecode || pe.Message != "stream event larger than 100 bytes" || !errors.Is(err, sse.ErrEventTooLarge) {
		t.Errorf("got %+v", pe)
	}
}

func TestStreamBuildError(t *testing.T) {
	r := Route{URL: "http://bad host/", Client: http.DefaultClient}
	_, err := testMode.Stream(context.Background(), r, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "test: building the HTTP request: ") {
		t.Errorf("got %v", err)
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		t.Error("a request that cannot be built is a plain error")
	}
}

func TestIdleBodyResetsOnData(t *testing.T) {
	pr, pw := io.Pipe()
	canceled := make(chan struct{})
	b := newIdleBody(pr, 300*time.Millisecond, func() {
		select {
		case <-canceled:
		default:
			close(canceled)
		}
	})
	defer b.Close()
	// Eight writes 60 ms apart span longer than the 300 ms timeout, so the
	// reads only succeed if every byte re-arms the timer; each gap leaves a
	// 5x margin for a loaded machine.
	go func() {
		for range 8 {
			time.Sleep(60 * time.Millisecond)
			_, _ = pw.Write([]byte("x"))
		}
	}()
	var got bytes.Buffer
	buf := make([]byte, 8)
	for got.Len() < 8 {
		n, err := b.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("read %q then %v: data kept arriving within the timeout", got.String(), err)
		}
	}
	n, err := b.Read(buf)
	if n != 0 || !errors.Is(err, ErrIdleTimeout) || !b.timedOut() {
		t.Errorf("after the writer stopped: %d, %v", n, err)
	}
	select {
	case <-canceled:
	default:
		t.Error("the timer did not cancel the request")
	}
}
