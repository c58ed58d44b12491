package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"octet.dev/host/internal/procgroup"
)

// maxFrame is protocol 1's bound on a frame, request or event, including
// its newline.
const maxFrame = 1 << 20

// stderrTail is how much of the host's stderr the kit keeps for a
// failure's diagnostics; the rest is drained and dropped.
const stderrTail = 4 << 10

// rawLine is one line the host wrote on stdout (without its newline), or
// the error that ended the stream (io.EOF at a clean end).
type rawLine struct {
	b   []byte
	err error
}

// newTap, set by this package's tests only, returns a tap for each host
// the kit starts: it sees every request line the kit sends (out true) and
// every line the host writes, so that the tests can judge them against
// the JSON Schema. nil in the kit.
var newTap func() func(out bool, line []byte)

// hostProc is one running host under test: its own process group, a
// writer goroutine feeding stdin, a reader goroutine splitting stdout into
// bounded lines, and stderr drained into a bounded tail.
type hostProc struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	lines  chan rawLine
	writes chan []byte
	stderr *tailBuffer

	exited  chan struct{} // closed once the process is reaped
	stop    chan struct{} // closed by kill: the reader stops delivering
	waitErr error

	tap func(out bool, line []byte) // see newTap

	stopOnce sync.Once
	wmu      sync.Mutex
	wclosed  bool // stdin's end was queued: nothing more is sent
}

// startHost launches path with args and env in its own process group.
func startHost(path string, args, env []string) (*hostProc, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.SysProcAttr = procgroup.SysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	h := &hostProc{cmd: cmd, stdin: stdin, lines: make(chan rawLine, 64), writes: make(chan []byte, 16),
		stderr: &tailBuffer{max: stderrTail}, exited: make(chan struct{}), stop: make(chan struct{})}
	cmd.Stderr = h.stderr
	if newTap != nil {
		h.tap = newTap()
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the host: %w", err)
	}
	h.pid = cmd.Process.Pid
	go h.readLoop(stdout)
	go h.writeLoop()
	go func() {
		h.waitErr = procgroup.WaitAndReap(cmd, func() { _ = syscall.Kill(-h.pid, syscall.SIGKILL) })
		close(h.exited)
	}()
	return h, nil
}

// readLoop splits stdout into lines of at most maxFrame bytes including
// the newline. A longer line is reported as an error (a host must never
// write one) and the stream ends there.
func (h *hostProc) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var line []byte
		for {
			chunk, err := br.ReadSlice('\n')
			line = append(line, chunk...)
			if len(line) > maxFrame {
				h.deliver(rawLine{err: fmt.Errorf("the host wrote a line longer than %d bytes including its newline", maxFrame)})
				close(h.lines)
				return
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				if len(line) > 0 {
					h.deliver(rawLine{err: fmt.Errorf("the host's stdout ended inside a line (no newline after %d bytes)", len(line))})
				} else {
					h.deliver(rawLine{err: io.EOF})
				}
				close(h.lines)
				return
			}
			break
		}
		if !h.deliver(rawLine{b: line[:len(line)-1]}) {
			close(h.lines)
			return
		}
	}
}

// deliver hands l to the kit, unless the host was killed: then nobody
// reads any more, and the reader must not block.
func (h *hostProc) deliver(l rawLine) bool {
	select {
	case h.lines <- l:
		return true
	case <-h.stop:
		return false
	}
}

// writeLoop writes queued request lines to stdin; a nil slice closes it.
// Write errors are dropped: a host that stopped reading shows up as a
// missing answer or an exit, which the kit reports.
func (h *hostProc) writeLoop() {
	for b := range h.writes {
		if b == nil {
			h.stdin.Close()
			continue
		}
		_, _ = h.stdin.Write(b)
	}
}

// send queues one request line (a newline is appended).
func (h *hostProc) send(line []byte) {
	b := make([]byte, 0, len(line)+1)
	b = append(append(b, line...), '\n')
	if h.tap != nil {
		h.tap(true, line)
	}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if !h.wclosed {
		h.writes <- b
	}
}

// closeStdin queues the end of stdin after the lines already sent.
func (h *hostProc) closeStdin() {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if !h.wclosed {
		h.wclosed = true
		h.writes <- nil
		close(h.writes)
	}
}

// next returns the host's next stdout line, or an error: io.EOF at the end
// of the stream, a timeout after d.
func (h *hostProc) next(d time.Duration) ([]byte, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l, ok := <-h.lines:
		if !ok {
			return nil, io.EOF
		}
		if h.tap != nil && l.err == nil {
			h.tap(false, l.b)
		}
		return l.b, l.err
	case <-t.C:
		return nil, errTimeout
	}
}

var errTimeout = errors.New("timed out waiting for the host")

// wait waits up to d for the host to exit and returns its exit code; a
// host killed by a signal reports -1. On timeout it kills the group.
func (h *hostProc) wait(d time.Duration) (int, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.exited:
	case <-t.C:
		h.kill()
		return -1, fmt.Errorf("the host did not exit within %v (its process group was killed)", d)
	}
	var ee *exec.ExitError
	if errors.As(h.waitErr, &ee) {
		return ee.ExitCode(), nil
	}
	if h.waitErr != nil {
		return -1, h.waitErr
	}
	return 0, nil
}

// kill ends the host's whole process group and waits for the reap. It is
// safe to call at any time, also after the host exited.
func (h *hostProc) kill() {
	h.stopOnce.Do(func() { close(h.stop) })
	select {
	case <-h.exited:
	default:
		_ = syscall.Kill(-h.pid, syscall.SIGKILL)
		<-h.exited
	}
	h.closeStdin()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.b, []byte("?"))))
}
