package fakeprovider

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// answer writes the response and reports whether the whole answer was
// sent.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, mode Mode, p plan, body map[string]any, n int, requestID string) bool {
	switch f := p.fault.(type) {
	case FaultStatus:
		writeFaultStatus(w, mode, f, requestID)
		return false
	case FaultRedirect:
		writeRedirect(w, r, f, mode, requestID)
		return false
	case FaultNoHeaders:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return false
	case FaultEndless:
		s.endless(w, r, mode, f, body, n, requestID)
		return false
	case FaultResetAfterHeaders:
		streamHeader(w.Header(), mode, requestID)
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		if conn, _, err := rc.Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close with an RST
			}
			_ = conn.Close()
		}
		return false
	}

	status, header := http.StatusOK, http.Header{}
	var events [][]byte
	respID := fmt.Sprintf("resp_fake%d", n)
	switch {
	case p.fix != nil:
		status, events = p.fix.status, p.fix.events
		for k, v := range p.fix.header {
			header[k] = append([]string(nil), v...) // the fixture is shared
		}
	case p.turn >= 0 || p.summary:
		model := p.t.Model
		if model == "" {
			model, _ = body["model"].(string)
		}
		enc := encodeTurn(mode, &encodeParams{
			turn: &p.t, model: model, n: n, created: time.Now().Unix(),
			includeUsage: includeUsage(body), encrypted: wantsEncrypted(body),
		})
		events = enc.events
		if enc.respID != "" {
			respID = enc.respID
		}
		streamHeader(header, mode, requestID)
	case p.fault == nil:
		typ := "server_error"
		if mode == ModeAnthropic {
			typ = "api_error"
		}
		apiError{status: http.StatusInternalServerError, typ: typ, msg: p.missing}.write(w, mode, requestID)
		return false
	default:
		// A stream fault with no answer to play plays on an empty stream.
		header.Set("Content-Type", "text/event-stream; charset=utf-8")
		setRequestID(header, mode, requestID)
	}

	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	send := func(evs [][]byte) bool {
		for _, ev := range evs {
			if _, err := w.Write(ev); err != nil {
				return false
			}
			if err := rc.Flush(); err != nil {
				return false
			}
		}
		return true
	}
	// Faults never let the terminal event through.
	cut := func(after int) int { return min(after, max(len(events)-1, 0)) }

	switch f := p.fault.(type) {
	case FaultCutMidStream:
		send(events[:cut(f.AfterEvents)])
		if !f.Graceful {
			if conn, _, err := rc.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return false
	case FaultErrorEvent:
		k := cut(f.AfterEvents)
		if send(events[:k]) {
			send(errorEvents(mode, f, k, respID, requestID))
		}
		return false
	case FaultStall:
		k := cut(f.AfterEvents)
		if !send(events[:k]) {
			return false
		}
		var expired <-chan time.Time
		if f.For > 0 {
			t := time.NewTimer(f.For)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-r.Context().Done():
			return false
		case <-s.done:
			// The server is going away mid-stream: cut the body rather
			// than end it cleanly.
			if conn, _, err := rc.Hijack(); err == nil {
				_ = conn.Close()
			}
			return false
		case <-expired:
		}
		return send(events[k:])
	}
	return send(events)
}

// streamHeader sets the headers of a streamed answer: the event-stream
// type, no caching and the mode's request ID.
func streamHeader(h http.Header, mode Mode, requestID string) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	setRequestID(h, mode, requestID)
}
