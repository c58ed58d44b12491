package copilot

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSkew is how long before the local refresh deadline a session is
// exchanged again.
const DefaultSkew = 60 * time.Second

// maxRefreshIn bounds refresh_in (GitHub answers about 1500 s).
const maxRefreshIn = 24 * time.Hour

// Session is a short-lived Copilot API session. RefreshAt is local: the
// time the exchange was sent plus refresh_in, so a skewed clock cannot make
// a fresh session look expired (or an expired one fresh). Token is the
// bearer of the Copilot API; API is the allowlisted inference origin.
type Session struct {
	Token     Secret
	API       Endpoint
	FetchedAt time.Time
	RefreshAt time.Time
	ExpiresAt time.Time // the server's expires_at, informational
	login     Credential
}

// Reasons of an ExchangeError.
const (
	ReasonCredentialInvalid = "credential_invalid" // 401: the GitHub login is bad; log in again
	ReasonNotEntitled       = "not_entitled"       // 403 with a notification id
	ReasonRateLimited       = "rate_limited"       // GitHub's API rate limit
	ReasonProtocolError     = "protocol_error"     // a malformed answer
	ReasonOriginNotAllowed  = "origin_not_allowed" // endpoints.api off the allowlist
	ReasonHTTPStatus        = "http_status"        // any other non-2xx status
	ReasonUnreachable       = "unreachable"        // no answer
)

// ExchangeError is a failed session exchange. It carries the status and
// codes, never GitHub's message or body.
type ExchangeError struct {
	Status         int
	Reason         string
	NotificationID string        // error_details.notification_id of a 403
	RetryAfter     time.Duration // of a rate limit, when given
	msg            string
	err            error
}

func (e *ExchangeError) Error() string { return "copilot: the session exchange failed: " + e.msg }
func (e *ExchangeError) Unwrap() error { return e.err }

// tokenEnvelope is the exchange answer's part this package reads; unknown
// members are ignored.
type tokenEnvelope struct {
	Token     *string  `json:"token"`
	ExpiresAt *float64 `json:"expires_at"`
	RefreshIn *float64 `json:"refresh_in"`
	Endpoints *struct {
		API *string `json:"api"`
	} `json:"endpoints"`
}

type errorEnvelope struct {
	Message      string `json:"message"`
	ErrorDetails *struct {
		NotificationID string `json:"notification_id"`
	} `json:"error_details"`
}

// Provider is the generic Copilot seam: it takes short-lived sessions and
// each model's Protocol from its Host, caches the session until its local
// refresh deadline minus Skew, keeps the model table, and sends inference
// through Client to Endpoint. It contacts no GitHub endpoint itself: the
// exchange and the inventory are the Host's (GitHub is the coding
// adapter's). A Provider is safe for concurrent use; configure it before
// first use.
type Provider struct {
	// Endpoint is the inference origin root the host gives (required): a
	// session's own API origin, when the host sets one, replaces it.
	Endpoint Endpoint
	Host     Host
	// HTTPClient sends every request; nil: http.DefaultClient. Redirects
	// are never followed.
	HTTPClient *http.Client
	Now        func() time.Time
	// Skew is how long before RefreshAt a session is replaced; 0 means
	// DefaultSkew.
	Skew time.Duration

	mu     sync.Mutex // the invalidation lock: sess and flight change under it
	sess   *Session
	flight *flight

	exchanges atomic.Int64
	regMu     sync.Mutex // one registration at a time
	table     atomic.Pointer[Table]
}

type flight struct {
	done chan struct{}
	s    Session
	err  error
}

func (p *Provider) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Provider) skew() time.Duration {
	if p.Skew > 0 {
		return p.Skew
	}
	return DefaultSkew
}

// Exchanges counts the sessions asked of the Host (for diagnostics).
func (p *Provider) Exchanges() int64 { return p.exchanges.Load() }

// Session returns a usable session: the cached one while its login is
// still the Host's current one and the local deadline minus the skew has
// not passed, else a new exchange. Concurrent callers share one exchange.
func (p *Provider) Session(ctx context.Context) (Session, error) {
	if p.Host == nil {
		return Session{}, ErrNotLoggedIn
	}
	for {
		p.mu.Lock()
		s := p.sess
		p.mu.Unlock()
		if s != nil {
			if err := p.Host.Current(ctx, *s); err != nil {
				p.drop(s)
				if !errors.Is(err, ErrLoginReplaced) {
					return Session{}, err
				}
			} else if p.now().Before(s.RefreshAt.Add(-p.skew())) {
				return *s, nil
			}
		}
		p.mu.Lock()
		if p.sess != nil && p.sess != s {
			p.mu.Unlock()
			continue // another caller replaced it meanwhile: check that one
		}
		f := p.flight
		leader := f == nil
		if leader {
			f = &flight{done: make(chan struct{})}
			p.flight = f
			p.sess = nil // the old session is discarded whatever happens next
		}
		p.mu.Unlock()
		if leader {
			ns, err := p.newSession(ctx)
			p.mu.Lock()
			p.flight = nil
			if err == nil {
				p.sess = &ns
			}
			p.mu.Unlock()
			f.s, f.err = ns, err
			close(f.done)
			return ns, err
		}
		select {
		case <-ctx.Done():
			return Session{}, ctx.Err()
		case <-f.done:
		}
		if f.err != nil && ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
			continue // the leader gave up; this caller still wants a session
		}
		return f.s, f.err
	}
}

// drop discards s if it is still the cached session.
func (p *Provider) drop(s *Session) {
	p.mu.Lock()
	if p.sess == s {
		p.sess = nil
	}
	p.mu.Unlock()
}

// Invalidate discards the cached session if it is s (the Copilot API
// refused s's token); the next Session exchanges again.
func (p *Provider) Invalidate(s Session) {
	p.mu.Lock()
	if p.sess != nil && p.sess.Token.Equal(s.Token) {
		p.sess = nil
	}
	p.mu.Unlock()
}

// Exchange discards the cached session and exchanges a new one now.
func (p *Provider) Exchange(ctx context.Context) (Session, error) {
	p.mu.Lock()
	p.sess = nil
	p.mu.Unlock()
	return p.Session(ctx)
}

// Logout drops the cached session and the model table (after the Host's
// login was removed).
func (p *Provider) Logout() {
	p.mu.Lock()
	p.sess = nil
	p.mu.Unlock()
	p.table.Store(nil)
}

// newSession asks the Host for a new session and checks it.
func (p *Provider) newSession(ctx context.Context) (Session, error) {
	p.exchanges.Add(1)
	s, err := p.Host.NewSession(ctx)
	if err != nil {
		return Session{}, err
	}
	if s.API.IsZero() {
		s.API = p.Endpoint
	}
	switch {
	case s.API.IsZero():
		return Session{}, errors.New("copilot: the provider has no endpoint")
	case s.Token.Empty() || !headerSafe(s.Token.Reveal()):
		return Session{}, errors.New("copilot: the host gave a session with no usable token")
	case s.RefreshAt.IsZero():
		return Session{}, errors.New("copilot: the host gave a session with no refresh deadline")
	}
	return s, nil
}

// retryAfter reads Retry-After (seconds or an HTTP date), else GitHub's
// x-ratelimit-reset (Unix seconds); zero when neither is usable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	if v := h.Get("X-Ratelimit-Reset"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			if d := time.Unix(n, 0).Sub(now); d > 0 {
				return d
			}
		}
	}
	return 0
}
