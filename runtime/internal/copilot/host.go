package copilot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/runtime/internal/credfile"
)

// Credential is a GitHub login usable for the Copilot session exchange.
// ID names the login (a fresh random id per login), so that a replaced
// login is told apart from the one a session was exchanged for. It
// formats, logs and marshals without the token (Token is a Secret).
type Credential struct {
	Token     Secret
	ID        string
	CreatedAt time.Time
}

// Host is the seam's side of the embedding application: it supplies the
// short-lived sessions and each model's Protocol; the Provider caches the
// one and validates the other, and contacts nothing but the session's
// origin. GitHub (over a Login such as FileHost) is the coding adapter's.
type Host interface {
	// NewSession returns a new short-lived session for the current login:
	// its bearer, its local refresh deadline and, optionally, the vetted
	// origin it is valid on (zero: the Provider's Endpoint). Errors:
	// ErrNotLoggedIn, ErrLoginReplaced, ErrInvalidStore for the login,
	// anything else (an *ExchangeError) for the exchange.
	NewSession(ctx context.Context) (Session, error)
	// Current returns nil while s is still for the current login, and an
	// error (ErrNotLoggedIn, ErrLoginReplaced) when the login was deleted
	// or replaced, whatever session is cached for it.
	Current(ctx context.Context, s Session) error
	// Models lists the models s may run, each with its Protocol and
	// limits; the Provider validates them and rejects any other protocol
	// than OpenAiChat and OpenAiResponses (Model.Unroutable).
	Models(ctx context.Context, s Session) ([]Model, error)
	// Headers are sent with every request beside the session's bearer
	// (the editor identity).
	Headers() (map[string]string, error)
}

// Login is what the coding adapter's host is built on: the device login,
// the durable store of the GitHub credential and the identity. FileHost is
// the coding adapter's; an embedder may give its own to GitHub.
type Login interface {
	// BeginDeviceLogin starts a device authorization.
	BeginDeviceLogin(ctx context.Context) (DeviceLogin, error)
	// PollDeviceLogin waits until l is authorized and returns the new
	// credential (not yet saved).
	PollDeviceLogin(ctx context.Context, l DeviceLogin) (Credential, error)
	// SaveCredential stores c as the current login, replacing any other.
	SaveCredential(ctx context.Context, c Credential) error
	// LoadCredential returns the current login; ErrNotLoggedIn when none.
	LoadCredential(ctx context.Context) (Credential, error)
	// Available returns nil when c is still the current login, and an
	// error (ErrNotLoggedIn, ErrLoginReplaced) when it was deleted or
	// replaced, whatever session is cached for it.
	Available(ctx context.Context, c Credential) error
	// Identity returns the OAuth client id and the editor identity.
	Identity() (Identity, error)
}

// Errors of Login.LoadCredential and Login.Available, and of Host.
var (
	ErrNotLoggedIn   = errors.New("copilot: not logged in to GitHub Copilot (log in with: octet --login copilot)")
	ErrLoginReplaced = errors.New("copilot: the GitHub Copilot login was replaced")
	ErrInvalidStore  = errors.New("copilot: invalid credential store")
)

// NewLoginID returns a fresh login id.
func NewLoginID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// FileHost is the coding adapter's Login: the device flow on github.com, the
// identity from ~/.octet/settings.json and the private store
// ~/.octet/credentials/copilot.json (0600 in a 0700 directory, replaced
// atomically under copilot.json.lock, the layout of the Codex credential):
//
//	{"schema_version": 1, "source": "device-login", "login_id": "<hex>",
//	 "created_at": "2026-01-02T03:04:05Z", "github_token": "<token>"}
type FileHost struct {
	Home       string
	HTTPClient *http.Client
	Now        func() time.Time
	Sleep      func(ctx context.Context, d time.Duration) error
}

const schemaVersion = 1

// record is copilot.json. It holds a secret: never formatted or logged.
type record struct {
	SchemaVersion int       `json:"schema_version"`
	Source        string    `json:"source"`
	LoginID       string    `json:"login_id"`
	CreatedAt     time.Time `json:"created_at"`
	GitHubToken   string    `json:"github_token"`
}

func (r record) Format(f fmt.State, _ rune) { fmt.Fprint(f, "copilot.record{[redacted]}") }

func (h *FileHost) paths() credfile.Paths { return credfile.For(h.Home, "copilot") }

func (h *FileHost) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Identity reads the "copilot" member of ~/.octet/settings.json.
func (h *FileHost) Identity() (Identity, error) { return LoadIdentity(h.Home) }

func (h *FileHost) flow() (*DeviceFlow, error) {
	id, err := h.Identity()
	if err != nil {
		return nil, err
	}
	return &DeviceFlow{Identity: id, HTTPClient: h.HTTPClient, Now: h.Now, Sleep: h.Sleep}, nil
}

