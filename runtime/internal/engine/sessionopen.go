package engine

import (
	"path/filepath"
)

// sessionsDir is the default session directory.
func (a *Agent) sessionsDir() string {
	if a.opts.SessionDir != "" {
		return a.opts.SessionDir
	}
	return filepath.Join(a.opts.Home, ".octet", "sessions")
}
