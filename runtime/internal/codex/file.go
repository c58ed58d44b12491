package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"octet.dev/host/runtime/internal/credfile"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// maxFileBytes bounds a token endpoint answer. auth.json and codex.json
// are credential files, bounded by credfile.MaxFileBytes (64 KiB).
const maxFileBytes = 1 << 20

// schemaVersion is the version of codex.json this build writes and reads.
const schemaVersion = 1

// sourceImport is codex.json's source for a copy of the Codex CLI's login.
const sourceImport = "codex-cli-import"

// record is codex.json. It holds secrets: it is never formatted or logged.
type record struct {
	SchemaVersion int       `json:"schema_version"`
	Source        string    `json:"source"`
	ImportedAt    time.Time `json:"imported_at"`
	APIKey        string    `json:"api_key,omitempty"`
	AccessToken   string    `json:"access_token,omitempty"`
	RefreshToken  string    `json:"refresh_token,omitempty"`
	IDToken       string    `json:"id_token,omitempty"`
	AccountID     string    `json:"account_id,omitempty"`
	ExpiresAt     time.Time `json:"expires_at,omitzero"`
	RefreshedAt   time.Time `json:"refreshed_at,omitzero"`
}

// Format keeps a record's secrets out of any accidental fmt output.
func (r record) Format(f fmt.State, _ rune) { io.WriteString(f, "codex.record{[redacted]}") }

// secrets lists the record's secrets, for scrub.
func (r record) secrets() []string {
	return []string{r.APIKey, r.AccessToken, r.RefreshToken, r.IDToken}
}

// expiry is when the access token expires: its JWT exp claim, else the
// stored expires_at; zero when neither is known (and for an API key).
func (r record) expiry() time.Time {
	if r.AccessToken == "" {
		return time.Time{}
	}
	if exp, ok := jwtExpiry(r.AccessToken); ok {
		return exp
	}
	return r.ExpiresAt
}

func (r record) credential() Credential {
	if r.APIKey != "" {
		return Credential{APIKey: r.APIKey}
	}
	return Credential{AccessToken: r.AccessToken, AccountID: r.AccountID, ExpiresAt: r.expiry()}
}

// validate checks a record read from codex.json; the reason names fields,
// never values.
func (r record) validate() error {
	switch {
	case r.SchemaVersion > schemaVersion:
		return fmt.Errorf("schema_version %d is newer than this build reads (%d)", r.SchemaVersion, schemaVersion)
	case r.SchemaVersion != schemaVersion:
		return errors.New("schema_version is missing or invalid")
	case r.Source == "":
		return errors.New("source is missing")
	case r.ImportedAt.IsZero():
		return errors.New("imported_at is missing")
	}
	hasTokens := r.AccessToken != "" || r.RefreshToken != ""
	switch {
	case r.APIKey != "" && hasTokens:
		return errors.New("both api_key and tokens are present")
	case r.APIKey != "":
		if !headerSafe(r.APIKey) {
			return errors.New("api_key contains characters not allowed in an HTTP header")
		}
	case r.AccessToken == "" || r.RefreshToken == "":
		return errors.New("neither api_key nor both access_token and refresh_token are present")
	case !headerSafe(r.AccessToken):
		return errors.New("access_token contains characters not allowed in an HTTP header")
	case !headerSafe(r.RefreshToken):
		return errors.New("refresh_token contains characters not allowed in an HTTP header")
	case r.AccountID != "" && !headerSafe(r.AccountID):
		return errors.New("account_id contains characters not allowed in an HTTP header")
	}
	return nil
}

// paths are the files of one home directory.
type paths struct {
	source string // ~/.codex/auth.json
	dir    string // ~/.octet/credentials
	file   string // codex.json
	tmp    string // codex.json.tmp
	lock   string // codex.json.lock
}

func newPaths(home string) paths {
	dir := filepath.Join(home, ".octet", "credentials")
	file := filepath.Join(dir, "codex.json")
	return paths{
		source: filepath.Join(home, ".codex", "auth.json"),
		dir:    dir,
		file:   file,
		tmp:    file + ".tmp",
		lock:   file + ".lock",
	}
}

// ensureDir creates dir (and parents) with mode 0700 and narrows an existing
// dir to 0700: it holds credentials.
func ensureDir(dir string) error {
	if err := credfile.EnsureDir(dir); err != nil {
		return fmt.Errorf("codex: %w", err)
	}
	return nil
}

// lock opens (creating it 0600) and exclusively flocks the lock file,
// polling until it succeeds or ctx ends (credfile.Lock). Closing the
// returned file releases the lock.
func lock(ctx context.Context, path string) (*os.File, error) {
	f, err := credfile.Lock(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("codex: %w", err)
	}
	return f, nil
}

// readNoFollow reads a regular file of at most 64 KiB without following a
// symbolic link in its last component, read-only and non-blocking
// (credfile.Read). A missing file is an error matching fs.ErrNotExist.
func readNoFollow(path string) ([]byte, error) { return credfile.Read(path) }

// readRecord reads and validates codex.json. A missing file matches
// fs.ErrNotExist; anything else wrong is ErrInvalidStore.
func readRecord(path string) (record, error) {
	data, err := readNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return record{}, err
	}
	if err != nil {
		return record{}, fmt.Errorf("%w: %s: %v", ErrInvalidStore, path, describe(err))
	}
	var r record
	if !jsontext.Value(data).IsValid() {
		return record{}, fmt.Errorf("%w: %s is not valid JSON", ErrInvalidStore, path)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return record{}, fmt.Errorf("%w: %s is not a JSON object of the expected shape", ErrInvalidStore, path)
	}
	if err := r.validate(); err != nil {
		return record{}, fmt.Errorf("%w: %s: %v", ErrInvalidStore, path, err)
	}
	return r, nil
}

// describe turns a read error into text without the path (which the caller
// adds).
func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// writeRecord replaces codex.json atomically (credfile.Write): the record
// goes to codex.json.tmp (mode 0600), is fsynced, renamed over codex.json,
// and the directory is fsynced. The caller holds the lock, so the fixed
// temporary name is not contended; a crash leaves at most a stale
// temporary file, overwritten next time.
func writeRecord(p paths, r record) error {
	data, err := json.Marshal(r, jsontext.WithIndent("  "))
	if err != nil {
		return fmt.Errorf("codex: encoding the credential: %w", err)
	}
	if len(data)+1 > credfile.MaxFileBytes {
		// It could not be read back.
		return fmt.Errorf("codex: the credential is larger than %d bytes, the limit of a credential file", credfile.MaxFileBytes)
	}
	if err := credfile.Write(credfile.Paths{Dir: p.dir, File: p.file, Tmp: p.tmp, Lock: p.lock}, append(data, '\n')); err != nil {
		return fmt.Errorf("codex: %w", err)
	}
	return nil
}
