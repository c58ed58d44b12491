package store

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// errCrashed is what every operation of a crashFS returns once its
// operation budget is spent: the machine lost power there.
var errCrashed = errors.New("crashfs: crashed")

// crashFS is an in-memory fileSystem that models what survives a power
// loss. Every file's node keeps its current bytes and the bytes its last
// SyncData made durable; the namespace (name → node) is kept twice too:
// as it is now and as the last SyncDir of each directory left it. Crash
// returns a new crashFS holding only what was durable, optionally also a
// random prefix of a file's unsynced appended tail (a torn write) and, per
// directory entry, possibly the unsynced entry (metadata written back on
// its own).
//
// An operation budget (SetBudget) makes the file system crash at the n-th
// mutating operation: that one and every later one fail with errCrashed,
// so the store sees the crash exactly where a write, sync, rename or
// truncate would have been cut off.
type crashFS struct {
	mu      sync.Mutex
	now     map[string]*memNode // the namespace as it is
	durable map[string]*memNode // the namespace as the last dir syncs left it
	budget  int                 // mutating operations left; < 0: unlimited
	crashed bool
	ops     int // mutating operations done
}

type memNode struct {
	dir     bool
	data    []byte // current bytes
	synced  []byte // the bytes the last SyncData made durable (own array)
	dirty   int    // data[:dirty] == synced[:dirty] (as far as both reach)
	locked  *memFile
	modTime time.Time
}

func newCrashFS() *crashFS {
	root := &memNode{dir: true}
	return &crashFS{
		now:     map[string]*memNode{"/": root},
		durable: map[string]*memNode{"/": root},
		budget:  -1,
	}
}

// SetBudget lets n more mutating operations succeed; n < 0 is unlimited.
func (c *crashFS) SetBudget(n int) {
	c.mu.Lock()
	c.budget = n
	c.mu.Unlock()
}

// Ops returns the number of mutating operations done so far.
func (c *crashFS) Ops() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops
}

// op accounts for one mutating operation; the caller holds mu.
func (c *crashFS) op() error {
	if c.crashed {
		return errCrashed
	}
	if c.budget == 0 {
		c.crashed = true
		return errCrashed
	}
	if c.budget > 0 {
		c.budget--
	}
	c.ops++
	return nil
}

// Crash returns the file system a reboot would find: the durable
// namespace and, for each file, its synced bytes. With rng, a file whose
// unsynced bytes only extend its synced ones keeps a random prefix of
// them, and a directory entry changed since its directory's last sync
// keeps its new state with probability 1/2. Everything the new file
// system holds is durable. c stays crashed.
func (c *crashFS) Crash(rng *rand.Rand) *crashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashed = true
	names := map[string]bool{}
	for n := range c.now {
		names[n] = true
	}
	for n := range c.durable {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted) // deterministic draws
	ns := map[string]*memNode{}
	for _, name := range sorted {
		node := c.durable[name]
		if rng != nil && c.now[name] != node && rng.IntN(2) == 0 {
			node = c.now[name]
		}
		if node != nil {
			ns[name] = node
		}
	}
	// A name whose directory is gone is gone too.
	for _, name := range sorted {
		if ns[name] == nil || name == "/" {
			continue
		}
		for d := filepath.Dir(name); ; d = filepath.Dir(d) {
			if ns[d] == nil {
				delete(ns, name)
				break
			}
			if d == "/" {
				break
			}
		}
	}
	copies := map[*memNode]*memNode{}
	out := newCrashFS()
	out.now, out.durable = map[string]*memNode{}, map[string]*memNode{}
	for _, name := range sorted {
		old := ns[name]
		if old == nil {
			continue
		}
		n := copies[old]
		if n == nil {
			data := append([]byte(nil), old.synced...)
			if rng != nil && !old.dir && old.dirty >= len(old.synced) && len(old.data) > len(old.synced) {
				extra := rng.IntN(len(old.data) - len(old.synced) + 1)
				data = append(data, old.data[len(old.synced):len(old.synced)+extra]...)
			}
			n = &memNode{dir: old.dir, data: data, synced: append([]byte(nil), data...), dirty: len(data), modTime: old.modTime}
			copies[old] = n
		}
		out.now[name], out.durable[name] = n, n
	}
	return out
}

func clean(name string) string { return filepath.Clean("/" + name) }

func (c *crashFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	name = clean(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.now[name]
	if n == nil {
		if flag&os.O_CREATE == 0 {
			if c.crashed {
				return nil, &os.PathError{Op: "open", Path: name, Err: errCrashed}
			}
			return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if d := c.now[filepath.Dir(name)]; d == nil || !d.dir {
			return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if err := c.op(); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		n = &memNode{modTime: time.Now()}
		c.now[name] = n
	} else if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	} else if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		if err := c.op(); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		n.data = n.data[:0]
		n.dirty = 0
	}
	if n.dir && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
	}
	return &memFile{fs: c, node: n, name: name, append: flag&os.O_APPEND != 0}, nil
}

