package store

import (
	"fmt"
	"os"

	"octet.dev/host/runtime/internal/sysfile"
)

// lockFile takes an exclusive, non-blocking flock on f (see package
// sysfile). A conflict returns ErrLocked.
func lockFile(f *os.File) error {
	ok, err := sysfile.TryLock(f)
	switch {
	case err != nil:
		return fmt.Errorf("flock: %w", err)
	case !ok:
		return ErrLocked
	}
	return nil
}

func unlockFile(f *os.File) error { return sysfile.Unlock(f) }
