package responses

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/gorilla/websocket"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// The WebSocket transport (Config.Transport "websocket"). A call is one
// {"type":"response.create", ...} text message carrying the fields of the
// HTTP body except stream and background; the server answers with the
// same response.* events as over SSE, one JSON event per message, which
// the SSE decoder of this package decodes as one event's data each.
//
// A Provider keeps one socket, reused by its calls one after another (the
// steps of a run), closed after SocketIdleTTL unused and never reused past
// ConnectionLimit of age (the server ends a connection after 60 minutes).
// Continuation state is local to the connection: when the socket's last
// response completed and the new request's conversation is the previous
// one plus that response's own output (its text and tool calls exactly as
// the response produced them) plus new messages, the frame carries
// previous_response_id and only the new input items; anything else sends
// the whole conversation.
//
// Recovery facts follow the HTTP rules (CONTRACT §12): every failure until
// the response.create message is handed to the socket (dial, handshake,
// cancel) has RequestWritten false; from then on the call may have been
// billed. The idle timeout applies between server messages. A handshake
// that the server refuses with an HTTP answer (not 101) means the socket
// never started: the Provider then uses HTTP for the rest of its life.

// Transports of Config.Transport.
const (
	TransportHTTP      = "http"
	TransportWebSocket = "websocket"
)

// DefaultSocketIdleTTL is how long an unused socket stays open when
// Config.SocketIdleTTL is zero.
const DefaultSocketIdleTTL = 5 * time.Minute

// DefaultConnectionLimit is the age past which a socket is not reused when
// Config.ConnectionLimit is zero: the server closes connections at 60
// minutes (websocket_connection_limit_reached), and a call started near
// that mark would be cut, so sockets are replaced five minutes before it.
const DefaultConnectionLimit = 55 * time.Minute

// connectionLimitReached is the error code of a request the server refused
// because its connection reached the 60-minute limit.
const connectionLimitReached = "websocket_connection_limit_reached"

// wsCreate is the response.create message: the HTTP body's fields without
// stream, plus the continuation. Field order is the wire order.
type wsCreate struct {
	Type               string     `json:"type"`
	Model              string     `json:"model"`
	Instructions       string     `json:"instructions,omitempty"`
	PreviousResponseID string     `json:"previous_response_id,omitempty"`
	Input              []any      `json:"input"`
	Tools              []any      `json:"tools,omitempty"`
	Reasoning          *reasoning `json:"reasoning,omitempty"`
	MaxOutputTokens    int        `json:"max_output_tokens,omitzero"`
	Include            []string   `json:"include,omitempty"`
	Store              bool       `json:"store"`
}

// wsHead is what a continuation must share with the previous request:
// everything but the input.
type wsHead struct {
	Model           string     `json:"model"`
	Instructions    string     `json:"instructions"`
	Tools           []any      `json:"tools"`
	Reasoning       *reasoning `json:"reasoning"`
	MaxOutputTokens int        `json:"max_output_tokens"`
	Include         []string   `json:"include"`
	Store           bool       `json:"store"`
}

// wsState is what a socket's last completed response leaves for a
// continuation.
type wsState struct {
	respID   string
	head     []byte   // the wsHead of the request
	items    [][]byte // every input item of the request, encoded; nil for a successor
	messages int      // len(Request.Messages); 0 for a successor
	// The response's own output, as the stream produced it.
	textSum uint64
	calls   []provider.ToolCall
	// successor: the response is one the server created after a steer
	// (steer.go). Its conversation on the server (the steered request,
	// the steered response, the steering input) is no request the host
	// sent, so items and messages are unknown: it is continued only by a
	// call that names it (Request.ContinueResponse, the one response.create
	// after response.steer.pending), from its own output on.
	successor bool
}

// socket is one WebSocket connection (github.com/gorilla/websocket,
// opened through the Provider's http.Client: websocket_conn.go).
//
// The library allows one reader and one writer at a time, besides Close
// and WriteControl (the pong it sends while reading), which may be called
// at any time. The reader is the call's stream (wsStream.readMessage),
// one call at a time. Every data message written goes through writeText,
// which holds wmu for the whole message, so a message sent from another
// goroutine while the call's read loop runs (a response.steer on the live
// socket) never interleaves with another.
type socket struct {
	conn   *websocket.Conn
	frames *frameReader // reads the messages (nil: the library's NextReader does)
	wmu    sync.Mutex   // writeText
	opened time.Time    // by the Provider's clock
	used   time.Time    // when its last call ended
	state  *wsState     // nil: no continuation possible
	timer  *time.Timer
	closed atomic.Bool // close was called: nothing more can be sent
}

// libraryReader makes new sockets read through the library's NextReader:
// the tests that hold frameReader to the library's reading set it.
var libraryReader = false

