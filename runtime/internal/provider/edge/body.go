package edge

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"
)

// ErrIdleTimeout is the read error of a body whose idle timer fired; a
// stream that ended so reports it (after the mode's name) as its
// provider.Error's Err.
var ErrIdleTimeout = errors.New("stream idle timeout")

// idleBody closes a response body that goes its timeout without a byte.
// The timer is reset by every Read that returns data; firing cancels the
// request context and closes the body, which ends a blocked Read. No
// goroutine runs unless the timer fires.
type idleBody struct {
	rc      io.ReadCloser
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	fired   atomic.Bool
	closed  atomic.Bool
}

func newIdleBody(rc io.ReadCloser, timeout time.Duration, cancel context.CancelFunc) *idleBody {
	b := &idleBody{rc: rc, timeout: timeout, cancel: cancel}
	b.timer = time.AfterFunc(timeout, b.expire)
	return b
}

func (b *idleBody) expire() {
	b.fired.Store(true)
	b.cancel()
	b.closeBody()
}

// Read implements io.Reader.
func (b *idleBody) Read(p []byte) (int, error) {
	if b.fired.Load() {
		return 0, ErrIdleTimeout
	}
	n, err := b.rc.Read(p)
	if b.fired.Load() {
		return n, ErrIdleTimeout
	}
	if n > 0 {
		b.timer.Reset(b.timeout)
	}
	return n, err
}

// Close stops the timer, closes the body and cancels the request context.
func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.closeBody()
	b.cancel()
	return err
}

func (b *idleBody) closeBody() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.rc.Close()
}

func (b *idleBody) timedOut() bool { return b.fired.Load() }