func (c *crashFS) stat(op, name string) (os.FileInfo, error) {
	name = clean(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.now[name]
	if n == nil {
		return nil, &os.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return memInfo{name: filepath.Base(name), size: int64(len(n.data)), dir: n.dir, mod: n.modTime}, nil
}

func (c *crashFS) Stat(name string) (os.FileInfo, error)  { return c.stat("stat", name) }
func (c *crashFS) Lstat(name string) (os.FileInfo, error) { return c.stat("lstat", name) }

func (c *crashFS) MkdirAll(name string, perm os.FileMode) error {
	name = clean(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for d := name; c.now[d] == nil; d = filepath.Dir(d) {
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := c.op(); err != nil {
			return &os.PathError{Op: "mkdir", Path: missing[i], Err: err}
		}
		c.now[missing[i]] = &memNode{dir: true, modTime: time.Now()}
	}
	if !c.now[name].dir {
		return &os.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
	}
	return nil
}

func (c *crashFS) Rename(oldpath, newpath string) error {
	oldpath, newpath = clean(oldpath), clean(newpath)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.now[oldpath]
	if n == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
	}
	if err := c.op(); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	delete(c.now, oldpath)
	c.now[newpath] = n
	return nil
}

func (c *crashFS) Remove(name string) error {
	name = clean(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now[name] == nil {
		return &os.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if err := c.op(); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	delete(c.now, name)
	return nil
}

// ReadDir lists the entries of dir as they are now, sorted by name.
func (c *crashFS) ReadDir(dir string) ([]os.DirEntry, error) {
	dir = clean(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.now[dir]; d == nil || !d.dir {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var out []os.DirEntry
	for name, n := range c.now {
		if name != dir && filepath.Dir(name) == dir {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: filepath.Base(name), size: int64(len(n.data)), dir: n.dir, mod: n.modTime}))
		}
	}
	slices.SortFunc(out, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// SyncDir makes the entries of dir as they are now durable.
func (c *crashFS) SyncDir(dir string) error {
	dir = clean(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.now[dir]; n == nil || !n.dir {
		return &os.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
	}
	if err := c.op(); err != nil {
		return &os.PathError{Op: "fsync", Path: dir, Err: err}
	}
	for name := range c.durable {
		if name != "/" && filepath.Dir(name) == dir && c.now[name] == nil {
			delete(c.durable, name)
		}
	}
	for name, n := range c.now {
		if name != "/" && filepath.Dir(name) == dir {
			c.durable[name] = n
		}
	}
	return nil
}

// memFile is an open file of a crashFS.
type memFile struct {
	fs     *crashFS
	node   *memNode
	name   string
	append bool
	pos    int
	closed bool
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if f.fs.crashed {
		return 0, errCrashed
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if err := f.fs.op(); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	n := f.node
	off := f.pos
	if f.append {
		off = len(n.data)
	}
	n.dirty = min(n.dirty, off)
	if end := off + len(p); end > len(n.data) {
		n.data = append(n.data, make([]byte, end-len(n.data))...)
	}
	copy(n.data[off:], p)
	f.pos = off + len(p)
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.op(); err != nil {
		return &os.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	n := f.node
	if int(size) < len(n.data) {
		n.data = n.data[:size]
		n.dirty = min(n.dirty, int(size))
	} else {
		n.dirty = min(n.dirty, len(n.data))
		n.data = append(n.data, make([]byte, int(size)-len(n.data))...)
	}
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, os.ErrClosed
	}
	return memInfo{name: filepath.Base(f.name), size: int64(len(f.node.data)), dir: f.node.dir, mod: f.node.modTime}, nil
}

// SyncData makes the node's current bytes durable.
func (f *memFile) SyncData() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.op(); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.name, Err: err}
	}
	n := f.node
	keep := min(n.dirty, len(n.synced), len(n.data))
	n.synced = append(n.synced[:keep], n.data[keep:]...)
	n.dirty = len(n.data)
	return nil
}

func (f *memFile) TryLock() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if f.node.locked != nil && f.node.locked != f {
		return ErrLocked
	}
	f.node.locked = f
	return nil
}

func (f *memFile) Unlock() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.node.locked == f {
		f.node.locked = nil
	}
	return nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.closed = true
	if f.node.locked == f {
		f.node.locked = nil
	}
	return nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() os.FileMode {
	if i.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
