package engine

import (
	"errors"
	"path/filepath"
	"strconv"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
)

// sessionsDir is the default session directory.
func (a *Agent) sessionsDir() string {
	if a.opts.SessionDir != "" {
		return a.opts.SessionDir
	}
	return filepath.Join(a.opts.Home, ".octet", "sessions")
}

func (a *Agent) openSession(p *prepared) *RunError {
	dir := p.req.SessionDir
	if dir == "" {
		dir = a.sessionsDir()
	} else if !filepath.IsAbs(dir) {
		return refuse(protocol.CodeSessionDirInvalid, "session_dir must be an absolute path")
	}
	id := p.req.SessionID
	if id == "" {
		id = store.NewID()
	}
	s, err := store.Open(dir, id, store.Options{Now: a.opts.Now})
	switch {
	case errors.Is(err, store.ErrLocked):
		return refuse(protocol.CodeSessionLocked, "session %s is in use by another run or process", strconv.Quote(id))
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrUnsupportedSchema):
		return refuse(protocol.CodeSessionCorrupt, "session %s cannot be resumed: %s", strconv.Quote(id), err.Error())
	case errors.Is(err, store.ErrInvalidID):
		return refuse(protocol.CodeInvalidValue, "session_id is not a valid ID")
	case err != nil:
		return refuse(protocol.CodeSessionDirInvalid, "session_dir cannot be used: %s", err.Error())
	}
	p.sess = s
	p.newSess = !s.HasConversation() // no record is read for it
	if len(p.req.History) > 0 && !p.newSess {
		return refuse(protocol.CodeHistoryInvalid, "history seeds only a new session; session %s already has messages", strconv.Quote(id))
	}
	return nil
}
