package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// The Responses WebSocket endpoint: a GET /v1/responses with a WebSocket
// upgrade opens a socket on which each text message
// {"type":"response.create", ...} is one model request, answered by the
// next Turn of the Script (or a queued fixture) as the same events the SSE
// endpoint streams, one JSON event per text message.
//
// The handshake is recorded in Requests as a GET with WebSocket set to the
// connection's number (from 1); each message received is recorded with
// Method "MESSAGE", the same WebSocket number and its decoded Body. A
// handshake without the key (Options.APIKey) is refused with a 401.
//
// A message must be a JSON object of type "response.create" with a model
// and an input array and without stream or background; a
// previous_response_id must name the last response completed on the same
// connection (the state is connection-local, as on the real API). A message
// that breaks these rules is answered with an error event
// (invalid_request_error, or previous_response_not_found) and consumes no
// turn.
//
// Faults: FaultWSRefuse and FaultWSDropHandshake act on the handshake when
// they are at the head of the fault queue; the other faults act on the next
// message: FaultWSCloseAfterFrame, FaultCutMidStream (the socket closes
// after AfterEvents events; Graceful sends a close frame first),
// FaultErrorEvent (the error event, then response.failed, as over SSE; a
// Type of "websocket_connection_limit_reached" is the server's 60-minute
// refusal), and FaultStall. Any other fault is answered with an error event
// saying it is not supported over a WebSocket.
//
// A turn with Steer set waits, mid-response, for a response.steer message
// and answers it with the native steering events (steer.go).

// FaultWSRefuse refuses the next WebSocket handshake with an HTTP status
// (426 Upgrade Required by default): the socket never starts, and a client
// may fall back to HTTP.
type FaultWSRefuse struct{ Status int }

// FaultWSDropHandshake closes the TCP connection of the next WebSocket
// handshake without answering it: a failure before any request message.
type FaultWSDropHandshake struct{}

// FaultWSCloseAfterFrame reads the next response.create message and closes
// the socket without answering: the request was delivered, and may have
// been billed.
type FaultWSCloseAfterFrame struct{}

func (f FaultWSRefuse) describe() string        { return fmt.Sprintf("ws_refuse(%d)", f.Status) }
func (FaultWSDropHandshake) describe() string   { return "ws_drop_handshake" }
func (FaultWSCloseAfterFrame) describe() string { return "ws_close_after_frame" }

// MethodMessage is the Request.Method of a WebSocket message.
const MethodMessage = "MESSAGE"

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// takeHandshakeFault takes a handshake fault at the head of the queue.
func (s *Server) takeHandshakeFault(idx int) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return nil
	}
	switch f := s.faults[0].(type) {
	case FaultWSRefuse, FaultWSDropHandshake:
		s.faults = s.faults[1:]
		s.refuseAtHeadLocked()
		s.reqAt(idx).Fault = f.describe()
		return f
	}
	return nil
}

// serveWebSocket serves one WebSocket connection.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request, requestID string) {
	s.mu.Lock()
	s.sockets++
	num := s.sockets
	s.mu.Unlock()
	rec := Request{Mode: ModeResponses, Method: r.Method, Path: r.URL.Path, Turn: -1, WebSocket: num}
	rec.Header, rec.HadKey, rec.KeySHA256 = redactHeader(r.Header)
	idx := s.record(rec)
	switch f := s.takeHandshakeFault(idx).(type) {
	case FaultWSRefuse:
		apiError{status: f.Status, typ: "invalid_request_error", msg: "WebSocket upgrade refused"}.write(w, ModeResponses, requestID)
		return
	case FaultWSDropHandshake:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	if s.apiKey != "" && !s.authorized(ModeResponses, r.Header) {
		statusError(ModeResponses, http.StatusUnauthorized).write(w, ModeResponses, requestID)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(maxBodyBytes)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = conn.CloseNow() })
	defer stop()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	last := "" // the response completed last on this connection
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			_ = conn.CloseNow()
			return
		}
		n := int(s.seq.Add(1))
		mrec := Request{Mode: ModeResponses, Method: MethodMessage, Path: r.URL.Path, Turn: -1, WebSocket: num, Header: http.Header{}}
		var body map[string]any
		decodeErr := json.Unmarshal(data, &body)
		mrec.Body = body
		midx := s.record(mrec)
		if msg := checkCreate(typ, body, decodeErr, last); msg != "" {
			code := "invalid_request_error"
			if strings.HasPrefix(msg, "Previous response") {
				code = "previous_response_not_found"
			}
			if s.sendWS(ctx, conn, errorMessage(code, msg)) != nil {
				return
			}
			continue
		}
		p := s.dispatch(ModeResponses, midx, data)
		id, ok := s.answerWS(ctx, conn, p, body, n, wsPeer{num: num, path: r.URL.Path})
		s.settle(p, ok)
		switch {
		case ok:
			last = id
		case p.fault == nil:
			// Nothing to answer with: the error was sent, the socket
			// stays.
		case isErrorEvent(p.fault):
			// A failed response leaves the socket open, as the real
			// server does.
		default:
			_ = conn.CloseNow()
			return
		}
	}
}

