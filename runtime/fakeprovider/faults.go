package fakeprovider

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"time"
)

// Fault is a failure the server plays instead of, or in the middle of, a
// normal answer: one of FaultRefuse, FaultResetAfterHeaders, FaultNoHeaders,
// FaultNoRead, FaultEndless, FaultCutMidStream, FaultStall, FaultStatus,
// FaultErrorEvent, FaultRedirect and the WebSocket faults (FaultWSRefuse,
// FaultWSDropHandshake, FaultWSCloseAfterFrame). Inject
// faults with Server.InjectFault.
type Fault interface {
	// describe names the fault for Request.Fault.
	describe() string
}

// FaultRefuse makes the server stop accepting connections: its listener is
// closed (and idle keep-alive connections with it), so the next connection
// attempt is refused before any request byte is sent — the "network down"
// case of CONTRACT §12. Server.Reopen listens again on the same port.
//
// Unlike the other faults it does not wait for a request: it takes effect
// as soon as it reaches the head of the fault queue, that is at once when
// injected into an empty queue, or right after the request that takes the
// fault before it has been dispatched.
//
// A client that holds a pooled keep-alive connection learns that it was
// closed asynchronously: a request sent on it in the instant after the
// refusal fails with EOF (the request was written) instead of being
// refused. Inject the refusal before the client's next request is due, or
// use a client without pooled connections, when the distinction matters.
type FaultRefuse struct {
	// For, when positive, reopens the server by itself after that long;
	// zero means until Reopen is called.
	For time.Duration
}

// FaultResetAfterHeaders answers 200 with the event-stream headers, then
// resets the TCP connection (SO_LINGER 0, so the client sees an RST)
// before any body byte.
type FaultResetAfterHeaders struct{}

// FaultNoHeaders reads the whole request and then answers nothing, not even
// the response headers, until the client gives up or the server closes: a
// server that accepted the call and hangs. (FaultStall stalls after the
// headers, inside the stream.)
type FaultNoHeaders struct{}

// FaultNoRead takes the request's headers and then reads nothing of its
// body and answers nothing: a server that stopped reading. A request body
// larger than the connection's buffers (a few MiB on loopback) then blocks
// the client's write. The request is recorded without its body. As it
// reads nothing, the handler cannot see the client go: it holds the
// connection until the server closes, then cuts it.
type FaultNoRead struct{}

// FaultEndless answers 200 with a stream that never ends: the events
// that open the answer, then the same content delta again and again, as
// fast as the client reads, until it goes away or the server closes — a
// broken or hostile provider that would grow the client's memory without
// bound. Channel picks the delta: "text" (the default), "reasoning", or
// "arguments" (the arguments of one tool call named "read").
type FaultEndless struct {
	Channel string
	// Piece is the size of each delta's content; zero means 16 KiB.
	Piece int
}

// FaultCutMidStream sends the first AfterEvents events of the answer, then
// closes the connection without the terminal event (chat [DONE], Responses
// response.completed, Anthropic message_stop). The count is capped so the
// terminal event is never sent.
type FaultCutMidStream struct {
	AfterEvents int
	// Graceful ends the HTTP body properly (the final chunk of the chunked
	// encoding) so the client sees a clean end of body that merely lacks
	// the terminal event. By default the TCP connection is closed in the
	// middle of the chunked body, so the client sees an unexpected EOF.
	Graceful bool
}

// FaultStall sends the first AfterEvents events of the answer, then sends
// nothing until the client disconnects, the server closes, or For has
// passed (when positive); in that last case the rest of the answer follows
// and the request consumes its turn. When the server closes during a
// stall, the connection is cut.
type FaultStall struct {
	AfterEvents int
	For         time.Duration
}

// FaultStatus answers with an HTTP error status instead of a stream, in
// the provider's error envelope (OpenAI {"error":{…}}, Anthropic
// {"type":"error","error":{…}}) unless Body is set.
type FaultStatus struct {
	// Code is the status, 400–599 (e.g. 429, 500, 502, 503, 529); zero
	// means 500.
	Code int
	// RetryAfter, when set, is sent as the Retry-After header (seconds or
	// an HTTP date, as given).
	RetryAfter string
	// RetryAfterMS, when set, is sent as the retry-after-ms header
	// (OpenAI's extension).
	RetryAfterMS string
	// Body, when set, replaces the envelope; it is sent as
	// application/json when it is valid JSON and as text/plain otherwise
	// (e.g. a gateway's HTML page).
	Body string
}

