// Package confine gives the tools descriptor-based access to one workspace
// directory so that no path a model supplies can reach outside it
// (CONTRACT §10, DESIGN §2 "Confinement by descriptors").
//
// It owns the workspace root descriptor and every way of turning a tool path
// into an open file: path normalization (Rel), opening, stat, directory
// listing, directory creation, atomic replacement of files, and a walk for
// grep and find. A path is never checked as a string and opened later:
// every open resolves beneath the root descriptor with openat2(2) and
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, or, where the
// kernel lacks openat2 (ENOSYS), with a component-by-component openat(2) walk
// that opens each directory with O_NOFOLLOW and refuses "..".
//
// Symbolic links are never followed, not even links that point to another
// place inside the workspace: a path whose resolution meets a link fails with
// ErrSymlink. Lstat, ReadDir and Walk report links as links; Walk does not
// descend into them. This is deliberate: following a link safely would mean
// re-resolving its target beneath the root, and refusing is simpler to reason
// about and to test.
//
// Errors are *PathError values whose Path is workspace-relative (or empty),
// never the absolute host path, so they may be shown to the model. Their Err
// is one of the sentinels (ErrEscape, ErrSymlink, ErrNotFound, ErrNotDir,
// ErrIsDir, ErrNotRegular, ErrTooLarge, ErrInvalidPath) when the failure has
// a category, else the raw errno; use errors.Is to classify.
//
// Usage:
//
//	root, err := confine.Open("/abs/workspace")
//	defer root.Close()
//	rel, err := root.Rel(toolPath) // "." for the root, never ".." or "/…"
//	data, err := root.ReadFile(rel)
//
// Concurrency: a Root is safe for concurrent use by many goroutines (its
// descriptor is never changed after Open), except Close, which must be called
// once, after every other call has returned. Files returned by OpenFile are
// owned by the caller.
package confine
