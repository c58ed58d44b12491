package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"octet.dev/host/internal/procgroup"
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
	// never concurrently with itself. It is called with the client's lock
	// held, so it must not call the Client's methods.
	Logger func(string)

	// tap, when set (by this package's tests only), sees every line
	// written to the host (out true) and read from it, before the client
	// acts on it.
	tap func(out bool, line []byte)
}

// Client drives one octet-host process over native-host protocol 1.
//
// Requests are serial: while one is in flight (a run until the client has
// read its terminal event from the host, and in any case until its line
// has been written), another returns ErrBusy. The
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

	// mu is the client's one lock. It guards the request state (broken,
	// cur, issued, killedByUs, writing and every call's seq), the process
	// state (reaped: no signal may reach the group once its leader is being
	// reaped, as the group ID may then be reused) and the Logger, which is
	// called with mu held so that it never runs concurrently with itself.
	// It is held only for short, non-blocking steps: never across a write
	// to the host's stdin, a read of its stdout or a wait for its exit.
	mu         sync.Mutex
	broken     error  // set once no further request may be made; the first cause wins
	cur        *call  // the request in flight
	issued     uint64 // request IDs handed out: idPrefix + 1..issued
	killedByUs bool   // the client signalled the group (Kill, cancel, violation, grace)
	writing    bool   // a request line is being written: begin admits no other request
	reaped     bool   // the group must not be signalled any more

	exited  chan struct{} // closed once the process has been reaped
	exitErr error         // cmd.Wait's error; read only after exited is closed

	readerDone chan struct{}
	stderrDone chan struct{}
	stdinOnce  sync.Once

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
	cmd.SysProcAttr = procgroup.SysProcAttr()
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

// logf passes one diagnostic line to Config.Logger. It takes c.mu, so the
// caller must not hold it.
func (c *Client) logf(format string, args ...any) {
	if c.cfg.Logger == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg.Logger("octet client: " + msg)
}
