package store

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/internal/flock"
)

// lockFile takes an exclusive, non-blocking flock on f (see package
// flock). A conflict returns ErrLocked.
func lockFile(f *os.File) error {
	ok, err := flock.TryLock(f)
	switch {
	case err != nil:
		return fmt.Errorf("flock: %w", err)
	case !ok:
		return ErrLocked
	}
	return nil
}

func unlockFile(f *os.File) error { return flock.Unlock(f) }

// syncDir fsyncs a directory so that a file created or renamed in it
// survives a crash.
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return &os.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}
