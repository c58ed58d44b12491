package fakeprovider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is a provider wire format, named as CONTRACT §8's provider_mode.
type Mode string

// The three wire modes.
const (
	// ModeChat is OpenAI Chat Completions: POST /v1/chat/completions.
	ModeChat Mode = "openai-compatible"
	// ModeResponses is OpenAI Responses: POST /v1/responses.
	ModeResponses Mode = "openai-responses"
	// ModeAnthropic is Anthropic Messages: POST /v1/messages.
	ModeAnthropic Mode = "anthropic-messages"
)

var allModes = []Mode{ModeChat, ModeResponses, ModeAnthropic}

// Modes returns the three wire modes.
func Modes() []Mode { return append([]Mode(nil), allModes...) }

// ParseMode accepts a provider_mode name ("openai-compatible",
// "openai-responses", "anthropic-messages") or the name of a fixture
// folder ("openai-chat", "openai-responses", "anthropic").
func ParseMode(s string) (Mode, error) {
	for _, m := range allModes {
		if s == string(m) || s == m.fixtureDir() {
			return m, nil
		}
	}
	return "", fmt.Errorf("fakeprovider: unknown mode %q", s)
}

// fixtureDir is the folder of mode's fixtures under fixtures/.
func (m Mode) fixtureDir() string {
	switch m {
	case ModeChat:
		return "openai-chat"
	case ModeResponses:
		return "openai-responses"
	case ModeAnthropic:
		return "anthropic"
	}
	return ""
}

// Endpoint paths.
const (
	pathChat      = "/v1/chat/completions"
	pathResponses = "/v1/responses"
	pathMessages  = "/v1/messages"
	pathModels    = "/v1/models"
	// pathCodex is the ChatGPT Codex backend's Responses endpoint
	// (chatgpt.com/backend-api/codex/responses), where a Codex ChatGPT
	// login goes.
	pathCodex = "/backend-api/codex/responses"
)

func modeOfPath(p string) Mode {
	switch p {
	case pathChat:
		return ModeChat
	case pathResponses, pathCodex:
		return ModeResponses
	case pathMessages:
		return ModeAnthropic
	}
	return ""
}

// maxBodyBytes bounds a request body (media included).
const maxBodyBytes = 128 << 20

// redacted replaces credential header values in Requests.
const redacted = "[REDACTED]"

// ErrClosed is returned by methods called after Close.
var ErrClosed = errors.New("fakeprovider: server closed")

// Options configures a Server.
type Options struct {
	// Addr is the loopback address to listen on, "host:port"; empty means
	// "127.0.0.1:0" (a free port). The host must be a loopback IP (or
	// "localhost", which means 127.0.0.1): the fake never listens on
	// another address.
	Addr string
	// Script is the initial script (see SetScript).
	Script Script
	// APIKey, when set, is required: "Authorization: Bearer <key>" on the
	// OpenAI endpoints and "x-api-key: <key>" on Anthropic's; a request
	// without it gets a 401 in the provider's envelope. Empty accepts any
	// request.
	APIKey string
	// ErrorLog receives net/http's connection errors; nil discards them.
	ErrorLog *log.Logger
}

// Request is one request the server received, as Requests reports it.
type Request struct {
	// Mode is the endpoint's wire mode; empty for /v1/models and unknown
	// paths.
	Mode   Mode
	Method string
	Path   string
	// Header is the request's header with the values of Authorization,
	// Proxy-Authorization, X-Api-Key and Api-Key replaced by "[REDACTED]".
	Header http.Header
	// HadKey reports whether the request carried a credential (a Bearer
	// token, an x-api-key or an api-key header).
	HadKey bool
	// KeySHA256 is KeyFingerprint of that credential, empty without one.
	KeySHA256 string
	// Body is the decoded JSON body; nil when the body was not a JSON
	// object. Treat it as read-only.
	Body map[string]any
	// Turn is the index of the script turn the request was answered with,
	// -1 when none.
	Turn int
	// Fixture is the name of the fixture the request was answered with.
	Fixture string
	// Fault describes the fault the request got, e.g. "status(429)", or
	// "loading" for an answer of the model-loading phase (Script.Loading).
	Fault string
	// WebSocket is the number (from 1) of the WebSocket connection a
	// handshake (Method GET) opened or a message (Method MethodMessage)
	// came on; 0 for HTTP requests.
	WebSocket int
}

