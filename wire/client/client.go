package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
)

// Defaults of Config.
const (
	DefaultStderrLimit = 64 << 10
	DefaultCloseGrace  = 5 * time.Second
	DefaultTermGrace   = 6 * time.Second
)

// exitWait bounds how long the client waits for the host to exit once its
// stdout has ended (or its stdin refused a write) before it kills the group,
// and how long Close waits for the output pipes to drain after the exit.
const exitWait = time.Second

// eventBuffer is how many run events the reader queues ahead of
// RunStream.Next before it stops reading the host's stdout (backpressure).
const eventBuffer = 256

// idPrefix starts every request_id the client generates.
const idPrefix = "req-"

// Config describes the host to start.
type Config struct {
	// Path is the host binary. A name without a slash is looked up in PATH.
	Path string
	// Args are the arguments after the binary's name.
	Args []string
	// Env is the host's environment; nil inherits the application's.
	Env []string
	// Dir is the host's working directory; "" inherits the application's.
	Dir string
	// StderrLimit is how many trailing bytes of the host's stderr Stderr
	// retains; 0 means DefaultStderrLimit.
	StderrLimit int
	// CloseGrace is how long Close and Shutdown wait for the host to exit
	// before they kill its process group; 0 means DefaultCloseGrace.
	CloseGrace time.Duration
	// TermGrace is how long a canceled or closed host gets between SIGTERM
	// to its process group (it then ends its commands and records the
	// run's end) and SIGKILL; 0 means DefaultTermGrace, which covers the
	// host's own shell and cleanup graces.
	TermGrace time.Duration
	// ExpectedSDKVersion, when not empty, must equal hello's sdk_version.
	ExpectedSDKVersion string
	// RequireFeatures names hello features that must be reported true
	// (for example "streaming" or "persistent_sessions").
	RequireFeatures []string
	// Logger, when not nil, receives one-line diagnostics of the client
	// (kills, exits, violations). It may be called from any goroutine, but
	// never concurrently with itself.
	Logger func(string)

	// tap, when set (by this package's tests only), sees every line
	// written to the host (out true) and read from it, before the client
	// acts on it.
	tap func(out bool, line []byte)
}

// Client drives one octet-host process over native-host protocol 1.
//
// Requests are serial: while one is in flight (a run until the client has
// read its terminal event from the host), another returns ErrBusy. The
// methods of a Client are safe for concurrent use.
type Client struct {
	cfg    Config
	cmd    *exec.Cmd
	pid    int // also the process group ID
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	errBuf *ring
	hello  protocol.Hello

	logMu sync.Mutex

	pmu     sync.Mutex
	reaped  bool          // guarded by pmu: the group must not be signalled any more
	exited  chan struct{} // closed once the process has been reaped
	exitErr error         // cmd.Wait's error; read only after exited is closed

	readerDone chan struct{}
	stderrDone chan struct{}

	wmu       sync.Mutex // serializes writes to stdin
	stdinOnce sync.Once

	mu         sync.Mutex
	broken     error  // set once no further request may be made; the first cause wins
	cur        *call  // the request in flight
	issued     uint64 // request IDs handed out: idPrefix + 1..issued
	killedByUs bool   // the client signalled the group (Kill, cancel, violation, grace)

	closeOnce sync.Once
	closeErr  error
}

// Start launches the host in its own process group, sends hello and
// validates the answer before it returns: protocol_version 1,
// max_frame_bytes 1048576, max_concurrent_runs ≥ 1, the commands hello,
// models, run and shutdown, process_group_abort true, in_band_abort false,
// Config.ExpectedSDKVersion and Config.RequireFeatures.
//
// ctx bounds the start and the handshake only; end the host with Shutdown,
// Close or Kill. On Linux the host is also killed when the OS thread that
// called Start exits, which the Go runtime does only for a goroutine that
// locked its thread: do not call Start from such a goroutine.
//
// On any failure the host's process group is killed and
// reaped, and the error is returned: a *HandshakeError for an unacceptable
// hello, a violation (errors.Is ErrProtocolViolation), a *HostExitedError,
// a *ProtocolError, ctx.Err(), or the error of starting the process.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Path == "" {
		return nil, errors.New("client: Config.Path is empty")
	}
	if cfg.StderrLimit <= 0 {
		cfg.StderrLimit = DefaultStderrLimit
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = DefaultCloseGrace
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = DefaultTermGrace
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var files []*os.File // every descriptor, closed on failure
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("client: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("client: %w", err)
	}

	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = cfg.Env
	cmd.Dir = cfg.Dir
	// *os.File streams are handed to the child as they are: os/exec starts
	// no copying goroutine and Wait returns as soon as the process exits.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("client: starting %s: %w", cfg.Path, err)
	}
	// The child holds its ends now; keeping ours would hide its EOFs.
	inR.Close()
	outW.Close()
	errW.Close()

	c := &Client{
		cfg:        cfg,
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		errBuf:     newRing(cfg.StderrLimit),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	go c.waitLoop()
	go c.errBuf.drain(errR, c.stderrDone)
	go c.readLoop()

	h, err := c.handshake(ctx)
	if err != nil {
		c.logf("handshake failed: %v", err)
		c.Kill()
		c.Close()
		return nil, err
	}
	c.hello = h
	return c, nil
}

