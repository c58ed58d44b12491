package edge

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"octet.dev/host/runtime/provider"
)

// TestStreamOpenTimeout: after an outage, opening a request gets only what
// is left of the max network wait (provider.WithOpenTimeout). A server that
// accepts the TCP connection and never answers the TLS handshake is cut at
// the bound, reported as FailConnect with nothing written and
// ErrOpenTimeout as its cause, long before the transport's own 10 s
// handshake timeout.
func TestStreamOpenTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	r, errs := testMode.Route(Config{BaseURL: "https://" + ln.Addr().String(), APIKey: testKey})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	begin := time.Now()
	s, err := testMode.Stream(provider.WithOpenTimeout(context.Background(), 150*time.Millisecond), r, []byte(`{}`))
	took := time.Since(begin)
	if s != nil {
		s.Close()
		t.Fatal("a stream from a server that never finished the handshake")
	}
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.FailConnect || pe.RequestWritten || !errors.Is(err, provider.ErrOpenTimeout) {
		t.Fatalf("err = %#v, want FailConnect, nothing written, ErrOpenTimeout", err)
	}
	if took < 150*time.Millisecond || took > 3*time.Second {
		t.Errorf("the opening was cut after %v, want the 150ms bound", took)
	}
}

// TestStreamOpenTimeoutEndsWithTheConnection: the bound covers the opening
// only. A server that connects at once and takes longer than the bound to
// answer is not cut (body and header waits have their own timeouts).
func TestStreamOpenTimeoutEndsWithTheConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: hi\n\ndata: [END]\n\n")
	}))
	defer srv.Close()
	r := testRoute(t, srv, 0)
	s, err := testMode.Stream(provider.WithOpenTimeout(context.Background(), 100*time.Millisecond), r, []byte(`{}`))
	if err != nil {
		t.Fatalf("a connected request was cut: %v", err)
	}
	defer s.Close()
	var got string
	for s.Next() {
		got += s.Event().Text
	}
	if s.Err() != nil || got != "hi" {
		t.Fatalf("got %q, %v", got, s.Err())
	}
}
