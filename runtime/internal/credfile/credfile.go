package credfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"octet.dev/host/runtime/internal/opfile"
	"octet.dev/host/runtime/internal/sysfile"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// MaxFileBytes bounds what is read of a credential file.
const MaxFileBytes = opfile.CredentialLimit

// Paths are the files of one credential.
type Paths struct {
	Dir  string // ~/.octet/credentials
	File string // <name>.json
	Tmp  string // <name>.json.tmp
	Lock string // <name>.json.lock
}

// For returns the paths of credential name (e.g. "copilot") under home.
func For(home, name string) Paths {
	dir := filepath.Join(home, ".octet", "credentials")
	file := filepath.Join(dir, name+".json")
	return Paths{Dir: dir, File: file, Tmp: file + ".tmp", Lock: file + ".lock"}
}

// EnsureDir creates dir (and parents) with mode 0700 and narrows an
// existing one to 0700: it holds credentials.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the credentials directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("credentials directory: %w", err)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("narrowing the credentials directory to 0700: %w", err)
		}
	}
	return nil
}

const (
	lockPollMin = time.Millisecond
	lockPollMax = 20 * time.Millisecond
)

// Lock opens (creating it 0600) and exclusively flocks path, polling with
// LOCK_NB until it succeeds or ctx ends. flock locks belong to the open
// file description, so two goroutines of one process exclude each other as
// two processes do. Closing the returned file releases the lock.
func Lock(ctx context.Context, path string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("waiting for the credential lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the credential lock: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm() != 0o600 {
		_ = f.Chmod(0o600)
	}
	delay := lockPollMin
	for {
		ok, err := sysfile.TryLock(f)
		switch {
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("locking the credential store: %w", err)
		case ok:
			return f, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("waiting for the credential lock: %w", ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, lockPollMax)
	}
}

// Reasons Read gives for a file it refuses (errors.Is).
var (
	ErrSymlink    = opfile.ErrSymlink
	ErrNotRegular = opfile.ErrNotRegular
	ErrTooLarge   = opfile.ErrTooLarge
)

// Read reads a regular file of at most MaxFileBytes without following a
// symbolic link in its last component, read-only and non-blocking
// (opfile.Read): a FIFO, a device, a socket or a directory is refused with
// what it is. A missing file is an error matching fs.ErrNotExist. Errors
// name no path.
func Read(path string) ([]byte, error) {
	return opfile.Read(path, "", MaxFileBytes, opfile.NoFollow)
}

// Write replaces p.File atomically with data: p.Tmp is written (mode 0600),
// fsynced, renamed over p.File, and the directory is fsynced. The caller
// holds the lock, so the fixed temporary name is not contended.
func Write(p Paths, data []byte) error {
	f, err := os.OpenFile(p.Tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("writing the credential: %w", err)
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.Tmp, p.File)
	}
	if err != nil {
		_ = os.Remove(p.Tmp)
		return fmt.Errorf("writing the credential: %w", err)
	}
	if err := sysfile.SyncDir(p.Dir); err != nil {
		return fmt.Errorf("writing the credential: %w", err)
	}
	return nil
}

// Remove deletes p.File atomically (one unlink) and fsyncs the directory.
// It reports whether a file was there. The lock file stays: another
// process may hold it.
func Remove(p Paths) (bool, error) {
	err := os.Remove(p.File)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting the credential: %w", err)
	}
	_ = os.Remove(p.Tmp)
	if err := sysfile.SyncDir(p.Dir); err != nil {
		return true, fmt.Errorf("deleting the credential: %w", err)
	}
	return true, nil
}