// Hello returns the validated hello answer.
func (c *Client) Hello() protocol.Hello { return c.hello }

// Stderr returns the last Config.StderrLimit bytes the host wrote to its
// standard error. Stderr is diagnostics only; it is never parsed.
func (c *Client) Stderr() string { return c.errBuf.String() }

// Models asks the host for its model inventory. offline suppresses live
// discovery (it is not a network sandbox).
func (c *Client) Models(ctx context.Context, offline bool) (protocol.Models, error) {
	cl := &call{command: protocol.CommandModels}
	v, err := c.roundTrip(ctx, cl, func(id string) ([]byte, error) {
		return marshalLine(modelsLine{envelope: newEnvelope(id, protocol.CommandModels), Offline: offline})
	})
	if err != nil {
		return protocol.Models{}, err
	}
	return v.(protocol.Models), nil
}

// Shutdown asks the host to exit: it sends shutdown, waits for the shutdown
// event and then for the process to exit, at most Config.CloseGrace (and
// ctx) before it kills the process group. It returns nil when the host
// exited with status 0. Every later request fails with ErrClosed; Close must
// still be called to release the client's resources.
func (c *Client) Shutdown(ctx context.Context) error {
	cl := &call{command: protocol.CommandShutdown}
	if _, err := c.roundTrip(ctx, cl, func(id string) ([]byte, error) {
		return marshalLine(newEnvelope(id, protocol.CommandShutdown))
	}); err != nil {
		return err
	}
	timer := time.NewTimer(c.cfg.CloseGrace)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		c.logf("the host did not exit within %v of its shutdown event; killing process group %d", c.cfg.CloseGrace, c.pid)
		c.markKilled()
		c.killGroup()
		<-c.exited
		return fmt.Errorf("%w: the host did not exit within %v of its shutdown event", ErrKilled, c.cfg.CloseGrace)
	case <-ctx.Done():
		c.logf("shutdown canceled (%v); killing process group %d", ctx.Err(), c.pid)
		c.markKilled()
		c.killGroup()
		<-c.exited
		return ctx.Err()
	}
	if c.exitErr != nil {
		return fmt.Errorf("client: the host exited after its shutdown event: %w", c.exitErr)
	}
	return nil
}

// Run sends a run request and returns the stream of its events. The request
// is checked first: an invalid run_id or session_id (ErrInvalidRequest) or a
// line over the frame bound (ErrRequestTooLarge) is not sent.
//
// ctx bounds the whole run: if it is canceled before the run's terminal
// event, the host's process group is killed (protocol 1 has no in-band
// abort) and the stream ends with ctx.Err(). Read the stream to its end
// (RunStream.Next until io.EOF, or RunStream.Wait): the client queues at
// most 256 events ahead of Next and then stops reading the host, so an
// abandoned stream keeps the client busy until Close or Kill.
func (c *Client) Run(ctx context.Context, req protocol.RunRequest) (*RunStream, error) {
	if err := checkRun(&req); err != nil {
		return nil, err
	}
	cl := &call{command: protocol.CommandRun, runID: req.RunID, events: make(chan Event, eventBuffer)}
	if req.SessionID != nil {
		cl.sessionID = *req.SessionID
	}
	stop, err := c.send(ctx, cl, func(id string) ([]byte, error) { return marshalRun(id, &req) })
	if err != nil {
		return nil, err
	}
	return &RunStream{c: c, cl: cl, stop: stop}, nil
}

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
	c.mu.Lock()
	if c.broken == nil {
		c.broken = ErrClosed
	}
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		cur.fail(ErrClosed)
	}
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
	c.mu.Lock()
	if c.broken == nil {
		c.broken = ErrKilled
	}
	c.killedByUs = true
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		cur.fail(ErrKilled)
	}
	err := c.killGroup()
	c.closeStdin()
	return err
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
	c.pmu.Lock()
	defer c.pmu.Unlock()
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
	err := waitAndReap(c.cmd, func() {
		c.pmu.Lock()
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		c.reaped = true
		c.pmu.Unlock()
	})
	c.pmu.Lock()
	c.reaped = true
	c.pmu.Unlock()
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

