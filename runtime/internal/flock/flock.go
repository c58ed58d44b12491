// Package flock takes and releases the advisory locks (flock(2)) that
// guard the host's files: a session's <name>.lock in the store and the
// Codex credential lock. It is a leaf.
//
// flock locks belong to the open file description, so a second open of the
// same lock file in this process conflicts just as another process does.
package flock

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