// Model returns the "model" member of the body, or "".
func (r Request) Model() string {
	m, _ := r.Body["model"].(string)
	return m
}

// KeyFingerprint returns the first 12 hex digits of the SHA-256 of key:
// the form in which Requests reports credentials.
func KeyFingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:12]
}

// Server is a loopback fake of the three provider APIs. All its methods
// are safe for concurrent use.
type Server struct {
	srv    *http.Server
	addr   string // the bound host:port, reused by Reopen
	root   string // "http://host:port"
	apiKey string
	done   chan struct{} // closed by Close; ends stalls

	serving  sync.WaitGroup // Serve goroutines
	handlers sync.WaitGroup // running handlers
	seq      atomic.Int64   // request numbers, for unique ids

	mu       sync.Mutex
	closed   bool
	ln       net.Listener // nil while refusing
	reopen   *time.Timer  // FaultRefuse.For
	script   Script
	gen      int   // bumped by SetScript, so a stale turn is not given back
	pending  []int // indexes of the turns not yet served, in order
	loading  int   // requests still to answer with LoadingBody (Script.Loading)
	faults   []Fault
	queued   map[Mode][]*fixture
	sticky   map[Mode]*fixture
	requests []Request
	sockets  int // WebSocket connections opened
}

// New starts a Server on opts.Addr (by default 127.0.0.1 on a free port).
func New(opts Options) (*Server, error) {
	addr, err := loopbackAddr(opts.Addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: %w", err)
	}
	s := &Server{
		addr:   ln.Addr().String(),
		root:   "http://" + ln.Addr().String(),
		apiKey: opts.APIKey,
		done:   make(chan struct{}),
		ln:     ln,
		queued: map[Mode][]*fixture{},
		sticky: map[Mode]*fixture{},
	}
	errLog := opts.ErrorLog
	if errLog == nil {
		errLog = log.New(io.Discard, "", 0)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 30 * time.Second, ErrorLog: errLog}
	s.setScriptLocked(opts.Script)
	s.startServe(ln)
	return s, nil
}

// loopbackAddr checks that addr names a loopback host.
func loopbackAddr(addr string) (string, error) {
	if addr == "" {
		return "127.0.0.1:0", nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("fakeprovider: address %q: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("fakeprovider: address %q is not a loopback address (127.0.0.0/8 or ::1)", addr)
	}
	return net.JoinHostPort(ip.String(), port), nil
}

func (s *Server) startServe(ln net.Listener) {
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		_ = s.srv.Serve(ln) // ends when ln is closed
	}()
}

// URL returns the API root, e.g. "http://127.0.0.1:40123".
func (s *Server) URL() string { return s.root }

// BaseURL returns the base_url a client uses for mode (CONTRACT §8): the
// root plus "/v1" for the OpenAI modes, which append "/chat/completions" or
// "/responses", and the root itself for Anthropic, which appends
// "/v1/messages".
func (s *Server) BaseURL(mode Mode) string {
	if mode == ModeAnthropic {
		return s.root
	}
	return s.root + "/v1"
}

// CodexBaseURL returns the base URL of the fake's ChatGPT Codex backend:
// the root plus "/backend-api/codex", to which a client appends
// "/responses". It speaks ModeResponses, and rejects what the real backend
// rejects (see the package documentation).
func (s *Server) CodexBaseURL() string { return s.root + "/backend-api/codex" }

// Close stops the server: it closes the listener and every connection,
// ends stalls, and waits for its goroutines. It may be called more than
// once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	if s.reopen != nil {
		s.reopen.Stop()
	}
	s.mu.Unlock()
	err := s.srv.Close()
	s.serving.Wait()
	s.handlers.Wait()
	return err
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		out[i] = r
	}
	return out
}