func (c *Client) logf(format string, args ...any) {
	if c.cfg.Logger == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	c.logMu.Lock()
	defer c.logMu.Unlock()
	c.cfg.Logger("octet client: " + msg)
}

// handshake sends hello and validates the answer.
func (c *Client) handshake(ctx context.Context) (protocol.Hello, error) {
	cl := &call{command: protocol.CommandHello}
	v, err := c.roundTrip(ctx, cl, func(id string) ([]byte, error) {
		return marshalLine(newEnvelope(id, protocol.CommandHello))
	})
	if err != nil {
		return protocol.Hello{}, err
	}
	ha := v.(helloAnswer)
	return ha.Hello, validateHello(ha, c.cfg)
}

// helloAnswer is the decoded data of a hello event. Features keeps every
// flag, known to protocol.Features or not, for Config.RequireFeatures.
type helloAnswer struct {
	Hello    protocol.Hello
	Features map[string]jsontext.Value
}

func validateHello(ha helloAnswer, cfg Config) error {
	h := ha.Hello
	bad := func(field, reason string) error { return &HandshakeError{Field: field, Reason: reason, Hello: h} }
	if h.ProtocolVersion != protocol.Version {
		return bad("protocol_version", fmt.Sprintf("got %d, want 1", h.ProtocolVersion))
	}
	if h.MaxFrameBytes != protocol.MaxFrameBytes {
		return bad("max_frame_bytes", fmt.Sprintf("got %d, want %d", h.MaxFrameBytes, protocol.MaxFrameBytes))
	}
	if h.MaxConcurrentRuns < 1 {
		return bad("max_concurrent_runs", fmt.Sprintf("got %d, want at least 1", h.MaxConcurrentRuns))
	}
	for _, want := range protocol.Commands() {
		found := false
		for _, got := range h.Commands {
			found = found || got == want
		}
		if !found {
			return bad("commands", "missing "+strconv.Quote(want))
		}
	}
	flag := func(name string) string {
		v, ok := ha.Features[name]
		if !ok {
			return "absent"
		}
		return string(v)
	}
	if got := flag("process_group_abort"); got != "true" {
		return bad("features.process_group_abort", "got "+got+", want true")
	}
	if got := flag("in_band_abort"); got != "false" {
		return bad("features.in_band_abort", "got "+got+", want false")
	}
	if cfg.ExpectedSDKVersion != "" && h.SDKVersion != cfg.ExpectedSDKVersion {
		return bad("sdk_version", fmt.Sprintf("got %q, want %q", h.SDKVersion, cfg.ExpectedSDKVersion))
	}
	for _, name := range cfg.RequireFeatures {
		if got := flag(name); got != "true" {
			return bad("features."+name, "required feature is "+got+", want true")
		}
	}
	return nil
}

// begin registers cl as the request in flight under a fresh request ID and
// builds its line. It refuses when the client is broken or busy.
func (c *Client) begin(cl *call, build func(id string) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	if c.cur != nil {
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

func (c *Client) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
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

// terminateGroup cancels the host the way CONTRACT §14 expects: SIGTERM to
// its process group, so it can end its commands' process groups (also the
// ones that left its group) and record the run's end, then SIGKILL to the
// group if it has not exited within TermGrace. It does not wait.
func (c *Client) terminateGroup() {
	c.pmu.Lock()
	if !c.reaped {
		_ = syscall.Kill(-c.pid, syscall.SIGTERM)
	}
	c.pmu.Unlock()
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
