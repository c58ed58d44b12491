package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/runtime/internal/nofollow"
)

// Defaults of the Codex CLI's ChatGPT login (openai/codex, codex-rs login
// crate: REFRESH_TOKEN_URL and CLIENT_ID).
const (
	// DefaultTokenURL is the OAuth token endpoint a refresh is sent to.
	DefaultTokenURL = "https://auth.openai.com/oauth/token"
	// DefaultClientID is the Codex CLI's public OAuth client id; refresh
	// tokens are bound to it.
	DefaultClientID = "app_EMoamEEZ73f0CkXaXp7hrann"
)

// What a Codex route sends with a Credential (codex-rs: model provider
// defaults and the ChatGPT-Account-ID auth header).
const (
	// ChatGPTBaseURL is the Responses API root for an AccessToken
	// credential (ChatGPT login); requests go to ChatGPTBaseURL +
	// "/responses", with Authorization: Bearer AccessToken and, when
	// AccountID is set, AccountIDHeader: AccountID.
	ChatGPTBaseURL = "https://chatgpt.com/backend-api/codex"
	// AccountIDHeader carries Credential.AccountID to ChatGPTBaseURL.
	AccountIDHeader = "ChatGPT-Account-ID"
	// APIBaseURL is the Responses API root for an APIKey credential.
	APIBaseURL = "https://api.openai.com/v1"
)

// RefreshSkew is how long before its expiry an access token is refreshed.
const RefreshSkew = 5 * time.Minute

// RefreshTimeout bounds one refresh request, so a stalled token endpoint
// cannot hold the cross-process lock for long.
const RefreshTimeout = 30 * time.Second

// Store gives out the host's Codex credential; see the package
// documentation for the files and the lock. The zero value works (on the
// user's home directory, the real endpoint and the real clock). A Store is
// safe for concurrent use, and any number of Stores, in any number of
// processes, may share one home directory.
type Store struct {
	// Home is the directory holding .codex and .octet; empty means
	// os.UserHomeDir().
	Home string
	// Now is the clock for expiry checks and timestamps; nil means
	// time.Now.
	Now func() time.Time
	// HTTPClient sends refresh requests; nil means http.DefaultClient.
	// Redirects are never followed (a redirected refresh fails), whatever
	// the client's CheckRedirect says.
	HTTPClient *http.Client
	// TokenURL is the OAuth token endpoint; empty means DefaultTokenURL.
	TokenURL string
	// ClientID is the OAuth client id; empty means DefaultClientID.
	ClientID string
}

// Credential is a usable Codex credential: either an APIKey (an API-key
// login of the Codex CLI), or an AccessToken of a ChatGPT login with its
// AccountID (possibly empty) and ExpiresAt (zero when unknown). It formats,
// logs and marshals to JSON redacted: the secrets are only reachable
// through the fields.
type Credential struct {
	APIKey      string
	AccessToken string
	AccountID   string
	ExpiresAt   time.Time
}

// Bearer is the value for "Authorization: Bearer": the API key or the
// access token.
func (c Credential) Bearer() string {
	if c.APIKey != "" {
		return c.APIKey
	}
	return c.AccessToken
}

// String describes c without its secrets.
func (c Credential) String() string {
	var parts []string
	if c.APIKey != "" {
		parts = append(parts, "APIKey:"+redacted)
	}
	if c.AccessToken != "" {
		parts = append(parts, "AccessToken:"+redacted)
	}
	if c.AccountID != "" {
		parts = append(parts, "AccountID:"+strconv.Quote(c.AccountID))
	}
	if !c.ExpiresAt.IsZero() {
		parts = append(parts, "ExpiresAt:"+c.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return "codex.Credential{" + strings.Join(parts, ", ") + "}"
}

// GoString is String, so %#v redacts too.
func (c Credential) GoString() string { return c.String() }

// Format writes String for every verb (%q quotes it), so no verb prints the
// fields.
func (c Credential) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		io.WriteString(f, strconv.Quote(c.String()))
		return
	}
	io.WriteString(f, c.String())
}

// LogValue logs String.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON encodes String as a JSON string: a Credential never
// serializes its secrets.
func (c Credential) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// Credential returns a usable credential. Under the cross-process lock it
// reads codex.json, importing ~/.codex/auth.json first if codex.json does
// not exist (a *NoCredentialError when that gives nothing usable), and
// refreshes an access token that expires within RefreshSkew (a
// *RefreshError, with codex.json unchanged, when that fails). A problem
// with codex.json itself is ErrInvalidStore; waiting for the lock ends with
// ctx.
func (s *Store) Credential(ctx context.Context) (Credential, error) {
	return s.do(ctx, func(r record, now time.Time) bool {
		exp := r.expiry()
		return !exp.IsZero() && !now.Add(RefreshSkew).Before(exp)
	})
}

// Refresh refreshes the access token now, whatever its expiry, unless the
// stored token is no longer rejected's (another caller refreshed it
// meanwhile), and returns the current credential. A route calls it when the
// provider refused rejected's token (HTTP 401). An API key is returned as it
// is. Errors are those of Credential.
func (s *Store) Refresh(ctx context.Context, rejected Credential) (Credential, error) {
	return s.do(ctx, func(r record, _ time.Time) bool {
		return r.AccessToken == rejected.AccessToken
	})
}

// do runs the locked read-import-refresh-write sequence; needRefresh
// decides, on the current record, whether to refresh an access token.
func (s *Store) do(ctx context.Context, needRefresh func(record, time.Time) bool) (Credential, error) {
	home := s.Home
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Credential{}, fmt.Errorf("codex: finding the home directory: %w", err)
		}
		home = h
	}
	p := newPaths(home)
	if err := ensureDir(p.dir); err != nil {
		return Credential{}, err
	}
	lf, err := lock(ctx, p.lock)
	if err != nil {
		return Credential{}, err
	}
	defer lf.Close() // releases the flock

	now := s.now()
	r, err := readRecord(p.file)
	if errors.Is(err, fs.ErrNotExist) {
		r, err = importSource(p.source, now)
		if err != nil {
			return Credential{}, err
		}
		if err := writeRecord(p, r); err != nil {
			return Credential{}, err
		}
	} else if err != nil {
		return Credential{}, err
	}
	if r.APIKey != "" || !needRefresh(r, now) {
		return r.credential(), nil
	}
	n, err := s.refresh(ctx, r, now)
	if err != nil {
		return Credential{}, err
	}
	if err := writeRecord(p, n); err != nil {
		// The old refresh token may be spent by now; nothing better can be
		// done than to say so.
		return Credential{}, fmt.Errorf("codex: storing the refreshed tokens: %s", scrub(err.Error(), append(n.secrets(), r.secrets()...)...))
	}
	return n.credential(), nil
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) tokenURL() string {
	if s.TokenURL != "" {
		return s.TokenURL
	}
	return DefaultTokenURL
}

func (s *Store) clientID() string {
	if s.ClientID != "" {
		return s.ClientID
	}
	return DefaultClientID
}

// client is the configured client, copied with redirects disabled
// (nofollow): a redirect must not carry the refresh token to another URL.
func (s *Store) client() *http.Client { return nofollow.Client(s.HTTPClient) }
