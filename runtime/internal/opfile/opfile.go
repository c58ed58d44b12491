package opfile

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// Bounds of the operator files.
const (
	SettingsLimit   = 1 << 20  // ~/.octet/settings.json
	ModelsLimit     = 1 << 20  // ~/.octet/models.json
	CredentialLimit = 64 << 10 // every credential file
)

// Links says whether a symbolic link in the last component is followed.
type Links bool

const (
	// Follow opens what a link points to (the file is then checked like
	// any other: a link to /dev/zero is a character device).
	Follow Links = true
	// NoFollow refuses a link in the last component with ErrSymlink.
	NoFollow Links = false
)

// Reasons a file is refused (errors.Is on an *Error).
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("larger than its limit")
	ErrSymlink    = errors.New("a symbolic link, which is not followed")
)

// Error is a refused operator file: Path (as the caller displays it,
// possibly empty) and What it is, e.g. "is a named pipe (FIFO), not a
// regular file".
type Error struct {
	Path string
	What string
	Err  error // ErrNotRegular, ErrTooLarge or ErrSymlink
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.What
	}
	return e.Path + " " + e.What
}

func (e *Error) Unwrap() error { return e.Err }

// Read returns the contents of the regular file at path, of at most limit
// bytes. display names the file in errors (e.g. "~/.octet/settings.json";
// empty: errors name no path). A missing file is an *fs.PathError matching
// fs.ErrNotExist; other open errors are *fs.PathError too. A file that is
// not regular, larger than limit (by fstat, or grown past it while read),
// or (with NoFollow) a symbolic link is an *Error. The open is
// non-blocking and the file regular, so no read can block.
func Read(path, display string, limit int64, links Links) ([]byte, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if links == NoFollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := open(path, flags)
	if err != nil {
		switch {
		case links == NoFollow && errors.Is(err, unix.ELOOP):
			return nil, &Error{Path: display, What: "is " + ErrSymlink.Error(), Err: ErrSymlink}
		case errors.Is(err, unix.ENXIO):
			// A socket (or a device without a driver) cannot be opened:
			// say what it is.
			if what := describePath(path, links); what != "" {
				return nil, &Error{Path: display, What: what, Err: ErrNotRegular}
			}
		}
		return nil, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: display, Err: err}
	}
	if what := kind(st.Mode); what != "" {
		return nil, &Error{Path: display, What: what, Err: ErrNotRegular}
	}
	tooLarge := &Error{Path: display, What: "is larger than " + Size(limit) + ", the limit of this file", Err: ErrTooLarge}
	if st.Size > limit {
		return nil, tooLarge
	}
	// One byte more than the limit tells a file that grew past it.
	buf := make([]byte, min(st.Size, limit)+1)
	n := 0
	for {
		if n == len(buf) {
			if int64(n) > limit {
				return nil, tooLarge
			}
			buf = append(buf, make([]byte, min(int64(len(buf)), limit+1-int64(len(buf))))...)
		}
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: display, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	if int64(n) > limit {
		return nil, tooLarge
	}
	return buf[:n], nil
}

func open(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// kind describes a file type other than regular ("" for a regular file).
func kind(mode uint32) string {
	var what string
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return ""
	case unix.S_IFIFO:
		what = "a named pipe (FIFO)"
	case unix.S_IFCHR:
		what = "a character device"
	case unix.S_IFBLK:
		what = "a block device"
	case unix.S_IFSOCK:
		what = "a socket"
	case unix.S_IFDIR:
		what = "a directory"
	case unix.S_IFLNK:
		what = "a symbolic link"
	default:
		what = "a special file"
	}
	return "is " + what + ", " + ErrNotRegular.Error()
}

// describePath describes what path is without opening it ("" when that
// cannot be told).
func describePath(path string, links Links) string {
	var st unix.Stat_t
	var err error
	if links == NoFollow {
		err = unix.Lstat(path, &st)
	} else {
		err = unix.Stat(path, &st)
	}
	if err != nil {
		return ""
	}
	return kind(st.Mode)
}

// Size formats a byte count as the documentation writes limits: "1 MiB",
// "64 KiB", else bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}
