package confine

import (
	"errors"
	"io/fs"
)

// Check is the confinement gate a caller runs before it announces an
// operation on the workspace path p as allowed (CONTRACT §10: allowed
// evidence only after every gate). It returns p's workspace-relative path,
// or an error when confinement refuses p whatever the operation: ErrEscape
// (".." above the root, or an absolute path outside it), ErrInvalidPath, or
// ErrSymlink when resolving p beneath the root meets a symbolic link,
// whether in the middle or as the final element (no operation of this
// package follows one).
//
// Every other outcome passes: p or one of its parents missing, not a
// directory, unreadable. Those are the operation's to report (a write may
// create what is missing).
//
// Check is a pre-check, not a guard: it opens only an O_PATH descriptor and
// closes it again. Every operation still resolves beneath the root
// descriptor on its own, so a link swapped in between Check and the
// operation is refused there with the same error.
func (r *Root) Check(p string) (string, error) {
	fi, rel, err := r.lstat("resolve", p)
	switch {
	case err == nil:
		if fi.Mode()&fs.ModeSymlink != 0 {
			return rel, &PathError{Op: "resolve", Path: rel, Err: ErrSymlink}
		}
		return rel, nil
	case errors.Is(err, ErrEscape), errors.Is(err, ErrSymlink), errors.Is(err, ErrInvalidPath):
		return rel, err
	}
	return rel, nil
}
