package client

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"octet.dev/host/internal/procgroup"
)

// Close ends the host: it closes the host's stdin, waits up to
// Config.CloseGrace for the process to exit, then kills its process group.
// It always reaps the process and stops the client's goroutines. A request
// in flight fails with ErrClosed. Close is idempotent.
//
// Close returns nil when the host exited with status 0, or when the client
// had already killed it for a reason reported earlier (Kill, a canceled
// context, a protocol violation); the *exec.ExitError when the host exited
// by itself with another status; an error wrapping ErrKilled when Close had
// to kill it after the grace.
//
// When the host exits, whatever is left in its process group is killed as
// well (Linux).
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *Client) close() error {
	c.end(ErrClosed, false)
	c.closeStdin()

	var err error
	timer := time.NewTimer(c.cfg.CloseGrace)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		c.logf("the host did not exit within %v of stdin closing; terminating process group %d", c.cfg.CloseGrace, c.pid)
		if !c.markKilled() {
			err = fmt.Errorf("%w: the host did not exit within %v of stdin closing", ErrKilled, c.cfg.CloseGrace)
		}
		c.terminateGroup()
		<-c.exited
	}
	c.waitIO()
	c.stdout.Close()
	c.stderr.Close()

	c.mu.Lock()
	killed := c.killedByUs
	c.mu.Unlock()
	if err == nil && !killed {
		err = c.exitErr
	}
	return err
}

// Kill kills the host's process group immediately. A request in flight
// fails with an error wrapping ErrKilled, and so does every later request.
// Close must still be called to reap the process and release resources.
func (c *Client) Kill() error {
	c.end(ErrKilled, true)
	err := c.killGroup()
	c.closeStdin()
	return err
}

// end refuses every later request with err (unless an earlier cause
// already does), records whether the client is about to signal the group,
// and fails the request in flight with err.
func (c *Client) end(err error, killing bool) {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = err
	}
	c.killedByUs = c.killedByUs || killing
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		cur.fail(err)
	}
}

// Wait waits for the host process to exit and returns its exit error: nil
// for status 0, else an *exec.ExitError (exit code or signal). It does not
// end the host; use it after Shutdown, Close or Kill, or to watch for exit.
func (c *Client) Wait() error {
	<-c.exited
	return c.exitErr
}

// markKilled records that the client is about to signal the group and
// reports whether it had already done so.
func (c *Client) markKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.killedByUs
	c.killedByUs = true
	return prev
}

// killGroup sends SIGKILL to the host's process group, unless the leader
// has been (or is being) reaped: its process group ID may then be reused.
func (c *Client) killGroup() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return nil
	}
	err := syscall.Kill(-c.pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// waitLoop reaps the host. Once the leader has exited, and before it is
// reaped, the rest of its process group is killed: nothing the host left
// behind survives it.
func (c *Client) waitLoop() {
	err := procgroup.WaitAndReap(c.cmd, func() {
		c.mu.Lock()
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		c.reaped = true
		c.mu.Unlock()
	})
	c.mu.Lock()
	c.reaped = true
	c.mu.Unlock()
	c.exitErr = err
	if err != nil {
		c.logf("host process %d exited: %v", c.pid, err)
	}
	close(c.exited) // last: nothing is logged after Close returns
}

func (c *Client) closeStdin() {
	c.stdinOnce.Do(func() { c.stdin.Close() })
}

// waitIO waits for the stdout reader and the stderr drain to reach EOF,
// then closes their pipes to force them out if a descendant of the host in
// another process group still holds the write ends.
func (c *Client) waitIO() {
	timer := time.NewTimer(exitWait)
	defer timer.Stop()
	for _, done := range []chan struct{}{c.readerDone, c.stderrDone} {
		select {
		case <-done:
		case <-timer.C:
			c.logf("host output pipes still open after exit; closing them")
			c.stdout.Close()
			c.stderr.Close()
			<-c.readerDone
			<-c.stderrDone
			return
		}
	}
}

// terminateGroup cancels the host the way CONTRACT §14 expects: SIGTERM to
// its process group, so it can end its commands' process groups (also the
// ones that left its group) and record the run's end, then SIGKILL to the
// group if it has not exited within TermGrace. It does not wait.
func (c *Client) terminateGroup() {
	c.mu.Lock()
	if !c.reaped {
		_ = syscall.Kill(-c.pid, syscall.SIGTERM)
	}
	c.mu.Unlock()
	go func() {
		t := time.NewTimer(c.cfg.TermGrace)
		defer t.Stop()
		select {
		case <-c.exited:
		case <-t.C:
			c.killGroup()
		}
	}()
}
