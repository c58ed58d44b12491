// Package docs materializes the documentation the binary carries as files
// in one managed folder (${XDG_DATA_HOME:-$HOME/.local/share}/octet/docs/,
// the caller names it): written into a temporary directory beside it and
// renamed into place, so a reader (or another process doing the same at
// the same moment) sees either no folder or a complete one. A folder whose
// stamp (a digest of the content, written last) matches is reused; one that
// does not (another build's documentation) is swapped for a fresh one in
// one step with renameat2(RENAME_EXCHANGE), and the old tree is removed
// whole, so nothing of an older copy is left.
package docs
