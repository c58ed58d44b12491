// Package opfile reads the operator's files: ~/.octet/settings.json,
// ~/.octet/models.json and the credential files (~/.octet/credentials/*.json,
// the Codex CLI's ~/.codex/auth.json). Every one is opened as the
// workspace's settings file is: non-blocking (O_NONBLOCK), checked with
// fstat before any read, regular files only, and read within a bound
// decided before any allocation. A FIFO, a device, a socket or a directory
// is refused with what it is, so no operator file can hang the host (a
// FIFO), and none can grow its memory past the bound (/dev/zero, a huge
// sparse file). It is a leaf: the settings, the catalog, the credential
// store, Codex and Copilot share it.
package opfile
