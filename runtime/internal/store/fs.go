package store

import (
	"io"
	"os"

	"octet.dev/host/runtime/internal/sysfile"
)

// fileSystem is the seam between the session store and the file system:
// only the operations the session files need (their lock, their creation
// through a temporary file, their appends, syncs and reads). osFS is the
// real one; the tests also run the store on a crashable in-memory file
// system that keeps only what was synced (crashfs_test.go). Media objects
// go through it too (PutMedia, Media, the sweep of temporaries); only
// AdoptMedia, which renames a spool the provider's decoder wrote into the
// media folder, works on the real file system.
type fileSystem interface {
	// OpenFile opens name with os.OpenFile's flags and permission.
	OpenFile(name string, flag int, perm os.FileMode) (file, error)
	Stat(name string) (os.FileInfo, error)
	Lstat(name string) (os.FileInfo, error)
	MkdirAll(name string, perm os.FileMode) error
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// ReadDir lists the directory name, sorted by file name.
	ReadDir(name string) ([]os.DirEntry, error)
	// SyncDir makes the entries of the directory dir durable.
	SyncDir(dir string) error
}

// file is an open file of a fileSystem.
type file interface {
	io.ReaderAt
	io.Writer
	Name() string
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	// SyncData makes the file's data and size durable (fdatasync).
	SyncData() error
	// TryLock takes an exclusive, non-blocking flock: ErrLocked when
	// another open file holds it.
	TryLock() error
	Unlock() error
	Close() error
}

// osFS is the real file system: the system calls.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }
func (osFS) Lstat(name string) (os.FileInfo, error)       { return os.Lstat(name) }
func (osFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) ReadDir(name string) ([]os.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) SyncDir(dir string) error                     { return sysfile.SyncDir(dir) }

// osFile is an *os.File; its ReadAt, Write, Truncate, Stat and Close are
// the os package's.
type osFile struct{ *os.File }

func (f osFile) SyncData() error { return syncData(f.File) }
func (f osFile) TryLock() error  { return lockFile(f.File) }
func (f osFile) Unlock() error   { return unlockFile(f.File) }
