package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/internal/sysfile"
)

// maxFileBytes bounds what is read of auth.json, codex.json and a token
// endpoint answer.
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("codex: creating the credentials directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("codex: credentials directory: %w", err)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("codex: narrowing the credentials directory to 0700: %w", err)
		}
	}
	return nil
}

// lockPoll bounds the sleeps between two attempts to take the lock.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 20 * time.Millisecond
)

// lock opens (creating it 0600) and exclusively flocks the lock file,
// polling with LOCK_NB until it succeeds or ctx ends. flock locks belong to
// the open file description, so two goroutines of one process exclude each
// other as two processes do. Closing the returned file releases the lock.
func lock(ctx context.Context, path string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("codex: waiting for the credential lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("codex: opening the credential lock: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm() != 0o600 {
		_ = f.Chmod(0o600)
	}
	delay := lockPollMin
	for {
		ok, err := sysfile.TryLock(f)
		switch {
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("codex: locking the credential store: %w", err)
		case ok:
			return f, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("codex: waiting for the credential lock: %w", ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, lockPollMax)
	}
}

// Reasons readNoFollow gives for a file it refuses.
var (
	errSymlink    = errors.New("is a symbolic link, which is not followed")
	errNotRegular = errors.New("is not a regular file")
	errTooLarge   = errors.New("is larger than 1 MiB")
)

// readNoFollow reads a regular file of at most maxFileBytes without following
// a symbolic link in its last component. It opens read-only and
// non-blocking (a FIFO planted there cannot hang it), so it never changes
// the file. A missing file is an error matching fs.ErrNotExist.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
			return nil, errSymlink
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if fi.Size() > maxFileBytes {
		return nil, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, errTooLarge
	}
	return data, nil
}

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

// writeRecord replaces codex.json atomically: the record goes to
// codex.json.tmp (created or truncated, mode 0600), is fsynced, renamed over
// codex.json, and the directory is fsynced. The caller holds the lock, so
// the fixed temporary name is not contended; a crash leaves at most a stale
// temporary file, overwritten next time.
func writeRecord(p paths, r record) error {
	data, err := json.Marshal(r, jsontext.WithIndent("  "))
	if err != nil {
		return fmt.Errorf("codex: encoding the credential: %w", err)
	}
	data = append(data, '\n')
	f, err := os.OpenFile(p.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("codex: writing the credential: %w", err)
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.tmp, p.file)
	}
	if err != nil {
		_ = os.Remove(p.tmp)
		return fmt.Errorf("codex: writing the credential: %w", err)
	}
	if err := sysfile.SyncDir(p.dir); err != nil {
		return fmt.Errorf("codex: writing the credential: %w", err)
	}
	return nil
}
