package fakeprovider

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

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
	// KeepRequests bounds what Requests reports to the latest that many
	// requests, so that a server answering for hours (the command's
	// -fixture mode) does not keep every body it was sent; 0 keeps every
	// request, as tests that read them all need.
	KeepRequests int
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
	// RawBody is the body exactly as received (what was read of it when
	// reading failed; nil when it was never read, FaultNoRead). Treat it
	// as read-only.
	RawBody []byte
	// Turn is the index of the script turn the request was answered with,
	// -1 when none.
	Turn int
	// Fixture is the name of the fixture the request was answered with.
	Fixture string
	// Fault describes the fault the request got, e.g. "status(429)",
	// "loading" for an answer of the model-loading phase (Script.Loading),
	// or "overflow" for a request over Script.ContextWindow.
	Fault string
	// Summary reports a summarizer request (its body holds
	// SummarizerMarker), answered from Script.Summaries.
	Summary bool
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
	requests []Request // the kept requests, the oldest first (record)
	dropped  int       // requests no longer kept, before requests[0]
	keep     int       // Options.KeepRequests
	sockets  int       // WebSocket connections opened
	// summaries is how many of Script.Summaries were served.
	summaries int
	// compactions counts the compaction endpoint's requests.
	compactions int
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
		keep:   max(opts.KeepRequests, 0),
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

// Requests returns every request received so far, in arrival order (the
// latest Options.KeepRequests of them when that is set).
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
