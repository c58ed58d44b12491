package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/internal/sysfile"
)

// Media objects. A message's media are recorded as references (type, MIME
// type, format, SHA-256, size); the bytes live beside the session file, in
// <name>.media/<sha256>, written durably before the message that refers to
// them. They are named by content, so a resumed run sends exactly the bytes
// the first run read, whatever happened to the workspace file since.

// mediaSuffix names the media folder: the session file's stem plus it.
const mediaSuffix = ".media"

// ErrMediaMissing reports a media reference whose stored bytes are missing or
// no longer match their digest.
var ErrMediaMissing = errors.New("store: media object missing or altered")

// MediaDir returns the folder holding the session's media objects.
func (s *Session) MediaDir() string {
	return strings.TrimSuffix(s.path, fileSuffix) + mediaSuffix
}

// validDigest reports whether d is a lower-case hex SHA-256.
func validDigest(d string) bool {
	if len(d) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// PutMedia stores data as a media object and returns its digest. The object
// is written to a temporary file, synced, renamed into place and the folder
// synced, so it is durable before PutMedia returns; bytes already stored are
// not written again.
func (s *Session) PutMedia(data []byte) (string, error) {
	if s.closed {
		return "", ErrClosed
	}
	return putMedia(s.fs, s.MediaDir(), data)
}

// putMedia stores data as a media object in the media folder dir.
func putMedia(fsys fileSystem, dir string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	final := filepath.Join(dir, digest)
	if existing, err := readObject(fsys, final); err == nil && bytes.Equal(existing, data) {
		return digest, nil
	}
	if err := makeDir(fsys, dir); err != nil {
		return "", fmt.Errorf("store: media folder: %w", err)
	}
	var f file
	var tmp string
	var err error
	for range 10 { // a name another writer took is tried again
		tmp = filepath.Join(dir, spoolPrefix+strconv.FormatUint(rand.Uint64(), 36))
		if f, err = fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("store: media: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.SyncData()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, final)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return "", fmt.Errorf("store: media: %w", err)
	}
	return digest, nil
}

// readObject reads the regular file name whole; a symbolic link is
// refused (ELOOP).
func readObject(fsys fileSystem, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	b := make([]byte, info.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	return b[:n], err
}

// Media returns the bytes of the media object digest, checked against the
// digest; a missing, linked or altered object is ErrMediaMissing.
func (s *Session) Media(digest string) ([]byte, error) {
	if !validDigest(digest) {
		return nil, fmt.Errorf("%w: %q is not a SHA-256 digest", ErrMediaMissing, digest)
	}
	b, err := readObject(s.fs, filepath.Join(s.MediaDir(), digest))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s", ErrMediaMissing, digest)
		}
		return nil, fmt.Errorf("store: media: %w", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != digest {
		return nil, fmt.Errorf("%w: %s does not match its digest", ErrMediaMissing, digest)
	}
	return b, nil
}

// spoolPrefix begins the name of every temporary file in the media folder:
// PutMedia's and the provider's spools of output media (media.NewSpool).
const spoolPrefix = ".tmp-"

// removeSpools removes the temporary files a process that held the session
// before left in its media folder when it died mid-write (PutMedia's,
// spools of output media of an attempt never committed): with the lock
// held, no one else writes there. Errors are ignored; a leftover is only
// disk space.
func (s *Session) removeSpools() {
	dir := s.MediaDir()
	entries, err := s.fs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), spoolPrefix) && e.Type().IsRegular() {
			_ = s.fs.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// AdoptMedia makes the spool file at path, whose bytes have the SHA-256
// digest, the media object digest: the file is synced, renamed into place
// and the folder synced, so the object is durable before AdoptMedia
// returns. The spool must be in the media folder (MediaDir). When the
// object already exists the spool is removed instead. It returns the
// object's path. The digest is the decoder's, computed as the bytes were
// written; it is not read back. The spool's writer may have created the
// folder: its parent is synced too.
func (s *Session) AdoptMedia(path, digest string) (string, error) {
	if s.closed {
		return "", ErrClosed
	}
	if !validDigest(digest) {
		return "", fmt.Errorf("store: media: %q is not a SHA-256 digest", digest)
	}
	dir := s.MediaDir()
	if filepath.Dir(path) != filepath.Clean(dir) || !strings.HasPrefix(filepath.Base(path), spoolPrefix) {
		return "", fmt.Errorf("store: media: the spool is not a temporary file of the media folder")
	}
	final := filepath.Join(dir, digest)
	if info, err := os.Lstat(final); err == nil && info.Mode().IsRegular() {
		_ = os.Remove(path)
		return final, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err == nil {
		err = syncData(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(path, final)
	}
	if err == nil {
		err = sysfile.SyncDir(dir)
	}
	if err == nil {
		err = sysfile.SyncDir(filepath.Dir(filepath.Clean(dir)))
	}
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("store: media: %w", err)
	}
	return final, nil
}
