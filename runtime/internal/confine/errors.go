package confine

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// sentinel is a category error. Is lets a category also match the io/fs
// error it refines, so errors.Is(err, fs.ErrNotExist) keeps working.
type sentinel struct {
	msg string
	is  error
}

func (e *sentinel) Error() string { return e.msg }

func (e *sentinel) Is(target error) bool { return e.is != nil && target == e.is }

// Errors of Open.
var (
	// ErrWorkspaceRelative is returned by Open for a directory path that is
	// not absolute.
	ErrWorkspaceRelative = errors.New("workspace path is not absolute")
	// ErrWorkspaceNotFound is returned by Open when the directory does not
	// exist.
	ErrWorkspaceNotFound error = &sentinel{"workspace not found", fs.ErrNotExist}
	// ErrWorkspaceNotDir is returned by Open when the path is not a
	// directory.
	ErrWorkspaceNotDir = errors.New("workspace is not a directory")
)

// Categories of path errors, found with errors.Is in a *PathError.
var (
	// ErrEscape means the path leaves the workspace: ".." above the root, or
	// an absolute path outside it.
	ErrEscape = errors.New("path is outside the workspace")
	// ErrSymlink means resolving the path met a symbolic link; links are
	// never followed, whether they point inside the workspace or not.
	ErrSymlink = errors.New("path contains a symbolic link, which is not followed")
	// ErrNotFound means the path (or one of its parents) does not exist.
	ErrNotFound error = &sentinel{"no such file or directory", fs.ErrNotExist}
	// ErrNotDir means a directory was needed but the path (or one of its
	// parents) is something else.
	ErrNotDir = errors.New("not a directory")
	// ErrIsDir means a file was needed but the path is a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNotRegular means a regular file was needed but the path is a
	// device, a FIFO or a socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge means a file is larger than the caller's limit.
	ErrTooLarge = errors.New("file too large")
	// ErrInvalidPath means the path cannot name a file (it contains a NUL
	// byte).
	ErrInvalidPath = errors.New("invalid path")
)

// PathError records a failed operation on a workspace path. Path is
// workspace-relative (slash-separated, "." for the root) or empty when the
// offending input was an absolute host path; it never holds the absolute
// path of the workspace.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Op + ": " + e.Err.Error()
	}
	return e.Op + " " + e.Path + ": " + e.Err.Error()
}

func (e *PathError) Unwrap() error { return e.Err }

// pathErr wraps err for op on rel, replacing an errno by its category
// sentinel when it has one. Errnos carry no path, so nothing of the host
// layout leaks through them.
func pathErr(op, rel string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	return &PathError{Op: op, Path: rel, Err: category(err)}
}

// category maps the errnos the resolvers produce to sentinels.
func category(err error) error {
	switch err {
	case unix.ENOENT:
		return ErrNotFound
	case unix.ENOTDIR:
		return ErrNotDir
	case unix.EISDIR:
		return ErrIsDir
	case unix.ELOOP:
		// O_NOFOLLOW on a final link and RESOLVE_NO_SYMLINKS on any link
		// both report ELOOP.
		return ErrSymlink
	case unix.EXDEV:
		// RESOLVE_BENEATH reports an escape as EXDEV.
		return ErrEscape
	}
	return err
}
