package confine

import (
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Root is an open workspace directory. All access goes through its
// descriptor; see the package documentation.
type Root struct {
	fd int
	// dirs are the absolute spellings of the workspace that Rel accepts as a
	// prefix: the cleaned path given to Open and, when it differs, the same
	// path with its symbolic links resolved.
	dirs []string
	// walkOnly forces the openat fallback (tests, and kernels without
	// openat2).
	walkOnly bool
}

// openat2Missing is set once openat2 has reported ENOSYS, so later opens go
// straight to the fallback walk.
var openat2Missing atomic.Bool

// Open opens the workspace directory dir, which must be an absolute path to
// an existing directory. Symbolic links in dir itself are followed: the
// operator chose the workspace; only paths inside it are confined.
func Open(dir string) (*Root, error) {
	return open(dir, false)
}

func open(dir string, walkOnly bool) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, ErrWorkspaceRelative
	}
	clean := filepath.Clean(dir)
	fd, err := openRetry(unix.AT_FDCWD, clean, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
	case unix.ENOENT:
		return nil, ErrWorkspaceNotFound
	case unix.ENOTDIR:
		return nil, ErrWorkspaceNotDir
	default:
		return nil, &PathError{Op: "open workspace", Err: err}
	}
	r := &Root{fd: fd, dirs: []string{clean}, walkOnly: walkOnly}
	if real, err := filepath.EvalSymlinks(clean); err == nil && real != clean {
		r.dirs = append(r.dirs, real)
	}
	return r, nil
}

// Close releases the root descriptor. It must be called once, after every
// other use of r has returned.
func (r *Root) Close() error {
	fd := r.fd
	r.fd = -1
	if fd < 0 {
		return nil
	}
	return unix.Close(fd)
}

// Rel normalizes a tool path to a clean, slash-separated path relative to
// the workspace: "." for the root, never starting with ".." or "/". A
// relative p is taken relative to the workspace; an absolute p is accepted
// only when it is lexically inside the workspace. A p whose ".." elements
// would climb above the root fails with ErrEscape; an empty p means the
// root. Rel looks at no file: it is the lexical half of confinement, and
// every method of Root applies it before resolving beneath the descriptor.
func (r *Root) Rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Op: "resolve", Path: strings.ReplaceAll(p, "\x00", `\x00`), Err: ErrInvalidPath}
	}
	if p == "" {
		return ".", nil
	}
	if strings.HasPrefix(p, "/") {
		abs := path.Clean(p)
		for _, d := range r.dirs {
			if rel, ok := within(d, abs); ok {
				return rel, nil
			}
		}
		// The input is a host path outside the workspace: do not echo it.
		return "", &PathError{Op: "resolve", Err: ErrEscape}
	}
	rel := path.Clean(p)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", &PathError{Op: "resolve", Path: p, Err: ErrEscape}
	}
	return rel, nil
}

// within reports p's path relative to dir when the clean absolute path p is
// dir or lies beneath it.
func within(dir, p string) (string, bool) {
	switch {
	case p == dir:
		return ".", true
	case dir == "/":
		return p[1:], true
	case strings.HasPrefix(p, dir) && p[len(dir)] == '/':
		return p[len(dir)+1:], true
	}
	return "", false
}

// resolveFlags confine openat2 to the root and forbid every kind of link.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openRel opens the clean relative path rel beneath the root with flags
// (O_NOFOLLOW and O_CLOEXEC are always added). It returns a raw errno or a
// sentinel; callers wrap it with pathErr.
func (r *Root) openRel(rel string, flags int, perm uint32) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if r.walkOnly || openat2Missing.Load() {
		return r.walkOpen(rel, flags, perm)
	}
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm)
	}
	for attempt := 0; ; attempt++ {
		fd, err := unix.Openat2(r.fd, rel, &how)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && attempt < 16:
			// RESOLVE_BENEATH reports a concurrent rename or mount
			// anywhere on the system as EAGAIN; retrying is the
			// documented answer.
			continue
		case err == unix.ENOSYS:
			openat2Missing.Store(true)
			return r.walkOpen(rel, flags, perm)
		case err == unix.ENOTDIR && flags&unix.O_DIRECTORY != 0 && r.finalIsLink(rel):
			// openat2 reports O_DIRECTORY|O_NOFOLLOW on a final link as
			// ENOTDIR; the caller wants to hear about the link.
			return -1, unix.ELOOP
		}
		return fd, err
	}
}

// walkOpen is the fallback resolver: it opens rel one component at a time,
// each directory with O_PATH|O_DIRECTORY|O_NOFOLLOW relative to the previous
// one, so neither ".." nor a link can lead it out of the root.
func (r *Root) walkOpen(rel string, flags int, perm uint32) (int, error) {
	if rel == "." {
		return openRetry(r.fd, ".", flags, perm)
	}
	parts := strings.Split(rel, "/")
	dir := r.fd
	closeDir := func() {
		if dir != r.fd {
			unix.Close(dir)
		}
	}
	defer func() { closeDir() }()
	for i, name := range parts {
		if name == "" || name == "." || name == ".." {
			// Rel never produces these; refuse rather than trust it.
			return -1, ErrEscape
		}
		if i == len(parts)-1 {
			fd, err := openRetry(dir, name, flags, perm)
			if err == unix.ENOTDIR && flags&unix.O_DIRECTORY != 0 && isLinkAt(dir, name) {
				err = unix.ELOOP
			}
			return fd, err
		}
		next, err := openRetry(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if err == unix.ENOTDIR && isLinkAt(dir, name) {
				// O_PATH|O_NOFOLLOW on a link yields the link itself,
				// which O_DIRECTORY then rejects as ENOTDIR.
				err = unix.ELOOP
			}
			return -1, err
		}
		closeDir()
		dir = next
	}
	panic("confine: walkOpen: unreachable")
}

// finalIsLink reports whether the last element of rel is a link, resolving
// the rest beneath the root.
func (r *Root) finalIsLink(rel string) bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolveFlags}
	fd, err := unix.Openat2(r.fd, rel, &how)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// isLinkAt reports whether name in dir is a symbolic link.
func isLinkAt(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// openRetry is openat that retries EINTR.
func openRetry(dir int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
