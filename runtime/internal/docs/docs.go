// Package docs materializes the documentation the binary carries as files
// (issue 12, embedded documentation): under <base>/<version>/, written into
// a temporary directory beside it and renamed into place, so a reader (or
// another host doing the same at the same moment) sees either no directory
// or a complete one. A directory whose stamp matches the content is reused;
// one that does not (a rebuilt development binary of the same version) is
// swapped for a fresh one atomically with renameat2(RENAME_EXCHANGE).
package docs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// stampFile holds the digest of the directory's content; it is written
// last, so a directory with the right stamp is complete.
const stampFile = ".octet-docs-stamp"

// Dir returns the documentation directory of version under base.
func Dir(base, version string) string { return filepath.Join(base, VersionDir(version)) }

// VersionDir is the directory name of a version: its letters, digits, '.',
// '_', '+' and '-', every other byte replaced by '_'; "devel" for an empty
// version or Go's "(devel)".
func VersionDir(v string) string {
	if v == "" || v == "(devel)" {
		return "devel"
	}
	b := []byte(v)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-') {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "." || s == ".." {
		return "devel"
	}
	return s
}

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

// Materialize makes Dir(base, version) hold exactly files (slash-separated
// relative names) and returns it. It writes only when the directory is
// missing or its stamp differs.
func Materialize(base, version string, files map[string][]byte) (string, error) {
	if !filepath.IsAbs(base) {
		return "", errors.New("docs: the data directory is not absolute")
	}
	for n := range files {
		if n == "" || strings.HasPrefix(n, "/") || slices.Contains(strings.Split(n, "/"), "..") || n == stampFile {
			return "", errors.New("docs: invalid file name " + n)
		}
	}
	dir := Dir(base, version)
	stamp := Digest(files)
	if current(dir, stamp) {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(base, ".tmp-"+VersionDir(version)+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // our temporary, or the old tree after an exchange
	if err := write(tmp, files, stamp); err != nil {
		return "", err
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		// A file system without RENAME_NOREPLACE: plain rename(2) also
		// fails on a non-empty directory.
		err = unix.Rename(tmp, dir)
	}
	if err == nil {
		return dir, nil
	}
	if err != unix.EEXIST && err != unix.ENOTEMPTY {
		return "", &os.LinkError{Op: "rename", Old: tmp, New: dir, Err: err}
	}
	if current(dir, stamp) {
		return dir, nil // another process got there first, with the same content
	}
	// A stale tree of the same version: swap it for ours in one step.
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		return "", &os.LinkError{Op: "exchange", Old: tmp, New: dir, Err: err}
	}
	return dir, nil
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
