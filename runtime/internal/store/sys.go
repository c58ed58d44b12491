package store

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// withFD runs fn on f's descriptor without switching it to blocking mode
// (as f.Fd would).
func withFD(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = fn(int(fd)) }); err != nil {
		return err
	}
	return opErr
}

// lockFile takes an exclusive, non-blocking flock on f. flock locks belong to
// the open file description, so a second open of the same lock file in this
// process conflicts just as another process does. A conflict returns
// ErrLocked.
func lockFile(f *os.File) error {
	return withFD(f, func(fd int) error {
		for {
			err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EWOULDBLOCK):
				return ErrLocked
			default:
				return fmt.Errorf("flock: %w", err)
			}
		}
	})
}

func unlockFile(f *os.File) error {
	return withFD(f, func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
}

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
