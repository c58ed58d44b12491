package responses

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// wsStream is the provider.Stream of one WebSocket call.
type wsStream struct {
	p     *Provider
	s     *socket
	req   *wsRequest
	ctx   context.Context
	dec   *decoder
	msg   []byte    // the last message read (readMessage)
	rest  io.Reader // the rest of msg when it is long and read ahead
	ahead bool      // msg is a message read ahead, for the decoder's next read

	watch    *idleWatch
	closed   atomic.Bool // Close was called
	endedOK  atomic.Bool // the call ended normally and its socket went back
	stopCtx  func() bool
	released bool // the socket was given back or closed

	textSum maphash.Hash
	calls   []provider.ToolCall
	err     error

	st *steerState // native steering (steer.go); nil when the call takes none
}

func newWSStream(ctx context.Context, p *Provider, s *socket, r *wsRequest, maxOutput int) *wsStream {
	ws := &wsStream{p: p, s: s, req: r, ctx: ctx, msg: make([]byte, 0, 1024)}
	ws.textSum.SetSeed(p.ws.seed)
	ws.dec = &decoder{lastText: -1, lastReasoning: -1, maxEvent: p.maxEvent, msgs: ws.read}
	limit := maxOutput
	if limit <= 0 {
		limit = provider.OutputLimit(0)
	}
	ws.dec.SetOutputLimit(limit)
	// A canceled context or the idle timer closes the socket, which ends
	// a blocked read or write; reads themselves take no context (no
	// per-message cost).
	ws.stopCtx = context.AfterFunc(ctx, s.close)
	ws.watch = newIdleWatch(p.idle, s.close)
	return ws
}

// idleWatchTicks is how many times per idle timeout an idleWatch looks.
const idleWatchTicks = 4

// idleWatch calls expire when no activity was noted for its timeout. It
// looks idleWatchTicks times per timeout, so the timeout is kept within a
// quarter of itself, and noting activity is one atomic add: resetting a
// timer for every message would cost more than decoding a delta.
type idleWatch struct {
	activity atomic.Uint64
	fired    atomic.Bool
	timeout  time.Duration
	expire   func()

	mu      sync.Mutex // the callback, and stop
	timer   *time.Timer
	stopped bool
	seen    uint64 // activity at the last look
	quiet   int    // looks in a row without activity
}

func newIdleWatch(timeout time.Duration, expire func()) *idleWatch {
	w := &idleWatch{timeout: timeout, expire: expire}
	w.mu.Lock()
	w.timer = time.AfterFunc(timeout/idleWatchTicks, w.look)
	w.mu.Unlock()
	return w
}

// note records activity.
func (w *idleWatch) note() { w.activity.Add(1) }

func (w *idleWatch) look() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if a := w.activity.Load(); a != w.seen {
		w.seen, w.quiet = a, 0
	} else if w.quiet++; w.quiet >= idleWatchTicks {
		w.fired.Store(true)
		w.stopped = true
		w.expire()
		return
	}
	w.timer.Reset(w.timeout / idleWatchTicks)
}

// stop disarms the watch for good.
func (w *idleWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
}

// send writes the response.create message. A failure here may have sent
// part of it: the call counts as written, unless the context ended before
// the message was handed to the socket.
func (ws *wsStream) send(frame []byte) error {
	if err := ws.s.writeText(ws.ctx, frame); err != nil {
		if errors.Is(err, errNotSent) {
			err = &provider.Error{Kind: provider.FailCanceled, Message: "canceled", Err: err}
		} else {
			err = ws.classify(err)
		}
		ws.release(false)
		return err
	}
	ws.watch.note()
	return nil
}

// readMessage reads one text message into the stream's message buffer,
// which the next message reuses: the returned slice is valid until then.
// A message longer than the decoder's long-event threshold
// (decoder.longAt: a generated image, 27 MiB of base64 for a 20 MiB
// image) is not buffered whole: data is its first longAt+1 bytes and rest
// yields the remainder as it arrives, valid until the next read; rest is
// nil for a message read whole. The buffer so never grows past longAt+1
// bytes. The read limit set at dial (setReadLimit) bounds the message; a
// binary message is refused before its payload is read.
func (ws *wsStream) readMessage() (data []byte, rest io.Reader, err error) {
	var typ int
	var r io.Reader
	if f := ws.s.frames; f != nil {
		typ, err = f.next()
		r = f
	} else {
		typ, r, err = ws.s.conn.NextReader()
	}
	if err != nil {
		return nil, nil, err
	}
	if typ != websocket.TextMessage {
		return nil, nil, edge.Failure(provider.FailDecode, "", "binary WebSocket message", nil)
	}
	long := ws.dec.longAt()
	b := ws.msg[:0]
	for {
		if len(b) > long {
			ws.msg = b
			ws.watch.note()
			return b, wsRest{r, ws.watch}, nil
		}
		if len(b) == cap(b) {
			b = append(make([]byte, 0, min(max(2*cap(b), 1024), long+1)), b...)
		}
		n, err := r.Read(b[len(b):min(cap(b), long+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			ws.msg = b[:0]
			return nil, nil, err
		}
	}
	ws.msg = b
	ws.watch.note()
	return b, nil, nil
}

// wsRest is the remainder of a long message: each read is activity for
// the idle timeout, so a long message arriving slowly is not an idle
// socket.
type wsRest struct {
	r     io.Reader
	watch *idleWatch
}

func (w wsRest) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.watch.note()
	}
	return n, err
}

