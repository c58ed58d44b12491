package client

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// begin registers cl as the request in flight under a fresh request ID and
// builds its line. It refuses when the client is broken or busy.
func (c *Client) begin(cl *call, build func(id string) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	if c.cur != nil || c.writing {
		return nil, ErrBusy
	}
	id := idPrefix + strconv.FormatUint(c.issued+1, 10)
	line, err := build(id)
	if err != nil {
		return nil, err
	}
	c.issued++
	cl.id = id
	cl.done = make(chan struct{})
	c.cur = cl
	c.writing = true
	return line, nil
}

// send registers cl, arms ctx to kill the group while cl is in flight and
// writes the request line. The returned stop disarms ctx.
func (c *Client) send(ctx context.Context, cl *call, build func(id string) ([]byte, error)) (stop func() bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	line, err := c.begin(cl, build)
	if err != nil {
		return nil, err
	}
	stop = context.AfterFunc(ctx, func() { c.cancel(cl, ctx.Err()) })
	if werr := c.write(line); werr != nil {
		// The host does not read its stdin any more: it is exiting, or the
		// client closed or killed it. Let the reader report the exit.
		timer := time.NewTimer(exitWait)
		defer timer.Stop()
		select {
		case <-cl.done:
		case <-timer.C:
			c.abort(cl, fmt.Errorf("client: writing request %q: %w", cl.id, werr))
		}
		stop()
		<-cl.done
		if cl.err == nil { // cannot happen: the line was not written whole
			return nil, fmt.Errorf("client: writing request %q: %w", cl.id, werr)
		}
		return nil, cl.err
	}
	return stop, nil
}

// roundTrip performs a request answered by a single terminal event and
// returns that event's decoded data.
func (c *Client) roundTrip(ctx context.Context, cl *call, build func(id string) ([]byte, error)) (any, error) {
	stop, err := c.send(ctx, cl, build)
	if err != nil {
		return nil, err
	}
	defer stop()
	<-cl.done
	if cl.err != nil {
		return nil, cl.err
	}
	return cl.value, nil
}

// write writes the line begin built. Writes never interleave: begin set
// c.writing and admits no other request until write clears it, even when
// the call ends (answered, canceled or failed) before its line is written
// whole. The lock is not held across the write, which blocks while the
// host does not read its stdin.
func (c *Client) write(line []byte) error {
	defer func() {
		c.mu.Lock()
		c.writing = false
		c.mu.Unlock()
	}()
	if c.cfg.tap != nil {
		c.cfg.tap(true, line)
	}
	_, err := c.stdin.Write(line)
	return err
}

// cancel kills the group on behalf of cl's canceled context, if cl is still
// in flight.
func (c *Client) cancel(cl *call, cause error) {
	c.mu.Lock()
	if c.cur != cl {
		c.mu.Unlock()
		return
	}
	c.cur = nil
	if c.broken == nil {
		c.broken = fmt.Errorf("%w: request %q was canceled: %v", ErrKilled, cl.id, cause)
	}
	c.killedByUs = true
	c.mu.Unlock()
	c.logf("request %q canceled (%v); terminating process group %d", cl.id, cause, c.pid)
	cl.fail(cause)
	c.terminateGroup()
	c.closeStdin()
}

// abort kills the group because cl cannot complete; err becomes the error
// of cl and of every later call.
func (c *Client) abort(cl *call, err error) {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = err
	}
	if c.cur == cl {
		c.cur = nil
	}
	c.killedByUs = true
	c.mu.Unlock()
	c.logf("%v; killing process group %d", err, c.pid)
	cl.fail(err)
	c.killGroup()
	c.closeStdin()
}
