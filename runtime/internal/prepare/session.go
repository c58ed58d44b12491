package prepare

import (
	"errors"
	"path/filepath"
	"strconv"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
)

// SessionsDir is the session directory of a request that names none: dir,
// the agent's option, else home's ~/.octet/sessions.
func SessionsDir(home, dir string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(home, ".octet", "sessions")
}

// OpenSession opens (or creates) the run's session in req.SessionDir, or
// in the agent's (SessionsDir) when the request names none, and locks it. It reports
// whether the session has no conversation yet; history seeds only such a
// session.
func OpenSession(cfg *Config, req *RunRequest) (_ *store.Session, newSess bool, _ *RunError) {
	dir := req.SessionDir
	if dir == "" {
		dir = SessionsDir(cfg.Home, cfg.SessionDir)
	} else if !filepath.IsAbs(dir) {
		return nil, false, &RunError{Code: protocol.CodeSessionDirInvalid, Message: "session_dir must be an absolute path"}
	}
	id := req.SessionID
	if id == "" {
		id = store.NewID()
	}
	s, err := store.Open(dir, id, store.Options{Now: cfg.Now})
	switch {
	case errors.Is(err, store.ErrLocked):
		return nil, false, &RunError{Code: protocol.CodeSessionLocked, Message: "session " + strconv.Quote(id) + " is in use by another run or process"}
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrUnsupportedSchema):
		return nil, false, &RunError{Code: protocol.CodeSessionCorrupt, Message: "session " + strconv.Quote(id) + " cannot be resumed: " + err.Error()}
	case errors.Is(err, store.ErrInvalidID):
		return nil, false, &RunError{Code: protocol.CodeInvalidValue, Message: "session_id is not a valid ID"}
	case err != nil:
		return nil, false, &RunError{Code: protocol.CodeSessionDirInvalid, Message: "session_dir cannot be used: " + err.Error()}
	}
	newSess = !s.HasConversation() // no record is read for it
	if len(req.History) > 0 && !newSess {
		// The caller closes the session with the rest of the run.
		return s, newSess, &RunError{Code: protocol.CodeHistoryInvalid, Message: "history seeds only a new session; session " + strconv.Quote(id) + " already has messages"}
	}
	return s, newSess, nil
}