// read is the decoder's message source.
func (ws *wsStream) read() ([]byte, io.Reader, error) {
	if ws.ahead {
		ws.ahead = false
		rest := ws.rest
		ws.rest = nil
		return ws.msg, rest, nil
	}
	return ws.readMessage()
}

// Next advances to the next event.
func (ws *wsStream) Next() bool {
	if ws.released {
		return false
	}
	if ws.closed.Load() {
		if !ws.dec.Finished() {
			// Closed by the consumer before the end: not a normal end.
			ws.err = &provider.Error{Kind: provider.FailCanceled, Message: "stream closed",
				RequestWritten: true, ContentStarted: ws.dec.Started()}
		}
		ws.release(false)
		return false
	}
	if ws.st != nil && ws.quietEnd() {
		return false // steer.go: a follow that ends without a response
	}
	if ws.dec.Next() {
		ev := ws.dec.Event()
		switch ev.Kind {
		case provider.EventText:
			ws.textSum.WriteString(ev.Text)
		case provider.EventToolCall:
			ws.calls = append(ws.calls, ev.ToolCall)
		case provider.EventResponseCreated, provider.EventSteerAccepted, provider.EventSteerPending, provider.EventSteerFailed:
			ws.st.note(ev) // steer.go
		}
		return true
	}
	if err := ws.dec.Err(); err != nil {
		ws.err = ws.classify(err)
		ws.release(false)
		return false
	}
	if ws.st != nil && ws.hold() {
		return false // steer.go: the socket waits for Follow
	}
	ws.release(true)
	return false
}

// Event returns the current event.
func (ws *wsStream) Event() provider.StreamEvent { return ws.dec.Event() }

// Current returns the current event in place, valid until the next Next.
func (ws *wsStream) Current() *provider.StreamEvent { return ws.dec.Current() }

// Err returns the failure that ended the stream, nil after a normal end.
func (ws *wsStream) Err() error { return ws.err }

// Close ends the call; a call that did not end normally closes its socket
// (the server would go on sending its events). It may be called from
// another goroutine to abort a blocked Next, and more than once.
func (ws *wsStream) Close() error {
	if ws.closed.Swap(true) {
		return nil
	}
	if ws.st != nil && ws.st.followed.Load() {
		return nil // the socket is its follow's (steer.go)
	}
	if !ws.endedOK.Load() {
		ws.s.close()
	}
	return nil
}

// release ends the stream's hold on its socket: a call that ended
// normally gives it back with its continuation state; any other end
// closes it.
func (ws *wsStream) release(ok bool) {
	if ws.released {
		return
	}
	ws.released = true
	if ws.st != nil {
		ws.st.end() // steer.go: no steer goes out on it from here on
	}
	ws.dec.Release() // spools of media not delivered
	ws.watch.stop()
	ws.stopCtx()
	if ok {
		ws.endedOK.Store(true)
	}
	if !ok || ws.closed.Load() {
		ws.s.close()
		return
	}
	ws.s.state = ws.continuation()
	ws.p.give(ws.s)
}

// continuation is the continuation state the stream's call leaves on its
// socket: its completed response's, or nil.
func (ws *wsStream) continuation() *wsState {
	if ws.st != nil && ws.st.follow {
		return ws.afterFollow() // steer.go
	}
	if ws.dec.respID == "" {
		return nil
	}
	r := ws.req
	if r.cont != "" {
		// The one response.create after response.steer.pending: the
		// server prepended the accepted steering input to it, so its
		// conversation there is no request the host sent (the host puts
		// that input before this response's output). Like a successor,
		// it is continued only by a call naming it (steer.go).
		return &wsState{respID: ws.dec.respID, head: r.head, textSum: ws.textSum.Sum64(), calls: ws.calls, successor: true}
	}
	return &wsState{respID: ws.dec.respID, head: r.head, items: r.items, messages: len(r.messages),
		textSum: ws.textSum.Sum64(), calls: ws.calls}
}

// classify completes a failure after the request was sent with the facts
// of this call.
func (ws *wsStream) classify(err error) error {
	e := &provider.Error{RequestWritten: true, ContentStarted: ws.dec.Started()}
	var pe *provider.Error
	switch {
	case ws.watch.fired.Load():
		e.Kind = provider.FailIdleTimeout
		e.Message = "no WebSocket message for " + ws.p.idle.String()
		e.Err = errors.Join(errors.New("responses: websocket"), edge.ErrIdleTimeout)
	case ws.ctx.Err() != nil:
		e.Kind, e.Message, e.Err = provider.FailCanceled, "canceled", ws.ctx.Err()
	case ws.closed.Load():
		e.Kind, e.Message, e.Err = provider.FailCanceled, "stream closed", err
	case errors.As(err, &pe):
		e.Kind, e.Code, e.Err = pe.Kind, ws.p.scrub.Sanitize(pe.Code), pe.Err
		e.Message = ws.p.scrub.Sanitize(pe.Message)
		if e.Message == "" {
			e.Message = string(pe.Kind)
		}
	case errors.Is(err, websocket.ErrReadLimit):
		e.Kind, e.Err = provider.FailDecode, err
		e.Message = "WebSocket message larger than the event bound"
	default:
		// The socket closed or broke before the terminal event.
		e.Kind, e.Err = provider.FailStreamCut, err
		msg := "WebSocket closed before response.completed"
		var ce *websocket.CloseError
		if !errors.As(err, &ce) && !errors.Is(err, io.EOF) {
			msg += ": " + transportText(err)
		}
		e.Message = ws.p.scrub.Sanitize(msg)
	}
	return e
}