// isErrorEvent reports a FaultErrorEvent.
func isErrorEvent(f Fault) bool {
	_, ok := f.(FaultErrorEvent)
	return ok
}

// checkCreate returns why a message is not a valid response.create, "" when
// it is.
func checkCreate(typ websocket.MessageType, body map[string]any, decodeErr error, last string) string {
	switch {
	case typ != websocket.MessageText:
		return "messages must be text"
	case decodeErr != nil || body == nil:
		return "the message is not a JSON object"
	case body["type"] != "response.create":
		return fmt.Sprintf("unsupported message type %v", body["type"])
	}
	if m, _ := body["model"].(string); m == "" {
		return "Missing required parameter: 'model'."
	}
	if _, ok := body["input"].([]any); !ok {
		return "Missing required parameter: 'input'."
	}
	for _, k := range []string{"stream", "background"} {
		if _, ok := body[k]; ok {
			return fmt.Sprintf("Unknown parameter: '%s'.", k)
		}
	}
	if prev, ok := body["previous_response_id"]; ok {
		if id, _ := prev.(string); id == "" || id != last {
			return fmt.Sprintf("Previous response with id '%v' not found.", prev)
		}
	}
	return ""
}

// errorMessage is an error event.
func errorMessage(code, msg string) []byte {
	return encode(obj{"type", "error", "error", obj{"type", "invalid_request_error", "code", code, "message", msg, "param", nil}})
}

// sendWS sends one text message.
func (s *Server) sendWS(ctx context.Context, conn *websocket.Conn, msg []byte) error {
	return conn.Write(ctx, websocket.MessageText, msg)
}

// sseData returns the data of one encoded SSE event: what a WebSocket
// message carries.
func sseData(ev []byte) []byte {
	var out []byte
	for line := range bytes.SplitSeq(bytes.TrimRight(ev, "\n"), []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(out) > 0 {
				out = append(out, '\n')
			}
			out = append(out, bytes.TrimPrefix(d, []byte(" "))...)
		}
	}
	return out
}

// answerWS plays the answer of one message and reports the response id and
// whether the whole answer was sent.
func (s *Server) answerWS(ctx context.Context, conn *websocket.Conn, p plan, body map[string]any, n int, peer wsPeer) (string, bool) {
	respID := fmt.Sprintf("resp_fake%d", n)
	var events [][]byte
	switch {
	case p.fix != nil:
		if p.fix.status != http.StatusOK {
			_ = s.sendWS(ctx, conn, errorMessage("server_error", "the fixture is not a stream"))
			return "", false
		}
		events = p.fix.events
	case p.turn >= 0 || p.summary:
		model := p.t.Model
		if model == "" {
			model, _ = body["model"].(string)
		}
		enc := encodeTurn(ModeResponses, &encodeParams{
			turn: &p.t, model: model, n: n, created: time.Now().Unix(),
			includeUsage: true, encrypted: wantsEncrypted(body),
		})
		events = enc.events
		if enc.respID != "" {
			respID = enc.respID
		}
	case p.fault == nil:
		_ = s.sendWS(ctx, conn, errorMessage("server_error", p.missing))
		return "", false
	}
	send := func(evs [][]byte) bool {
		for _, ev := range evs {
			data := sseData(ev)
			if len(data) == 0 {
				continue
			}
			if s.sendWS(ctx, conn, data) != nil {
				return false
			}
		}
		return true
	}
	cut := func(after int) int { return min(after, max(len(events)-1, 0)) }
	switch f := p.fault.(type) {
	case nil:
		if p.turn >= 0 && p.t.Steer != nil {
			return s.answerSteered(ctx, conn, p, body, events, respID, n, peer, send) // steer.go
		}
		return respID, send(events)
	case FaultWSCloseAfterFrame:
		return "", false
	case FaultCutMidStream:
		send(events[:cut(f.AfterEvents)])
		if f.Graceful {
			_ = conn.Close(websocket.StatusGoingAway, "cut")
		}
		return "", false
	case FaultErrorEvent:
		k := cut(f.AfterEvents)
		if send(events[:k]) {
			send(errorEvents(ModeResponses, f, k, respID, ""))
		}
		return "", false
	case FaultStall:
		k := cut(f.AfterEvents)
		if !send(events[:k]) {
			return "", false
		}
		var expired <-chan time.Time
		if f.For > 0 {
			t := time.NewTimer(f.For)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-expired:
		}
		return respID, send(events[k:])
	default:
		_ = s.sendWS(ctx, conn, errorMessage("server_error", "fakeprovider: fault "+f.describe()+" is not supported over a WebSocket"))
		return "", false
	}
}