// SetScript replaces the script. Its turns answer the following requests
// in order, whatever their mode. A request without a fault consumes its
// turn when it is dispatched (even if its client then goes away); a
// request that gets a fault consumes none, so the retry gets the same
// turn — except a FaultStall that resumes after its For and sends the turn
// whole, which consumes it then. A request that finds no turn left gets a
// 500 with an error saying so.
func (s *Server) SetScript(sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setScriptLocked(sc)
}

func (s *Server) setScriptLocked(sc Script) {
	sc.Models = append([]string(nil), sc.Models...)
	sc.Turns = append([]Turn(nil), sc.Turns...)
	s.script = sc
	s.loading = max(sc.Loading, 0)
	s.gen++
	s.pending = make([]int, len(sc.Turns))
	for i := range s.pending {
		s.pending[i] = i
	}
}

// LoadingLeft returns how many requests the model-loading phase
// (Script.Loading) will still answer with LoadingBody.
func (s *Server) LoadingLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loading
}

// takeLoading consumes one loading answer for the request at idx and
// reports whether there was one.
func (s *Server) takeLoading(idx int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading == 0 {
		return false
	}
	s.loading--
	s.requests[idx].Fault = "loading"
	return true
}

// TurnsLeft returns how many script turns have not been served yet.
func (s *Server) TurnsLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// ServeFixture queues the named recorded fixture (see Fixtures) for the
// next request to mode's endpoint; several calls queue several answers. A
// queued fixture comes before a SetFixture one and before the script, and
// is consumed like a turn (see SetScript): a faulted request leaves it
// queued for the retry.
func (s *Server) ServeFixture(mode Mode, name string) error {
	f, err := loadFixture(mode, name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued[mode] = append(s.queued[mode], f)
	return nil
}

// SetFixture makes the named fixture the answer to every request to mode's
// endpoint that finds no queued fixture, instead of the script. An empty
// name goes back to the script.
func (s *Server) SetFixture(mode Mode, name string) error {
	var f *fixture
	if name != "" {
		var err error
		if f, err = loadFixture(mode, name); err != nil {
			return err
		}
	} else if _, ok := fixtureIndex[mode]; !ok {
		return fmt.Errorf("fakeprovider: unknown mode %q", mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sticky[mode] = f
	return nil
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

// Reopen ends a FaultRefuse: the server listens again on the same port.
// It does nothing when the server is not refusing.
func (s *Server) Reopen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.reopen != nil {
		s.reopen.Stop()
		s.reopen = nil
	}
	if s.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("fakeprovider: listening again on %s: %w", s.addr, err)
	}
	s.ln = ln
	s.srv.SetKeepAlivesEnabled(true)
	s.startServe(ln)
	return nil
}

// Refusing reports whether the server is refusing connections (a
// FaultRefuse is in effect).
func (s *Server) Refusing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ln == nil && !s.closed
}

// enter registers a running handler; it fails once Close has begun.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

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
	rec.Body = body
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
	p := s.dispatch(mode, idx)
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
	s.requests = append(s.requests, rec)
	return true
}

func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	return len(s.requests) - 1
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

// validate checks the basics of a model request: a JSON object with a
// model, stream true, and the members each API requires.
func validate(mode Mode, raw []byte, body map[string]any, decodeErr error) *apiError {
	fail := func(param, msg string) *apiError {
		e := invalidRequest(param, msg)
		return &e
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return fail("", "The request body is empty; expected a JSON object.")
	}
	if decodeErr != nil || body == nil {
		return fail("", "We could not parse the JSON body of your request: expected a JSON object.")
	}
	if m, ok := body["model"].(string); !ok || m == "" {
		return fail("model", "model: a non-empty string is required.")
	}
	if st, _ := body["stream"].(bool); !st {
		return fail("stream", `stream: this fake serves streaming requests only; set "stream": true.`)
	}
	switch mode {
	case ModeChat:
		if _, ok := body["messages"].([]any); !ok {
			return fail("messages", "messages: an array is required.")
		}
	case ModeAnthropic:
		if _, ok := body["messages"].([]any); !ok {
			return fail("messages", "messages: Field required")
		}
		if mt, ok := body["max_tokens"].(float64); !ok || mt < 1 {
			return fail("max_tokens", "max_tokens: Field required (a positive integer)")
		}
	}
	return nil
}