// setReadLimit bounds a message's length, in bytes.
func (s *socket) setReadLimit(n int64) {
	s.conn.SetReadLimit(n)
	if s.frames != nil {
		s.frames.limit = n
	}
}

// errNotSent marks a writeText error after which nothing of the message
// left: its context ended before the write began.
var errNotSent = errors.New("websocket message not sent")

// writeText sends msg as one text message. It is safe to call from any
// goroutine, concurrently with the socket's reader and with other calls
// of writeText, which wait for each other (the lock is held for the whole
// message).
//
// A ctx that has ended when the lock is taken fails the write with an
// error that wraps errNotSent and ctx's error: nothing was sent. A ctx
// that ends during the write closes the socket (part of a message cannot
// be taken back), which also ends the call reading from it. Any other
// error means the message may have been sent in part: the caller closes
// the socket (a call's classify and release do).
func (s *socket) writeText(ctx context.Context, msg []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", errNotSent, err)
	}
	stop := context.AfterFunc(ctx, s.close)
	err := s.conn.WriteMessage(websocket.TextMessage, msg)
	stop()
	return err
}

// close closes the connection at once, without a close frame; a blocked
// read or write returns. It may be called from any goroutine, more than
// once.
func (s *socket) close() {
	s.closed.Store(true)
	_ = s.conn.Close()
}

// sockets is a Provider's socket slot.
type sockets struct {
	mu       sync.Mutex
	idle     *socket
	closed   bool
	fallback atomic.Bool // a handshake was refused: HTTP from now on
	seed     maphash.Seed
}

// wsURL returns the WebSocket URL of an http(s) endpoint.
func wsURL(endpoint string) string {
	if rest, ok := strings.CutPrefix(endpoint, "https://"); ok {
		return "wss://" + rest
	}
	return "ws://" + strings.TrimPrefix(endpoint, "http://")
}

// take returns the idle socket if it may serve another call, closing it
// when it went SocketIdleTTL unused or is ConnectionLimit old.
func (p *Provider) take() *socket {
	w := p.ws
	w.mu.Lock()
	s := w.idle
	w.idle = nil
	w.mu.Unlock()
	if s == nil {
		return nil
	}
	s.timer.Stop()
	now := p.now()
	if now.Sub(s.used) >= p.socketTTL || now.Sub(s.opened) >= p.connLimit {
		s.close()
		return nil
	}
	return s
}

// give makes s the idle socket, or closes it when the Provider is closed
// or already holds one.
func (p *Provider) give(s *socket) {
	w := p.ws
	s.used = p.now()
	w.mu.Lock()
	if w.closed || w.idle != nil {
		w.mu.Unlock()
		s.close()
		return
	}
	w.idle = s
	s.timer = time.AfterFunc(p.socketTTL, func() {
		w.mu.Lock()
		if w.idle != s {
			w.mu.Unlock()
			return
		}
		w.idle = nil
		w.mu.Unlock()
		s.close()
	})
	w.mu.Unlock()
}

// Close closes the Provider's idle WebSocket, and any socket in use when
// its call ends. HTTP calls are not affected; the Provider stays usable
// over HTTP and the WebSocket transport alike, but a later call dials a
// socket of its own and closes it when it ends.
func (p *Provider) Close() error {
	if p.ws == nil {
		return nil
	}
	w := p.ws
	w.mu.Lock()
	s := w.idle
	w.idle = nil
	w.closed = true
	w.mu.Unlock()
	if s != nil {
		s.timer.Stop()
		s.close()
	}
	return nil
}

// handshakeHeaders are the headers the WebSocket handshake sets itself;
// the route's headers of these names are not sent with it.
var handshakeHeaders = []string{"Content-Type", "Accept", "Upgrade", "Connection",
	"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions", "Sec-Websocket-Protocol"}