// FaultErrorEvent sends the first AfterEvents events of the answer, then
// an in-stream error in the mode's format, then ends the body: Anthropic
// "event: error" {"type":"error","error":{type,message}}; Responses
// "event: error" with a nested error object followed by "event:
// response.failed" (as recorded from the real API); chat
// "data: {"error":{…}}" with no [DONE].
type FaultErrorEvent struct {
	AfterEvents int
	// Type is the error type, e.g. "overloaded_error", "api_error",
	// "server_error", "insufficient_quota", "rate_limit_exceeded". Empty
	// means "overloaded_error" on Anthropic and "server_error" on OpenAI.
	Type string
	// Message is the error message; empty means a typical one for Type.
	Message string
}

// FaultRedirect answers with a redirect instead of a stream: status Code
// with a Location of To followed by the request's path and query, and a
// small HTML body naming it, as web servers send. Point To at a second
// Server (its URL) to see whether a client follows the redirect and which
// credentials and headers it carries there: that Server's Requests tell.
type FaultRedirect struct {
	// Code is 301, 302, 303, 307 or 308; zero means 307.
	Code int
	// To is the absolute URL the Location starts with, e.g.
	// "http://127.0.0.1:40124"; it must not be empty.
	To string
}

func (FaultRefuse) describe() string { return "refuse" }

func (f FaultRedirect) describe() string { return fmt.Sprintf("redirect(%d)", f.Code) }

func (FaultResetAfterHeaders) describe() string { return "reset_after_headers" }

func (FaultNoHeaders) describe() string { return "no_headers" }

func (FaultNoRead) describe() string { return "no_read" }

func (f FaultEndless) describe() string { return "endless(" + f.Channel + ")" }

func (f FaultCutMidStream) describe() string {
	return fmt.Sprintf("cut_mid_stream(after=%d)", f.AfterEvents)
}

func (f FaultStall) describe() string {
	return fmt.Sprintf("stall(after=%d)", f.AfterEvents)
}

func (f FaultStatus) describe() string { return fmt.Sprintf("status(%d)", f.Code) }

func (f FaultErrorEvent) describe() string {
	return fmt.Sprintf("error_event(after=%d,type=%s)", f.AfterEvents, f.Type)
}

// normalizeFault fills defaults and checks f; it panics on a value no test
// can mean (a nil fault, a status outside 400–599).
func normalizeFault(f Fault) Fault {
	switch v := f.(type) {
	case nil:
		panic("fakeprovider: InjectFault(nil)")
	case FaultStatus:
		if v.Code == 0 {
			v.Code = 500
		}
		if v.Code < 400 || v.Code > 599 {
			panic(fmt.Sprintf("fakeprovider: FaultStatus.Code %d is not an error status (400-599)", v.Code))
		}
		return v
	case FaultCutMidStream:
		v.AfterEvents = max(v.AfterEvents, 0)
		return v
	case FaultStall:
		v.AfterEvents = max(v.AfterEvents, 0)
		return v
	case FaultErrorEvent:
		v.AfterEvents = max(v.AfterEvents, 0)
		return v
	case FaultRedirect:
		if v.Code == 0 {
			v.Code = 307
		}
		switch v.Code {
		case 301, 302, 303, 307, 308:
		default:
			panic(fmt.Sprintf("fakeprovider: FaultRedirect.Code %d is not a redirect status (301, 302, 303, 307, 308)", v.Code))
		}
		if v.To == "" {
			panic("fakeprovider: FaultRedirect.To is empty")
		}
		return v
	case FaultRefuse, FaultResetAfterHeaders, FaultNoHeaders, FaultNoRead, FaultWSDropHandshake, FaultWSCloseAfterFrame:
		return v
	case FaultWSRefuse:
		if v.Status == 0 {
			v.Status = http.StatusUpgradeRequired
		}
		if v.Status < 400 || v.Status > 599 {
			panic(fmt.Sprintf("fakeprovider: FaultWSRefuse.Status %d is not an error status (400-599)", v.Status))
		}
		return v
	case FaultEndless:
		if v.Channel == "" {
			v.Channel = "text"
		}
		if v.Channel != "text" && v.Channel != "reasoning" && v.Channel != "arguments" {
			panic(fmt.Sprintf("fakeprovider: FaultEndless.Channel %q is not text, reasoning or arguments", v.Channel))
		}
		if v.Piece <= 0 {
			v.Piece = 16 << 10
		}
		return v
	case *FaultRedirect, *FaultRefuse, *FaultResetAfterHeaders, *FaultNoHeaders, *FaultNoRead, *FaultEndless, *FaultCutMidStream, *FaultStall, *FaultStatus, *FaultErrorEvent:
		panic(fmt.Sprintf("fakeprovider: InjectFault takes fault values, not pointers (%T)", f))
	}
	panic(fmt.Sprintf("fakeprovider: unknown fault %T", f))
}

