package docs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// stampFile holds the digest of the directory's content; it is written
// last, so a directory with the right stamp is complete.
const stampFile = ".octet-docs-stamp"

// Digest is the stamp of files: a SHA-256 over the sorted names and
// contents.
func Digest(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		var l [8]byte
		for i, x := 0, len(files[n]); i < 8; i, x = i+1, x>>8 {
			l[i] = byte(x)
		}
		h.Write(l[:])
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Materialize makes dir (absolute) hold exactly files (slash-separated
// relative names). It writes only when dir is missing or its stamp
// differs; it may be called by several processes at once, and each returns
// once dir holds a complete tree (its own content or another's that
// raced it). The temporaries of a process that died while writing are
// swept once they are older than staleTemp.
func Materialize(dir string, files map[string][]byte) error {
	if !filepath.IsAbs(dir) {
		return errors.New("docs: the documentation folder is not absolute: " + dir)
	}
	for n := range files {
		if n == "" || strings.HasPrefix(n, "/") || slices.Contains(strings.Split(n, "/"), "..") || n == stampFile {
			return errors.New("docs: invalid file name " + n)
		}
	}
	stamp := Digest(files)
	if current(dir, stamp) {
		return nil
	}
	parent, prefix := filepath.Dir(dir), ".tmp-"+filepath.Base(dir)+"-"
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	sweep(parent, prefix)
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // our temporary, or the old tree after an exchange
	if err := write(tmp, files, stamp); err != nil {
		return err
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		// A file system without RENAME_NOREPLACE: plain rename(2) also
		// fails on a non-empty directory.
		err = unix.Rename(tmp, dir)
	}
	if err == nil {
		return nil
	}
	if err != unix.EEXIST && err != unix.ENOTEMPTY {
		return &os.LinkError{Op: "rename", Old: tmp, New: dir, Err: err}
	}
	if current(dir, stamp) {
		return nil // another process got there first, with the same content
	}
	// A stale tree (another build's, or one from before the folder was
	// managed whole): swap it for ours in one step; the deferred removal
	// takes the old one.
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange", Old: tmp, New: dir, Err: err}
	}
	return nil
}

// staleTemp is how old a temporary must be before another process removes
// it: far longer than writing the documentation takes, so a temporary
// still being written is never taken.
const staleTemp = 10 * time.Minute

// sweep removes the temporaries (names starting with prefix) in parent
// that are older than staleTemp: what a process that died while writing
// left behind. Failures are ignored: the sweep is housekeeping.
func sweep(parent, prefix string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// Complete reports whether dir holds a complete tree (its stamp, written
// last, is there), whatever its content.
func Complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, stampFile))
	return err == nil
}

func current(dir, stamp string) bool {
	b, err := os.ReadFile(filepath.Join(dir, stampFile))
	return err == nil && strings.TrimSpace(string(b)) == stamp
}

func write(dir string, files map[string][]byte, stamp string) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, stampFile), []byte(stamp+"\n"), 0o644); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755) // MkdirTemp makes it 0700
}
