package confine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// OpenFile opens the workspace path p with the given open(2) flags (os.O_*
// values; O_NOFOLLOW and O_CLOEXEC are always added) and, when creating,
// permission bits perm. The returned file's Name is the workspace-relative
// path, so errors from its methods name no host path. A link anywhere in p
// fails with ErrSymlink, including a final link and a dangling link with
// O_CREAT.
func (r *Root) OpenFile(p string, flags int, perm fs.FileMode) (*os.File, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, err
	}
	fd, err := r.openRel(rel, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, pathErr("open", rel, err)
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// OpenRegular opens the regular file at the workspace path p for reading
// and returns it with its information. A directory fails with ErrIsDir; a
// device, FIFO or socket with ErrNotRegular. The file is opened
// non-blocking and checked with fstat before any read, so a FIFO cannot hang
// the caller.
func (r *Root) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, nil, err
	}
	fd, st, err := r.openRegular(rel)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), rel), newFileInfo(rel, st), nil
}

// openRegular opens rel read-only and checks that it is a regular file.
func (r *Root) openRegular(rel string) (int, *unix.Stat_t, error) {
	fd, err := r.openRel(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, nil, pathErr("open", rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, nil, pathErr("open", rel, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return fd, &st, nil
	case unix.S_IFDIR:
		err = ErrIsDir
	default:
		err = ErrNotRegular
	}
	unix.Close(fd)
	return -1, nil, &PathError{Op: "open", Path: rel, Err: err}
}

// ReadFile returns the contents of the regular file at the workspace path p,
// with the errors of OpenRegular.
func (r *Root) ReadFile(p string) ([]byte, error) {
	return r.ReadFileInto(p, nil, -1)
}

// ReadFileInto reads the regular file at the workspace path p into buf
// (from buf[:0], growing it when needed) and returns the filled slice. It
// reads as many bytes as fstat reported when the file was opened (a file
// growing meanwhile is read up to that size). A file larger than max bytes
// fails with ErrTooLarge before any read; max < 0 means no limit. Other
// errors are those of OpenRegular. It works on the descriptor directly,
// without an os.File, which makes it the cheap way to read many files
// (grep).
func (r *Root) ReadFileInto(p string, buf []byte, max int64) ([]byte, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, err
	}
	fd, st, err := r.openRegular(rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	size := st.Size
	if max >= 0 && size > max {
		return nil, &PathError{Op: "read", Path: rel, Err: ErrTooLarge}
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	buf = buf[:size]
	n := 0
	for int64(n) < size {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, pathErr("read", rel, err)
		}
		if m == 0 {
			break // the file shrank
		}
		n += m
	}
	return buf[:n], nil
}

// Stat returns the file information of the workspace path p. A final link
// is not followed: it fails with ErrSymlink, like a link in the middle.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	fi, rel, err := r.lstat("stat", p)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &PathError{Op: "stat", Path: rel, Err: ErrSymlink}
	}
	return fi, err
}

// Lstat returns the file information of the workspace path p; a final link
// is described, not followed. A link before the final element fails with
// ErrSymlink.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	fi, _, err := r.lstat("lstat", p)
	return fi, err
}

func (r *Root) lstat(op, p string) (fs.FileInfo, string, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, "", err
	}
	// O_PATH|O_NOFOLLOW yields a descriptor for a final link itself, with
	// openat2 (even under RESOLVE_NO_SYMLINKS) and with openat alike.
	fd, err := r.openRel(rel, unix.O_PATH, 0)
	if err != nil {
		return nil, rel, pathErr(op, rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, rel, pathErr(op, rel, err)
	}
	return newFileInfo(rel, &st), rel, nil
}

// ReadDir returns the entries of the directory at the workspace path p,
// sorted by name, without "." and "..". Links are reported with type
// fs.ModeSymlink. A final link fails with ErrSymlink.
func (r *Root) ReadDir(p string) ([]fs.DirEntry, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, err
	}
	fd, err := r.openRel(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, pathErr("readdir", rel, err)
	}
	defer unix.Close(fd)
	ents, err := r.readDirFd(fd, rel, false)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(ents))
	for i := range ents {
		out[i] = &ents[i]
	}
	return out, nil
}

// MkdirAll creates the directory at the workspace path p and any missing
// parents, with mode 0755 (less the umask), one component at a time beneath
// the root. An existing directory is fine; an existing link, even to a
// directory, fails with ErrSymlink and anything else with ErrNotDir.
func (r *Root) MkdirAll(p string) error {
	rel, err := r.Rel(p)
	if err != nil {
		return err
	}
	fd, err := r.mkdirAll(rel)
	if err != nil {
		return err
	}
	if fd != r.fd {
		unix.Close(fd)
	}
	return nil
}

