package edge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"octet.dev/host/runtime/provider"
)

// headerWatch is the idle timer of a call before its response headers: it
// is armed by the first read of the request body, restarted by every later
// read (the transport reads the next piece only once the previous one is
// written, so a read is write progress) and by the end of the write, and
// fires when the server goes the idle timeout without taking a byte of the
// request or, once it has it all, without answering. Reads and wrote may
// run after Do returned (a server can answer before the request is fully
// written), so stop disarms it for good.
type headerWatch struct {
	idle   time.Duration
	cancel context.CancelFunc

	mu      sync.Mutex
	timer   *time.Timer
	done    bool // Do returned: nothing arms the timer again
	fired   bool // the timer canceled the request
	written bool // the whole request was written when it fired (or yet)
}

// setBody makes body the request's body, read through the watch.
func (w *headerWatch) setBody(req *http.Request, body []byte) {
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		return
	}
	req.GetBody = func() (io.ReadCloser, error) {
		return &watchedBody{r: bytes.NewReader(body), w: w}, nil
	}
	req.Body, _ = req.GetBody()
}

// touch (re)starts the timer.
func (w *headerWatch) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if w.timer != nil {
		w.timer.Reset(w.idle)
		return
	}
	w.timer = time.AfterFunc(w.idle, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.done {
			w.fired = true
			w.cancel()
		}
	})
}

// wrote marks the whole request written and restarts the timer for the
// wait for the headers.
func (w *headerWatch) wrote() {
	w.mu.Lock()
	if !w.fired {
		w.written = true
	}
	w.mu.Unlock()
	w.touch()
}

// stop disarms the watch and reports whether its timer fired.
func (w *headerWatch) stop() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	return w.fired
}

// timeoutError is the failure of a call whose watch fired. The request
// counts as written either way: its first bytes may have reached the
// provider.
func (w *headerWatch) timeoutError(mode string) error {
	w.mu.Lock()
	written := w.written
	w.mu.Unlock()
	if !written {
		return &provider.Error{Kind: provider.FailIdleTimeout, RequestWritten: true,
			Message: "the provider did not read the request for " + w.idle.String(),
			Err:     fmt.Errorf("%s: writing the request: %w", mode, ErrIdleTimeout)}
	}
	return &provider.Error{Kind: provider.FailIdleTimeout, RequestWritten: true,
		Message: "no response headers for " + w.idle.String() + " after the request was sent",
		Err:     fmt.Errorf("%s: waiting for the response headers: %w", mode, ErrIdleTimeout)}
}

// watchedBody is a request body whose reads restart the watch.
type watchedBody struct {
	r *bytes.Reader
	w *headerWatch
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.w.touch()
	return b.r.Read(p)
}

func (b *watchedBody) Close() error { return nil }
