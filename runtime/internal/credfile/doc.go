// Package credfile holds the file primitives of the host's private
// credential store, ~/.octet/credentials: the 0700 directory, the
// cross-process lock file beside each credential (<name>.json.lock, an
// exclusive flock polled with LOCK_NB so that waiting honours a context),
// reading without following a symbolic link, and atomic replacement and
// removal (a temporary file renamed over the target, then the directory
// fsynced). The layout is the Codex credential's (runtime/internal/codex);
// the GitHub Copilot credential uses it through this package.
package credfile
