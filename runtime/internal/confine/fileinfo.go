package confine

import (
	"io/fs"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// fileInfo is an fs.FileInfo built from fstat(2) on a confined descriptor.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

var _ fs.FileInfo = (*fileInfo)(nil)

func newFileInfo(rel string, st *unix.Stat_t) *fileInfo {
	return &fileInfo{name: path.Base(rel), st: *st}
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) Mode() fs.FileMode  { return modeOf(fi.st.Mode) }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }

// Sys returns the *unix.Stat_t.
func (fi *fileInfo) Sys() any { return &fi.st }

// modeOf converts a stat(2) mode to an fs.FileMode, as package os does.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