// dial opens a socket. refused reports a handshake the server answered
// with HTTP instead of switching protocols (a 3xx included: the client
// never follows a redirect, so the key and the route's headers go to the
// configured origin only).
func (p *Provider) dial(ctx context.Context) (s *socket, refused bool, err error) {
	// The handshake is bounded by the idle timeout, or by the client's
	// overall Timeout when shorter (dialSocket keeps that Timeout off the
	// socket itself).
	wait := p.idle
	if t := p.client.Timeout; t > 0 && t < wait {
		wait = t
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	header := p.header.Clone()
	for _, name := range handshakeHeaders {
		header.Del(name)
	}
	conn, cc, err := dialSocket(dctx, p.client, p.endpoint, header)
	if err != nil {
		if cc.resp != nil && cc.resp.StatusCode != http.StatusSwitchingProtocols && ctx.Err() == nil {
			return nil, true, err
		}
		if cc.err != nil {
			err = cc.err // the HTTP request's own failure: its net errors
		}
		// Nothing of the request left: the server cannot have seen the
		// call (CONTRACT §12). A failed dial is FailConnect (a network
		// wait when it is an outage); a handshake cut or unanswered on an
		// open connection is a cut, retried, never uncertain.
		e := &provider.Error{Kind: provider.FailConnect, Err: err,
			Message: p.scrub.Sanitize("websocket handshake failed: " + transportText(err))}
		var op *net.OpError
		var dns *net.DNSError
		switch {
		case ctx.Err() != nil:
			e.Kind, e.Message = provider.FailCanceled, "canceled"
		case dctx.Err() != nil:
			e.Kind, e.Message = provider.FailIdleTimeout, "websocket handshake: no answer for "+wait.String()
		case errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial":
		default:
			e.Kind = provider.FailStreamCut
		}
		return nil, false, e
	}
	// A message may be as long as a long SSE data line (a generated
	// image); past LongDataAt it is decoded like one, as it is read
	// (readMessage, decoder.stepEvent).
	now := p.now()
	s = &socket{conn: conn, opened: now, used: now}
	if !cc.readAhead && !libraryReader {
		// The library read nothing past the handshake's answer: the
		// messages can be read straight off the connection.
		s.frames = newFrameReader(cc, conn)
	}
	s.setReadLimit(int64(max(p.maxEvent, edge.MaxLongDataBytes)))
	return s, false, nil
}

// transportText is err's text without a URL's path or query, which may
// carry a secret on some gateways.
func transportText(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "://"); i >= 0 {
		j := i + 3
		for j < len(msg) && msg[j] != '/' && msg[j] != ' ' && msg[j] != '"' {
			j++
		}
		k := j
		for k < len(msg) && msg[k] != ' ' && msg[k] != '"' && msg[k] != ':' {
			k++
		}
		msg = msg[:j] + msg[k:]
	}
	return msg
}

// wsRequest is a call's request in the forms the transport needs.
type wsRequest struct {
	body     *request
	owners   []itemOwner
	head     []byte
	items    [][]byte
	messages []provider.Message
	cont     string // Request.ContinueResponse
}

