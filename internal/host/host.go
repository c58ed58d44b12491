package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"octet.dev/host/fsm/session"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/wire"
)

// Config is what Serve needs.
type Config struct {
	// In is the protocol input (stdin).
	In io.Reader
	// Out is the protocol output (the real stdout). Nothing else may write to it.
	Out io.Writer
	// Agent is the shared runtime.
	Agent *runtime.Agent
	// Log receives diagnostics (the binary's stderr), the session
	// machine's transitions at runtime.LevelTrace among them. Default
	// (nil): nothing is logged.
	Log *slog.Logger
	// Version is reported as hello.sdk_version.
	Version string
	// Ready, when set, holds back the first request until it is closed:
	// the binary installs its signal handlers concurrently with its
	// start-up and answers nothing before they are in place.
	Ready <-chan struct{}
}

// Host serves one protocol session.
type Host struct {
	cfg  Config
	w    *wire.Writer
	m    *session.Machine
	busy atomic.Bool // a request is being served
}

// Busy reports whether a request is being served. After Serve's context is
// canceled, a busy Serve returns once that request's terminal event is
// written; an idle one waits for input.
func (h *Host) Busy() bool { return h.busy.Load() }

// New returns a Host for cfg.
func New(cfg Config) *Host {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	m := session.New()
	m.SetTracer(sessionTracer(cfg.Log))
	return &Host{cfg: cfg, w: wire.NewWriter(cfg.Out), m: m}
}

// ExitError is returned by Serve when the host must exit non-zero.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d: %v", e.Code, e.Err) }
func (e *ExitError) Unwrap() error { return e.Err }

// Serve reads and serves requests until EOF, shutdown, a write failure or
// ctx's cancellation. It returns nil for a clean exit (status 0) and an
// *ExitError otherwise.
func (h *Host) Serve(ctx context.Context) error {
	lr := wire.NewLineReader(h.cfg.In)
	ready := h.cfg.Ready
	for {
		if err := ctx.Err(); err != nil {
			return &ExitError{Code: 1, Err: err}
		}
		in, req, msg := h.read(ctx, lr)
		if ready != nil {
			<-ready
			ready = nil
		}
		if done, err := h.fire(ctx, in, req, msg); done {
			return err
		}
	}
}

// read reads the next line and turns it into the session machine's input:
// the decoded request, or a malformed line with its code and message.
func (h *Host) read(ctx context.Context, lr *wire.LineReader) (session.Input, *wire.Request, string) {
	line, err := lr.Next()
	switch {
	case errors.Is(err, io.EOF):
		return session.Input{Trigger: session.TrEOF}, nil, ""
	case errors.Is(err, wire.ErrFrameTooLarge):
		return session.Input{Trigger: session.TrMalformed, Code: protocol.CodeFrameTooLarge}, nil,
			"request line exceeds 1048576 bytes including the newline; it was discarded"
	case err != nil:
		h.cfg.Log.LogAttrs(ctx, slog.LevelError, "reading stdin failed; treating it as end of input", slog.Any("error", err))
		return session.Input{Trigger: session.TrEOF}, nil, ""
	}
	r, derr := wire.Decode(line)
	switch {
	case derr != nil:
		h.cfg.Log.LogAttrs(ctx, slog.LevelDebug, "malformed request", slog.String("code", string(derr.Code)), slog.String("request_id", derr.RequestID))
		return session.Input{Trigger: session.TrMalformed, RequestID: derr.RequestID, Code: derr.Code}, nil, derr.Message
	case r.Command == protocol.CommandShutdown:
		return session.Input{Trigger: session.TrShutdown, RequestID: r.RequestID}, r, ""
	}
	return session.Input{Trigger: session.TrRequest, RequestID: r.RequestID}, r, ""
}

// fire applies one input and performs the machine's effects. done reports
// that Serve must return err.
func (h *Host) fire(ctx context.Context, in session.Input, req *wire.Request, msg string) (done bool, err error) {
	effects, ferr := h.m.Fire(in)
	if ferr != nil {
		panic(ferr) // the driver only fires permitted triggers: a broken invariant
	}
	// Copy: serving a request fires the machine again and reuses its slice.
	for _, e := range append([]session.Effect(nil), effects...) {
		switch e.Kind {
		case session.EffReject:
			s := h.w.Stream(e.RequestID, "", "")
			if werr := s.Fail(e.Seq, e.Code, rejectMessage(e.Code, msg)); werr != nil {
				return h.writeFailed(ctx, werr)
			}
		case session.EffStart:
			h.busy.Store(true)
			done, err := h.serve(ctx, req)
			h.busy.Store(false)
			if done {
				return true, err
			}
		case session.EffWriteTerminal:
			// Only shutdown reaches here: a served request writes its own
			// terminal through its emitter.
			s := h.w.Stream(e.RequestID, "", "")
			if werr := s.Finish(e.Seq, protocol.TypeShutdown, protocol.Empty{}); werr != nil {
				return h.writeFailed(ctx, werr)
			}
		case session.EffAbort:
			// Active work is canceled by the caller of Serve through ctx;
			// runs started by serve observe it.
		case session.EffExit:
			if e.ExitCode == 0 {
				return true, nil
			}
			return true, &ExitError{Code: e.ExitCode, Err: h.w.Err()}
		}
	}
	return false, nil
}

func rejectMessage(code protocol.Code, msg string) string {
	if code == protocol.CodeDuplicateRequestID {
		return "request_id was already used by this host process"
	}
	return msg
}

func (h *Host) writeFailed(ctx context.Context, werr error) (bool, error) {
	h.cfg.Log.LogAttrs(ctx, slog.LevelError, "writing to stdout failed; the caller is gone", slog.Any("error", werr))
	effects, err := h.m.Fire(session.Input{Trigger: session.TrWriteFailed})
	if err != nil {
		panic(err)
	}
	for _, e := range effects {
		if e.Kind == session.EffExit {
			return true, &ExitError{Code: e.ExitCode, Err: fmt.Errorf("stdout: %w", werr)}
		}
	}
	return true, &ExitError{Code: 1, Err: werr}
}
