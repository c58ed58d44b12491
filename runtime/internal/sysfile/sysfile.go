package sysfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes an exclusive lock on f without waiting. It reports false,
// with a nil error, when another open file description holds the lock; an
// interrupted call is retried.
func TryLock(f *os.File) (bool, error) {
	held := false
	err := WithFD(f, func(fd int) error {
		for {
			err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EWOULDBLOCK):
				held = true
				return nil
			default:
				return err
			}
		}
	})
	return err == nil && !held, err
}

// Unlock releases the lock on f. Closing f releases it as well.
func Unlock(f *os.File) error {
	return WithFD(f, func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
}

// WithFD runs fn on f's descriptor without switching it to blocking mode
// (as f.Fd would).
func WithFD(f *os.File, fn func(fd int) error) error {
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

// SyncDir fsyncs a directory so that a file created or renamed in it
// survives a crash.
func SyncDir(dir string) error {
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