// encodeWS encodes req for the WebSocket transport.
func (p *Provider) encodeWS(req provider.Request) (*wsRequest, error) {
	body, owners, err := buildBody(req, requestOptions{store: p.store, encrypted: p.encrypted, images: p.images})
	if err != nil {
		return nil, err
	}
	r := &wsRequest{body: body, owners: owners, messages: req.Messages, cont: req.ContinueResponse}
	r.head, err = json.Marshal(&wsHead{Model: body.Model, Instructions: body.Instructions, Tools: body.Tools,
		Reasoning: body.Reasoning, MaxOutputTokens: body.MaxOutputTokens, Include: body.Include, Store: body.Store}, marshalOpts)
	if err != nil {
		return nil, err
	}
	r.items = make([][]byte, len(body.Input))
	for i, it := range body.Input {
		if r.items[i], err = json.Marshal(it, marshalOpts); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// frame returns the response.create message for r on a socket whose
// continuation state is st (nil for none): with previous_response_id and
// only the new items when r continues st, else the whole input.
func (p *Provider) frame(r *wsRequest, st *wsState) ([]byte, error) {
	msg := wsCreate{Type: "response.create", Model: r.body.Model, Instructions: r.body.Instructions,
		Input: r.body.Input, Tools: r.body.Tools, Reasoning: r.body.Reasoning,
		MaxOutputTokens: r.body.MaxOutputTokens, Include: r.body.Include, Store: r.body.Store}
	if from, at, ok := p.continues(r, st); ok {
		msg.PreviousResponseID = st.respID
		msg.Input = make([]any, 0, len(r.body.Input)-from)
		for i := from; i < len(r.body.Input); i++ {
			if r.owners[i].message == at && !r.owners[i].standIn {
				continue // the previous response's output: the server has it
			}
			msg.Input = append(msg.Input, r.body.Input[i])
		}
	}
	if r.cont != "" && msg.PreviousResponseID != r.cont {
		return nil, cannotContinue(r.cont) // steer.go
	}
	return json.Marshal(&msg, marshalOpts)
}

// continues reports whether r is the conversation of st followed by st's
// response and new messages, where its new items begin, and the index of
// the message that is st's response (its items are not sent again).
func (p *Provider) continues(r *wsRequest, st *wsState) (from, at int, ok bool) {
	if st == nil || st.respID == "" || !bytes.Equal(r.head, st.head) {
		return 0, 0, false
	}
	if st.successor {
		return p.continuesSuccessor(r, st)
	}
	if len(r.messages) <= st.messages || len(r.items) < len(st.items) {
		return 0, 0, false
	}
	for i, it := range st.items {
		if !bytes.Equal(r.items[i], it) {
			return 0, 0, false
		}
	}
	if !p.isOutput(&r.messages[st.messages], st) {
		return 0, 0, false
	}
	from = len(st.items)
	for i := from; i < len(r.owners); i++ {
		if r.owners[i].message == st.messages && r.owners[i].standIn {
			return 0, 0, false // a stand-in the server's history lacks
		}
	}
	return from, st.messages, true
}

// isOutput reports whether m is st's response's output exactly: text and
// calls the host may have changed (a redacted echo, a reassigned call id,
// dropped arguments) are not what the server holds.
func (p *Provider) isOutput(m *provider.Message, st *wsState) bool {
	if m.Role != provider.RoleAssistant || maphash.String(p.ws.seed, m.Text) != st.textSum || len(m.ToolCalls) != len(st.calls) {
		return false
	}
	for i, tc := range m.ToolCalls {
		if tc != st.calls[i] {
			return false
		}
	}
	return true
}

// continuesSuccessor is continues for a successor's state: only a call
// that names it continues it (the response.create after
// response.steer.pending), and what the server holds ends with its output,
// which must be r's last assistant message, followed by new messages (the
// tool outputs). What comes before it is the server's own history of the
// steer, never checked against r nor sent.
func (p *Provider) continuesSuccessor(r *wsRequest, st *wsState) (from, at int, ok bool) {
	if r.cont != st.respID {
		return 0, 0, false
	}
	at = -1
	for i := len(r.messages) - 1; i >= 0; i-- {
		if r.messages[i].Role == provider.RoleAssistant {
			at = i
			break
		}
	}
	if at < 0 || at == len(r.messages)-1 || !p.isOutput(&r.messages[at], st) {
		return 0, 0, false
	}
	from = len(r.owners)
	for i, o := range r.owners {
		if o.message >= at {
			from = i
			break
		}
	}
	for i := from; i < len(r.owners) && r.owners[i].message == at; i++ {
		if r.owners[i].standIn {
			return 0, 0, false // a stand-in the server's history lacks
		}
	}
	return from, at, true
}

// streamWS starts one call over the WebSocket transport. fallback reports
// that the handshake was refused and the call must go over HTTP.
func (p *Provider) streamWS(ctx context.Context, req provider.Request) (st provider.Stream, fallback bool, err error) {
	r, err := p.encodeWS(req)
	if err != nil {
		return nil, false, err
	}
	for attempt := 0; ; attempt++ {
		s := p.take()
		if s == nil {
			var refused bool
			if s, refused, err = p.dial(ctx); refused {
				p.ws.fallback.Store(true)
				return nil, true, nil
			} else if err != nil {
				return nil, false, err
			}
		}
		var frame []byte
		if frame, err = p.frame(r, s.state); err != nil {
			s.close()
			return nil, false, err
		}
		s.state = nil
		if err = ctx.Err(); err != nil {
			p.give(s) // nothing was sent on it
			return nil, false, &provider.Error{Kind: provider.FailCanceled, Message: "canceled", Err: err}
		}
		ws := newWSStream(ctx, p, s, r, req.MaxOutputBytes)
		ws.dec.spoolDir = req.SpoolDir
		if req.NativeSteering {
			ws.steerable(req.MaxOutputBytes) // steer.go
		}
		if err = ws.send(frame); err != nil {
			return nil, false, err
		}
		// The first message says whether the server took the call: a
		// refusal for the connection's age comes before any work, so the
		// call goes again, once, on a new socket.
		data, rest, err := ws.readMessage()
		if err != nil {
			err = ws.classify(err)
			ws.release(false)
			return nil, false, err
		}
		if rest == nil && bytes.Contains(data, []byte(connectionLimitReached)) && isConnectionLimit(data) {
			ws.release(false)
			if attempt == 0 {
				continue
			}
			return nil, false, &provider.Error{Kind: provider.FailErrorEvent, Code: connectionLimitReached, RequestWritten: true,
				Message: "the WebSocket connection reached its time limit twice in a row"}
		}
		ws.ahead, ws.rest = true, rest
		return ws, false, nil
	}
}

// isConnectionLimit reports whether data is an error event with the
// connection-limit code.
func isConnectionLimit(data []byte) bool {
	var ev wireEvent
	if json.Unmarshal(data, &ev, unmarshalOpts) != nil || ev.Type != "error" {
		return false
	}
	code := string(ev.Code)
	if code == "" && ev.Error != nil {
		code = ev.Error.CodeOrType()
	}
	return code == connectionLimitReached
}

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