// BeginDeviceLogin starts the device flow on github.com.
func (h *FileHost) BeginDeviceLogin(ctx context.Context) (DeviceLogin, error) {
	f, err := h.flow()
	if err != nil {
		return DeviceLogin{}, err
	}
	return f.Begin(ctx)
}

// PollDeviceLogin polls github.com until the login is authorized.
func (h *FileHost) PollDeviceLogin(ctx context.Context, l DeviceLogin) (Credential, error) {
	f, err := h.flow()
	if err != nil {
		return Credential{}, err
	}
	tok, err := f.Poll(ctx, l)
	if err != nil {
		return Credential{}, err
	}
	return Credential{Token: tok, ID: NewLoginID(), CreatedAt: h.now().UTC()}, nil
}

// SaveCredential writes copilot.json atomically under the lock.
func (h *FileHost) SaveCredential(ctx context.Context, c Credential) error {
	if c.Token.Empty() || !headerSafe(c.Token.Reveal()) || c.ID == "" || !textutil.IsCode(c.ID) {
		return errors.New("copilot: refusing to store an empty or malformed credential")
	}
	p := h.paths()
	if err := credfile.EnsureDir(p.Dir); err != nil {
		return fmt.Errorf("copilot: %w", err)
	}
	lf, err := credfile.Lock(ctx, p.Lock)
	if err != nil {
		return fmt.Errorf("copilot: %w", err)
	}
	defer lf.Close()
	created := c.CreatedAt
	if created.IsZero() {
		created = h.now().UTC()
	}
	data, err := json.Marshal(record{SchemaVersion: schemaVersion, Source: "device-login", LoginID: c.ID, CreatedAt: created, GitHubToken: c.Token.Reveal()}, jsontext.WithIndent("  "))
	if err != nil {
		return errors.New("copilot: encoding the credential failed")
	}
	if err := credfile.Write(p, append(data, '\n')); err != nil {
		return scrubErr("copilot: "+err.Error(), err, c.Token)
	}
	return nil
}

// LoadCredential reads copilot.json.
func (h *FileHost) LoadCredential(context.Context) (Credential, error) {
	p := h.paths()
	data, err := credfile.Read(p.File)
	if errors.Is(err, fs.ErrNotExist) {
		return Credential{}, ErrNotLoggedIn
	}
	if err != nil {
		return Credential{}, fmt.Errorf("%w: ~/.octet/credentials/copilot.json: %v", ErrInvalidStore, describe(err))
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return Credential{}, fmt.Errorf("%w: ~/.octet/credentials/copilot.json is not a JSON object of the expected shape", ErrInvalidStore)
	}
	switch {
	case r.SchemaVersion != schemaVersion:
		return Credential{}, fmt.Errorf("%w: ~/.octet/credentials/copilot.json has schema_version %d; this build reads %d", ErrInvalidStore, r.SchemaVersion, schemaVersion)
	case r.GitHubToken == "" || !headerSafe(r.GitHubToken):
		return Credential{}, fmt.Errorf("%w: ~/.octet/credentials/copilot.json has no usable github_token", ErrInvalidStore)
	case !textutil.IsCode(r.LoginID):
		return Credential{}, fmt.Errorf("%w: ~/.octet/credentials/copilot.json has no usable login_id", ErrInvalidStore)
	}
	return Credential{Token: NewSecret(r.GitHubToken), ID: r.LoginID, CreatedAt: r.CreatedAt}, nil
}

// Available re-reads copilot.json: c must still be the stored login.
func (h *FileHost) Available(ctx context.Context, c Credential) error {
	cur, err := h.LoadCredential(ctx)
	if err != nil {
		return err
	}
	if cur.ID != c.ID || !cur.Token.Equal(c.Token) {
		return ErrLoginReplaced
	}
	return nil
}

// Remove deletes copilot.json atomically under the lock (a local logout:
// the authorization is not revoked on GitHub). It reports whether a login
// was stored.
func (h *FileHost) Remove(ctx context.Context) (bool, error) {
	p := h.paths()
	if err := credfile.EnsureDir(p.Dir); err != nil {
		return false, fmt.Errorf("copilot: %w", err)
	}
	lf, err := credfile.Lock(ctx, p.Lock)
	if err != nil {
		return false, fmt.Errorf("copilot: %w", err)
	}
	defer lf.Close()
	ok, err := credfile.Remove(p)
	if err != nil {
		return ok, fmt.Errorf("copilot: %w", err)
	}
	return ok, nil
}

// Exists reports whether copilot.json exists, without reading it.
func (h *FileHost) Exists() bool {
	_, err := credfile.Read(h.paths().File)
	return err == nil
}

func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