// plan is what dispatch chose for one request.
type plan struct {
	fault   Fault
	gen     int
	turn    int // -1: none
	t       Turn
	fix     *fixture
	queued  bool   // fix is the head of the mode's queue
	peeked  bool   // the source was looked at, not taken (a faulted request)
	missing string // why there is nothing to answer with
}

// dispatch takes the request's fault and answer source, in that order:
// the next fault; then a queued fixture of mode, the SetFixture one, or
// the next turn. A request without a fault takes its source off the queue
// there and then; a request with a stream fault only looks at it, so the
// retry gets the same answer however the two requests race; FaultStatus
// FaultResetAfterHeaders and FaultNoHeaders need no source at all.
func (s *Server) dispatch(mode Mode, idx int) plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := plan{gen: s.gen, turn: -1}
	if len(s.faults) > 0 {
		p.fault = s.faults[0]
		s.faults = s.faults[1:]
		s.refuseAtHeadLocked()
		s.requests[idx].Fault = p.fault.describe()
	}
	switch p.fault.(type) {
	case FaultStatus, FaultResetAfterHeaders, FaultNoHeaders, FaultRedirect, FaultEndless:
		return p
	}
	p.peeked = p.fault != nil
	switch {
	case len(s.queued[mode]) > 0:
		p.fix, p.queued = s.queued[mode][0], true
		if !p.peeked {
			s.queued[mode] = s.queued[mode][1:]
		}
	case s.sticky[mode] != nil:
		p.fix = s.sticky[mode]
	case len(s.pending) > 0:
		p.turn = s.pending[0]
		p.t = s.script.Turns[p.turn]
		if !p.peeked {
			s.pending = s.pending[1:]
		}
	case len(s.script.Turns) == 0:
		p.missing = fmt.Sprintf("fakeprovider: no script turn and no fixture for %s: call SetScript or ServeFixture", mode)
	default:
		p.missing = fmt.Sprintf("fakeprovider: the script is exhausted: all %d turns were served, and this request asks for one more", len(s.script.Turns))
	}
	if p.fix != nil {
		s.requests[idx].Fixture = p.fix.name
	}
	s.requests[idx].Turn = p.turn
	return p
}

// settle consumes a peeked source that was served whole after all (a
// FaultStall that ran out of time), if it is still next in its queue.
func (s *Server) settle(p plan, served bool) {
	if !served || !p.peeked {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.turn >= 0 && p.gen == s.gen && len(s.pending) > 0 && s.pending[0] == p.turn {
		s.pending = s.pending[1:]
	}
	if p.queued {
		if q := s.queued[p.fix.mode]; len(q) > 0 && q[0] == p.fix {
			s.queued[p.fix.mode] = q[1:]
		}
	}
}

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
		h := w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		setRequestID(h, mode, requestID)
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
	case p.turn >= 0:
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
		header.Set("Content-Type", "text/event-stream; charset=utf-8")
		header.Set("Cache-Control", "no-cache")
		setRequestID(header, mode, requestID)
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

// includeUsage reports stream_options.include_usage.
func includeUsage(body map[string]any) bool {
	so, _ := body["stream_options"].(map[string]any)
	v, _ := so["include_usage"].(bool)
	return v
}

// wantsEncrypted reports whether include names reasoning.encrypted_content.
func wantsEncrypted(body map[string]any) bool {
	inc, _ := body["include"].([]any)
	for _, v := range inc {
		if v == "reasoning.encrypted_content" {
			return true
		}
	}
	return false
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
