package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; the store wraps them
// with the session path or line number for context.
var (
	// ErrInvalidID reports a session ID outside CONTRACT §4: 1..128 bytes of
	// ASCII letters, digits, '-', '_', '.', ':'.
	ErrInvalidID = errors.New("store: invalid session id")
	// ErrLocked reports that another Session, in this process or another,
	// holds the session's lock (CONTRACT §13: the host answers with
	// final_result error session_locked).
	ErrLocked = errors.New("store: session locked")
	// ErrCorrupt reports a session file that cannot be loaded: a missing or
	// invalid header, or an invalid line before the last one. Loading never
	// skips such a line. The error is a *CorruptError when a line is known.
	ErrCorrupt = errors.New("store: corrupt session file")
	// ErrUnsupportedSchema reports a header whose schema_version this build
	// does not know.
	ErrUnsupportedSchema = errors.New("store: unsupported session schema version")
	// ErrClosed reports an append on a closed Session.
	ErrClosed = errors.New("store: session closed")
	// ErrInvalidRecord reports a record that Append refuses to write because
	// loading it back would fail (for example a message without a role or a
	// compaction whose first_kept is out of range).
	ErrInvalidRecord = errors.New("store: invalid record")
	// ErrFailed reports a Session that hit a write or fsync error. The state
	// of the file's tail is then unknown, so the Session accepts no further
	// appends; close it and open the session again, which reloads the file
	// and drops a torn tail.
	ErrFailed = errors.New("store: session failed")
	// ErrNoEntry reports a checkout target that is not an entry of the
	// session: neither 0 nor the ID of one of its message or compaction
	// records.
	ErrNoEntry = errors.New("store: no such session entry")
	// ErrExists reports a fork onto a session ID that already has a file.
	ErrExists = errors.New("store: session already exists")
)

// CorruptError is the ErrCorrupt error for a specific line of a session
// file.
type CorruptError struct {
	// Path is the session file.
	Path string
	// Line is the 1-based line number of the offending line; the header is
	// line 1.
	Line int
	// Err describes what is wrong with the line.
	Err error
}

// Error returns a description with the path and line number.
func (e *CorruptError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%v: line %d: %v", ErrCorrupt, e.Line, e.Err)
	}
	return fmt.Sprintf("%v: %s: line %d: %v", ErrCorrupt, e.Path, e.Line, e.Err)
}

// Is reports whether target is ErrCorrupt, so errors.Is(err, ErrCorrupt)
// holds for every CorruptError.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying cause.
func (e *CorruptError) Unwrap() error { return e.Err }
