package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/provider"
)

// A server that never reads the request must not hang the call: the idle
// timeout bounds each stall of the request write, as it bounds the wait
// for the headers and each gap in the stream. The body is far larger than
// the loopback socket buffers, so the write blocks.
func TestStreamServerNeverReadsTheRequest(t *testing.T) {
	stop := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		// The server's request context ends only once it reads the
		// connection again, which it never does here: the test's end
		// releases the handler.
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	t.Cleanup(func() { close(stop) }) // runs before the server's Close
	body := bytes.Repeat([]byte("x"), 64<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := testMode.Stream(ctx, testRoute(t, srv, 200*time.Millisecond), body)
	pe := asError(t, err)
	if pe.Kind != provider.FailIdleTimeout || !pe.RequestWritten || !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("got %+v, want FailIdleTimeout with RequestWritten (after %v)", pe, time.Since(start))
	}
	if !strings.Contains(pe.Message, "did not read the request") {
		t.Errorf("message %q: want it to say the request was not read", pe.Message)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the call took %v with a 200ms idle timeout", d)
	}
}

// A server that reads the request slowly, in pauses shorter than the idle
// timeout but longer in all, is not timed out: each write that makes
// progress restarts the timer. (It reads the rest at full speed: once the
// last byte is in the kernel's buffers the header wait begins, and the
// server's pace can no longer be seen.)
func TestStreamSlowRequestReaderIsNotTimedOut(t *testing.T) {
	const idle = 500 * time.Millisecond
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<20)
		for i := 0; i < 8; i++ {
			time.Sleep(idle / 4)
			if _, err := io.ReadFull(r.Body, buf); err != nil {
				break
			}
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: ok\n\ndata: [END]\n\n")
	})
	body := bytes.Repeat([]byte("y"), 24<<20)
	s, err := testMode.Stream(context.Background(), testRoute(t, srv, idle), body)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if text, err := drain(s); err != nil || text != "ok" {
		t.Fatalf("got %q, %v", text, err)
	}
}
