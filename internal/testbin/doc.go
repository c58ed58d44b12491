// Package testbin builds the module's commands for tests, once for every
// test binary of a go test run that needs them.
//
// go test ./... runs each package's tests as a process of its own, several
// at a time, so the sharing is between processes: a binary is built into a
// directory of a per-user cache whose name is a hash of everything the build
// reads (the key), and every later caller with the same key reuses it.
//
// The key covers: every file below the module root except the .git entry
// (so every Go file, embedded file, go.mod and go.sum, tests included),
// the VCS state the go command stamps into a binary (git rev-parse HEAD
// and git status --porcelain), the go command's path and the go env
// settings a build depends on (GOVERSION, GOROOT, GOOS, GOARCH, the
// architecture levels, GOEXPERIMENT, GOFLAGS, the cgo settings, ...), and
// the Spec (package, tags, -race). Builds that read files the key cannot
// see (a go.work in force, or a go.mod replace directive naming a local
// directory) are not shared: they go into a directory of the calling
// process alone, removed by Cleanup.
//
// A build runs under an exclusive flock(2) of its key's lock file, so
// concurrent test binaries wait for one build rather than racing. The
// binary is written into a temporary directory, synced, and renamed to
// the key's name only when complete: a crash mid-build leaves a temporary
// directory no caller ever trusts (it is removed later), never a key
// directory with half a binary. Key directories unused for a week and
// temporary directories older than a day are pruned.
//
// The cache lives in $OCTET_TESTBIN_DIR when set, else in
// os.UserCacheDir()/octet-testbin, else in os.TempDir()/octet-testbin-<uid>;
// it must be a directory of the caller's own, not writable by others.
//
// Only tests import this package (deps_test.go keeps it so).
package testbin
