package engine

import "octet.dev/host/runtime/internal/prepare"

// sessionsDir is the default session directory (prepare.SessionsDir).
func (a *Agent) sessionsDir() string { return prepare.SessionsDir(a.opts.Home, a.opts.SessionDir) }