// writeRedirect plays a FaultRedirect.
func writeRedirect(w http.ResponseWriter, r *http.Request, f FaultRedirect, mode Mode, requestID string) {
	loc := strings.TrimRight(f.To, "/") + r.URL.RequestURI()
	setRequestID(w.Header(), mode, requestID)
	w.Header().Set("Location", loc)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(f.Code)
	_, _ = io.WriteString(w, `<html><body><a href="`+html.EscapeString(loc)+`">Moved</a></body></html>`)
}

// InjectFault queues f for the next request to a model endpoint (any of
// the three modes; GET /v1/models is never faulted, and neither is a
// request rejected with a 400 or 401). Faults are applied in the order
// injected, one per request. A faulted request does not consume its script
// turn or queued fixture (see SetScript), so the retry gets the same
// answer; a stream fault plays on the events of that answer.
//
// FaultRefuse is the exception: it acts when it reaches the head of the
// queue rather than on a request (see FaultRefuse). InjectFault panics on a
// nil fault, a pointer to a fault, or a FaultStatus code outside 400–599.
func (s *Server) InjectFault(f Fault) {
	f = normalizeFault(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.faults = append(s.faults, f)
	s.refuseAtHeadLocked()
}

// refuseAtHeadLocked plays the FaultRefuse values at the head of the queue.
func (s *Server) refuseAtHeadLocked() {
	for len(s.faults) > 0 {
		f, ok := s.faults[0].(FaultRefuse)
		if !ok {
			return
		}
		s.faults = s.faults[1:]
		if s.ln != nil {
			_ = s.ln.Close()
			s.ln = nil
			// Drops idle keep-alive connections too, so the client's next
			// request must dial, and is refused.
			s.srv.SetKeepAlivesEnabled(false)
		}
		if s.reopen != nil {
			s.reopen.Stop()
			s.reopen = nil
		}
		if f.For > 0 {
			s.reopen = time.AfterFunc(f.For, func() { _ = s.Reopen() })
		}
	}
}

// takeNoRead takes a FaultNoRead at the head of the fault queue, before
// the body is read, and records the request without its body.
func (s *Server) takeNoRead(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return false
	}
	f, ok := s.faults[0].(FaultNoRead)
	if !ok {
		return false
	}
	s.faults = s.faults[1:]
	s.refuseAtHeadLocked()
	rec := Request{Mode: modeOfPath(r.URL.Path), Method: r.Method, Path: r.URL.Path, Turn: -1, Fault: f.describe()}
	rec.Header, rec.HadKey, rec.KeySHA256 = redactHeader(r.Header)
	s.recordLocked(rec)
	return true
}

func writeFaultStatus(w http.ResponseWriter, mode Mode, f FaultStatus, requestID string) {
	h := w.Header()
	if f.RetryAfter != "" {
		h.Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMS != "" {
		h.Set("Retry-After-Ms", f.RetryAfterMS)
	}
	if f.Body == "" {
		statusError(mode, f.Code).write(w, mode, requestID)
		return
	}
	setRequestID(h, mode, requestID)
	if isJSON(f.Body) {
		h.Set("Content-Type", "application/json")
	} else {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(f.Code)
	_, _ = io.WriteString(w, f.Body)
}
