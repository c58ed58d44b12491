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
		return nil, false, Refuse(protocol.CodeSessionDirInvalid, "session_dir must be an absolute path")
	}
	id := req.SessionID
	if id == "" {
		id = store.NewID()
	}
	s, err := store.Open(dir, id, store.Options{Now: cfg.Now})
	switch {
	case errors.Is(err, store.ErrLocked):
		return nil, false, Refuse(protocol.CodeSessionLocked, "session %s is in use by another run or process", strconv.Quote(id))
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrUnsupportedSchema):
		return nil, false, Refuse(protocol.CodeSessionCorrupt, "session %s cannot be resumed: %s", strconv.Quote(id), err.Error())
	case errors.Is(err, store.ErrInvalidID):
		return nil, false, Refuse(protocol.CodeInvalidValue, "session_id is not a valid ID")
	case err != nil:
		return nil, false, Refuse(protocol.CodeSessionDirInvalid, "session_dir cannot be used: %s", err.Error())
	}
	newSess = !s.HasConversation() // no record is read for it
	if len(req.History) > 0 && !newSess {
		// The caller closes the session with the rest of the run.
		return s, newSess, Refuse(protocol.CodeHistoryInvalid, "history seeds only a new session; session %s already has messages", strconv.Quote(id))
	}
	return s, newSess, nil
}
