package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBodyBytes bounds a request body (media included).
const maxBodyBytes = 128 << 20

// redacted replaces credential header values in Requests.
const redacted = "[REDACTED]"

// serveHTTP answers one request. It is not exported as an http.Handler:
// the faults act on the Server's own listener and connections.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	defer s.handlers.Done()

	n := int(s.seq.Add(1))
	requestID := fmt.Sprintf("req_fake%d", n)
	mode := modeOfPath(r.URL.Path)
	if mode == ModeResponses && isUpgrade(r) {
		s.serveWebSocket(w, r, requestID)
		return
	}
	if mode != "" && r.Method == http.MethodPost && s.takeNoRead(r) {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		// Cut the connection: the unread body must not be drained.
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	raw, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	rec := Request{Mode: mode, Method: r.Method, Path: r.URL.Path, Turn: -1}
	rec.Header, rec.HadKey, rec.KeySHA256 = redactHeader(r.Header)
	var body map[string]any
	decodeErr := json.Unmarshal(raw, &body)
	rec.Body, rec.RawBody = body, raw
	idx := s.record(rec)

	switch {
	case readErr != nil:
		invalidRequest("", "could not read the request body: "+readErr.Error()).write(w, mode, requestID)
		return
	case r.URL.Path == pathModels:
		if r.Method != http.MethodGet {
			methodNotAllowed(w, mode, requestID, r)
			return
		}
		s.serveModels(w, r, requestID)
		return
	case r.URL.Path == pathResponsesCompact:
		s.serveCompact(w, r, raw, body, n, idx, requestID)
		return
	case mode == "":
		apiError{status: http.StatusNotFound, typ: "invalid_request_error",
			msg: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}.write(w, mode, requestID)
		return
	case r.Method != http.MethodPost:
		methodNotAllowed(w, mode, requestID, r)
		return
	}
	if s.takeLoading(idx) {
		setRequestID(w.Header(), mode, requestID)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, LoadingBody)
		return
	}
	if s.apiKey != "" && !s.authorized(mode, r.Header) {
		statusError(mode, http.StatusUnauthorized).write(w, mode, requestID)
		return
	}
	if e := validate(mode, raw, body, decodeErr); e != nil {
		e.write(w, mode, requestID)
		return
	}
	if r.URL.Path == pathCodex {
		if _, ok := body["max_output_tokens"]; ok {
			writeCodexDetail(w, requestID, http.StatusBadRequest, "Unsupported parameter: max_output_tokens")
			return
		}
	}
	p := s.dispatch(mode, idx, raw)
	served := s.answer(w, r, mode, p, body, n, requestID)
	s.settle(p, served)
}

// writeCodexDetail answers as the ChatGPT Codex backend refuses a
// request: {"detail": msg}, not the platform API's error envelope. The
// message is the backend's own (reported in RayBytes/ChatMock#103 and
// kortix-ai/suna#5124 for max_output_tokens).
func writeCodexDetail(w http.ResponseWriter, requestID string, status int, msg string) {
	setRequestID(w.Header(), ModeResponses, requestID)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(encode(obj{"detail", msg}))
}

func methodNotAllowed(w http.ResponseWriter, mode Mode, requestID string, r *http.Request) {
	allow := http.MethodPost
	if r.URL.Path == pathModels {
		allow = http.MethodGet
	}
	w.Header().Set("Allow", allow)
	apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error",
		msg: fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path)}.write(w, mode, requestID)
}

// record appends r to the requests and returns its number, which reqAt
// takes to annotate it later.
func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordLocked(r)
}

func (s *Server) recordLocked(r Request) int {
	s.requests = append(s.requests, r)
	if s.keep > 0 && len(s.requests) >= 2*s.keep {
		// Drop all but the latest keep at once, so that appends stay
		// amortized O(1).
		n := len(s.requests) - s.keep
		copy(s.requests, s.requests[n:])
		clear(s.requests[s.keep:])
		s.requests = s.requests[:s.keep]
		s.dropped += n
	}
	return s.dropped + len(s.requests) - 1
}

// reqAt returns the request numbered n by record, or a throwaway when it is
// no longer kept (Options.KeepRequests). The caller holds s.mu.
func (s *Server) reqAt(n int) *Request {
	if n < s.dropped {
		return new(Request)
	}
	return &s.requests[n-s.dropped]
}

// redactHeader returns h with credential values replaced, whether it held
// a credential, and that credential's fingerprint.
func redactHeader(h http.Header) (http.Header, bool, string) {
	out := h.Clone()
	key := ""
	for _, name := range []string{"X-Api-Key", "Authorization", "Api-Key", "Proxy-Authorization"} {
		vals := out[name]
		if len(vals) == 0 {
			continue
		}
		if key == "" && name != "Proxy-Authorization" {
			v := strings.TrimSpace(vals[0])
			if name == "Authorization" {
				if scheme, token, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
					v = strings.TrimSpace(token)
				}
			}
			key = v
		}
		for i := range vals {
			vals[i] = redacted
		}
	}
	if key == "" {
		return out, false, ""
	}
	return out, true, KeyFingerprint(key)
}

// authorized checks the credential against Options.APIKey.
func (s *Server) authorized(mode Mode, h http.Header) bool {
	if mode == ModeAnthropic {
		return h.Get("X-Api-Key") == s.apiKey
	}
	return h.Get("Authorization") == "Bearer "+s.apiKey
}

// serveModels answers GET /v1/models with the script's model ids: in
// OpenAI's list shape, or Anthropic's when the request carries an
// anthropic-version header.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, requestID string) {
	s.mu.Lock()
	ids := s.script.modelIDs()
	s.mu.Unlock()
	data := arr{}
	var resp obj
	if r.Header.Get("Anthropic-Version") != "" {
		for _, id := range ids {
			data = append(data, obj{"type", "model", "id", id, "display_name", id, "created_at", "2025-01-01T00:00:00Z"})
		}
		first, last := any(nil), any(nil)
		if len(ids) > 0 {
			first, last = ids[0], ids[len(ids)-1]
		}
		resp = obj{"data", data, "has_more", false, "first_id", first, "last_id", last}
		setRequestID(w.Header(), ModeAnthropic, requestID)
	} else {
		for _, id := range ids {
			data = append(data, obj{"id", id, "object", "model", "created", 0, "owned_by", "fakeprovider"})
		}
		resp = obj{"object", "list", "data", data}
		setRequestID(w.Header(), ModeChat, requestID)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(encode(resp))
}
