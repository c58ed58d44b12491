package confine

import (
	"encoding/binary"
	"io/fs"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// DirEntry is an entry of a workspace directory, from ReadDir or Walk.
type DirEntry struct {
	r    *Root
	rel  string // workspace-relative path of the entry
	name string
	typ  fs.FileMode // type bits only
}

var _ fs.DirEntry = (*DirEntry)(nil)

// Name returns the entry's base name.
func (d *DirEntry) Name() string { return d.name }

// IsDir reports whether the entry is a directory (never true for a link).
func (d *DirEntry) IsDir() bool { return d.typ.IsDir() }

// Type returns the entry's type bits (fs.ModeDir, fs.ModeSymlink, …; zero
// for a regular file).
func (d *DirEntry) Type() fs.FileMode { return d.typ }

// Info returns the entry's information as Lstat of its path would.
func (d *DirEntry) Info() (fs.FileInfo, error) { return d.r.Lstat(d.rel) }

// sortKey orders entries so that a depth-first walk visits paths in
// byte-wise order of the path strings with directories suffixed by "/": a
// directory "a" sorts as "a/", after a file "a.txt" and before "a0".
func (d *DirEntry) sortKey() string {
	if d.typ.IsDir() {
		return d.name + "/"
	}
	return d.name
}

// readDirFd reads every entry of the open directory fd (whose path is rel)
// with getdents64(2) and returns them sorted by name, or by sortKey when
// walkOrder is set. The type comes from d_type; when the file system reports
// DT_UNKNOWN it comes from fstatat relative to fd, never from a path.
func (r *Root) readDirFd(fd int, rel string, walkOrder bool) ([]DirEntry, error) {
	var ents []DirEntry
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, pathErr("readdir", rel, err)
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: u64 ino, s64 off, u16 reclen,
			// u8 type, char name[] (NUL-terminated).
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			name := b[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." || len(name) == 0 {
				continue
			}
			e := DirEntry{r: r, rel: join(rel, string(name)), name: string(name)}
			if e.typ, err = direntType(fd, e.name, typ); err != nil {
				if err == unix.ENOENT {
					continue // removed since getdents
				}
				return nil, pathErr("readdir", e.rel, err)
			}
			ents = append(ents, e)
		}
	}
	if walkOrder {
		slices.SortFunc(ents, func(a, b DirEntry) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	} else {
		slices.SortFunc(ents, func(a, b DirEntry) int { return strings.Compare(a.name, b.name) })
	}
	return ents, nil
}

// direntType maps d_type to file mode type bits.
func direntType(dir int, name string, t uint8) (fs.FileMode, error) {
	switch t {
	case unix.DT_REG:
		return 0, nil
	case unix.DT_DIR:
		return fs.ModeDir, nil
	case unix.DT_LNK:
		return fs.ModeSymlink, nil
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, nil
	case unix.DT_SOCK:
		return fs.ModeSocket, nil
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, nil
	case unix.DT_BLK:
		return fs.ModeDevice, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return modeOf(st.Mode).Type(), nil
}

// join joins a clean relative directory path and a name.
func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// WalkFunc is called by Walk for each path it visits, as fs.WalkDirFunc is
// by fs.WalkDir: rel is workspace-relative, d describes the entry. When err
// is non-nil, d may be nil (the start path could not be examined) or the
// walk could not open or read the directory d, and fn decides whether to go
// on (nil) or stop (an error). Returning fs.SkipDir from a directory skips
// it (it is then never opened); from a file, it skips the rest of its
// directory. fs.SkipAll ends the walk without error.
type WalkFunc func(rel string, d fs.DirEntry, err error) error

// Walk walks the tree at the workspace path p depth-first, calling fn for p
// and then for every entry beneath it. It never follows a link: links are
// reported with type fs.ModeSymlink and not traversed, and a link as p
// itself is reported but not traversed. Directories are opened relative to
// their parent's descriptor with O_NOFOLLOW, so the walk cannot leave the
// root even if the tree changes under it. Within a directory, entries are
// visited in byte-wise order of their names with directories taken as
// "name/", which makes the sequence of visited paths sorted as strings
// (with directories suffixed by "/").
//
// An error from Rel is returned without calling fn. Walk keeps one
// descriptor open per level of depth.
func (r *Root) Walk(p string, fn WalkFunc) error {
	rel, err := r.Rel(p)
	if err != nil {
		return err
	}
	fi, err := r.Lstat(rel)
	if err != nil {
		err = fn(rel, nil, err)
	} else {
		d := &DirEntry{r: r, rel: rel, name: path.Base(rel), typ: fi.Mode().Type()}
		err = fn(rel, d, nil)
		if err == nil && d.IsDir() {
			var fd int
			fd, err = r.openRel(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				err = fn(rel, d, pathErr("walk", rel, err))
			} else {
				err = r.walkDir(fd, d, fn)
				unix.Close(fd)
			}
		}
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// walkDir visits the children of the directory open as fd.
func (r *Root) walkDir(fd int, d *DirEntry, fn WalkFunc) error {
	ents, err := r.readDirFd(fd, d.rel, true)
	if err != nil {
		if err = fn(d.rel, d, err); err != nil {
			if err == fs.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for i := range ents {
		e := &ents[i]
		err := fn(e.rel, e, nil)
		if err == fs.SkipDir {
			if e.IsDir() {
				continue
			}
			return nil
		}
		if err != nil {
			return err
		}
		if !e.IsDir() {
			continue
		}
		cfd, oerr := openRetry(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if oerr != nil {
			// ELOOP or ENOTDIR: the directory was replaced since getdents.
			if err := fn(e.rel, e, pathErr("walk", e.rel, oerr)); err != nil && err != fs.SkipDir {
				return err
			}
			continue
		}
		err = r.walkDir(cfd, e, fn)
		unix.Close(cfd)
		if err != nil {
			return err
		}
	}
	return nil
}