// mkdirAll creates rel and returns an O_PATH descriptor for it (r.fd for
// the root), which the caller closes.
func (r *Root) mkdirAll(rel string) (int, error) {
	if rel == "." {
		return r.fd, nil
	}
	dir := r.fd
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		sub := strings.Join(parts[:i+1], "/")
		if name == "" || name == "." || name == ".." {
			return -1, &PathError{Op: "mkdir", Path: sub, Err: ErrEscape}
		}
		err := unix.Mkdirat(dir, name, 0o755)
		if err != nil && err != unix.EEXIST {
			if dir != r.fd {
				unix.Close(dir)
			}
			return -1, pathErr("mkdir", sub, err)
		}
		next, err := openRetry(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOTDIR && isLinkAt(dir, name) {
			err = unix.ELOOP
		}
		if dir != r.fd {
			unix.Close(dir)
		}
		if err != nil {
			return -1, pathErr("mkdir", sub, err)
		}
		dir = next
	}
	return dir, nil
}

// WriteFileAtomic replaces (or creates) the regular file at the workspace
// path p with data. It writes a temporary file in the same directory through
// the directory's descriptor, fsyncs it, renames it over p with renameat(2)
// and fsyncs the directory, so a reader sees the old or the new content and
// never a mix. When p exists its permission bits (and, when allowed, owner)
// are kept; a new file gets perm less the umask. The parent directory must
// exist (see MkdirAll). A link at p is refused with ErrSymlink rather than
// replaced; a directory fails with ErrIsDir.
func (r *Root) WriteFileAtomic(p string, data []byte, perm fs.FileMode) error {
	rel, err := r.Rel(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return &PathError{Op: "write", Path: rel, Err: ErrIsDir}
	}
	dirRel, name := path.Dir(rel), path.Base(rel)
	// A readable descriptor, not O_PATH: fsync needs one.
	dir, err := r.openRel(dirRel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return pathErr("write", dirRel, err)
	}
	defer unix.Close(dir)

	var old unix.Stat_t
	replacing := false
	switch err := unix.Fstatat(dir, name, &old, unix.AT_SYMLINK_NOFOLLOW); err {
	case nil:
		switch old.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			replacing = true
		case unix.S_IFLNK:
			return &PathError{Op: "write", Path: rel, Err: ErrSymlink}
		case unix.S_IFDIR:
			return &PathError{Op: "write", Path: rel, Err: ErrIsDir}
		default:
			return &PathError{Op: "write", Path: rel, Err: ErrNotRegular}
		}
	case unix.ENOENT:
	default:
		return pathErr("write", rel, err)
	}

	tmp, fd, err := createTemp(dir, uint32(perm.Perm()))
	if err != nil {
		return pathErr("write", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	committed := false
	defer func() {
		if !committed {
			f.Close()
			unix.Unlinkat(dir, tmp, 0)
		}
	}()
	if replacing {
		// Owner first: chown may clear set-id bits that chmod then restores.
		_ = unix.Fchown(fd, int(old.Uid), int(old.Gid)) // best effort: needs privilege
		if err := unix.Fchmod(fd, old.Mode&0o7777); err != nil {
			return pathErr("write", rel, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return pathErr("write", rel, unwrapPathError(err))
	}
	if err := f.Sync(); err != nil {
		return pathErr("write", rel, unwrapPathError(err))
	}
	if err := f.Close(); err != nil {
		return pathErr("write", rel, unwrapPathError(err))
	}
	if err := unix.Renameat(dir, tmp, dir, name); err != nil {
		unix.Unlinkat(dir, tmp, 0)
		committed = true // closed and removed
		return pathErr("write", rel, err)
	}
	committed = true
	if err := unix.Fsync(dir); err != nil {
		return pathErr("write", dirRel, err)
	}
	return nil
}

// createTemp creates a new, empty file with a random name in dir.
func createTemp(dir int, perm uint32) (string, int, error) {
	for range 16 {
		var b [8]byte
		rand.Read(b[:])
		name := ".octet-tmp-" + hex.EncodeToString(b[:])
		fd, err := openRetry(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err == unix.EEXIST {
			continue
		}
		return name, fd, err
	}
	return "", -1, unix.EEXIST
}

// unwrapPathError strips an *fs.PathError so the caller can rewrap the bare
// errno with a relative path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// StatForChange fills st with an fstatat(2) of rel beneath the root, not
// following a final link (AT_SYMLINK_NOFOLLOW): one system call, where
// Lstat takes three. Unlike Lstat it does not refuse a link before the
// final element. It is meant only to tell whether a file or folder read
// before through the root's other methods has changed since (a cache's
// validation), never to decide access or to read anything: a path that
// goes through a link then stats as something other than what was read,
// which is a change. rel must be local (filepath.IsLocal); else
// ErrEscape.
func (r *Root) StatForChange(rel string, st *unix.Stat_t) error {
	if !filepath.IsLocal(rel) {
		return &PathError{Op: "stat", Path: rel, Err: ErrEscape}
	}
	return unix.Fstatat(r.fd, rel, st, unix.AT_SYMLINK_NOFOLLOW)
}
