package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/provider"
)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Now returns the current time for record timestamps and the header's
	// created_at. Nil means time.Now.
	Now func() time.Time

	// fs is the file system of the session files; nil means the real one.
	// Only the tests set it (the crashable in-memory file system).
	fs fileSystem
}

// Session is one open session file, holding its lock until Close.
//
// A Session does not hold its records decoded: it keeps an index of them
// (see the package documentation) and the state derived from them, and
// reads records back from the file when a query needs them. A Session is
// safe for use by one goroutine at a time; callers that share it must
// serialize their calls.
type Session struct {
	id     string
	path   string
	fs     fileSystem  // where the session files are: osFS outside tests
	f      file        // the session file, O_APPEND
	src    io.ReaderAt // where records are read back from: f
	lock   file        // the flocked <name>.lock
	now    func() time.Time
	header Header

	size        int64 // end of the last good line: where the next line goes
	tornBytes   int64 // bytes of torn tail found at load
	tornPending bool  // the torn tail is still in the file
	failed      error // first write, sync or read-back error; no appends after it
	closed      bool
	buf         []byte  // reused line buffer
	offs        []int64 // reused: the offsets of an append's lines

	// The index: one slot per record, in file order.
	slots  []slot
	strs   []string         // interned strings of the slots; strs[0] is ""
	strAt  map[string]int32 // index of each string in strs
	msgPos []int32          // the position of each message record
	cps    []int32          // the positions of the compaction records

	// cache holds the bodies of the message and compaction records at
	// positions cacheLo.. that the latest conversation used or that were
	// appended since (nil elsewhere); len(cache) == len(slots)-cacheLo.
	cacheLo int
	cache   []Body

	// Derived state, updated by observe.
	head      int   // the head entry: see Head
	checkouts int   // number of checkout records
	prompt    int32 // in file order, the run whose prompt is still to come
	usages    []Usage
	uncertain []UsageUncertainty
	runEnds   []RunEnd
	runEndAt  map[string]int // index in runEnds of each run's end
	origin    *Fork
	reasoning string
	// reasoningUpdate is the latest reasoning update after the latest
	// reasoning_change, ultra whether that change was the Ultra mode's.
	reasoningUpdate string
	ultra           bool
	unknown         int
	native          nativeState
}

// Open opens the session id in dir, creating dir (mode 0700) and the session
// file (mode 0600) when absent. It takes an exclusive lock first; when another
// Session, in this or another process, holds it, Open returns an error
// wrapping ErrLocked.
//
// A new file is written with its header to a temporary file that is synced
// and renamed into place, and the directory is synced, so a crash never
// leaves a session file without a header. An existing file is loaded: see
// the package documentation for torn tails and corruption.
func Open(dir, id string, opts Options) (*Session, error) {
	name, err := FileName(id)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	fsys := opts.fs
	if fsys == nil {
		fsys = osFS{}
	}
	if err := makeDir(fsys, dir); err != nil {
		return nil, fmt.Errorf("store: create session dir: %w", err)
	}
	path := filepath.Join(dir, name)
	lock, err := lockSession(fsys, path)
	if err != nil {
		return nil, err
	}
	s, err := load(fsys, dir, path, id, now)
	if err != nil {
		_ = lock.Unlock()
		lock.Close()
		return nil, err
	}
	s.lock = lock
	s.removeSpools()
	return s, nil
}

// lockSession opens and flocks the lock file of the session file path.
func lockSession(fsys fileSystem, path string) (file, error) {
	lock, err := fsys.OpenFile(path+lockSuffix, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open lock: %w", err)
	}
	if err := lock.TryLock(); err != nil {
		lock.Close()
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return lock, nil
}

// makeDir creates dir with mode 0700 when it is missing, with its missing
// parents, and then syncs the parent of every directory it created, so
// that each new directory entry is durable too: syncing only dir's parent
// left a new parent's own entry (~/.octet of ~/.octet/sessions on a first
// run) unsynced, and a power loss could take the session created in it
// after Open and its appends had returned.
func makeDir(fsys fileSystem, dir string) error {
	dir = filepath.Clean(dir)
	if _, err := fsys.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	top := dir // the outermost missing directory
	for p := filepath.Dir(top); p != top; p = filepath.Dir(top) {
		if _, err := fsys.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			break // it exists (or MkdirAll reports why not)
		}
		top = p
	}
	if err := fsys.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
		if d == top {
			return nil
		}
	}
}

// load opens or creates the session file; the caller holds the lock.
func load(fsys fileSystem, dir, path, id string, now func() time.Time) (*Session, error) {
	const flags = os.O_RDWR | os.O_APPEND | unix.O_NOFOLLOW
	f, err := fsys.OpenFile(path, flags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := create(fsys, dir, path, id, now(), nil); err != nil {
			return nil, err
		}
		f, err = fsys.OpenFile(path, flags, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open session: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: stat session: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrCorrupt, path)
	}
	s := &Session{id: id, path: path, fs: fsys, f: f, now: now}
	// A file smaller than a chunk is read with a buffer of its size (a new
	// session is one header line), not a chunk's 1 MiB at every run start.
	chunk := int(min(int64(scanChunk), max(fi.Size()+1, 4<<10)))
	if err := s.loadFrom(f, runtime.GOMAXPROCS(0), chunk); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// loadFrom loads the session file from src, which later reads go to
// (scan).
func (s *Session) loadFrom(src io.ReaderAt, workers, chunk int) error {
	s.src = src
	if err := s.scan(src, workers, chunk); err != nil {
		return err
	}
	s.tornPending = s.tornBytes > 0
	s.cacheLo = len(s.slots)
	s.native.loaded()
	return nil
}

// create writes a new session file atomically: header and the encoded
// records body to <name>.tmp, sync, rename, sync the directory.
func create(fsys fileSystem, dir, path, id string, createdAt time.Time, body []byte) error {
	line, err := appendHeader(nil, Header{SchemaVersion: SchemaVersion, ID: id, CreatedAt: createdAt.UTC()})
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	line = append(line, body...)
	tmp := path + tmpSuffix
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	_, err = f.Write(line)
	if err == nil {
		err = f.SyncData()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// Append writes recs as one line each, in one write, then syncs the file;
// it returns nil only after the sync, which is the durability point. A
// record with a zero TS gets the current time; timestamps are stored in UTC.
// A torn tail found at load is truncated away (and synced) first, so the new
// records start on a line of their own.
//
// Each record is checked before anything is written; an invalid one fails
// the whole call with ErrInvalidRecord. A batch is not atomic across a
// crash: a crash before the sync returns may keep any prefix of its lines,
// the last of them possibly torn. After a write or sync error the Session
// fails for good (ErrFailed).
func (s *Session) Append(recs ...Record) error {
	if s.closed {
		return ErrClosed
	}
	if err := s.Err(); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	out := make([]Record, len(recs))
	offs := s.offs[:0]
	buf := s.buf[:0]
	msgs := len(s.msgPos)
	prior := func(e int) string {
		if e <= len(s.slots) {
			return s.typeAt(e)
		}
		return out[e-1-len(s.slots)].Type()
	}
	for i, r := range recs {
		if r.TS.IsZero() {
			r.TS = s.now()
		}
		r.TS = r.TS.UTC() // also drops the monotonic reading
		if _, ok := r.Body.(Unknown); ok {
			return fmt.Errorf("%w: record %d: cannot append an unknown record", ErrInvalidRecord, i)
		}
		if r.Body == nil {
			return fmt.Errorf("%w: record %d: nil body", ErrInvalidRecord, i)
		}
		if err := validate(r, msgs, prior, len(s.slots)+i); err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrInvalidRecord, i, err)
		}
		if _, ok := r.Body.(Message); ok {
			msgs++
		}
		offs = append(offs, s.size+int64(len(buf)))
		var err error
		if buf, err = appendRecord(buf, r); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		out[i] = r
	}
	if cap(buf) <= 1<<20 {
		s.buf = buf // keep a modest buffer for the next append
	}
	if cap(offs) <= 1<<10 {
		s.offs = offs
	}
	if err := s.write(buf); err != nil {
		s.failed = err
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	for i, r := range out {
		s.observe(offs[i], r)
		var b Body
		if isEntry(r.Body) {
			b = r.Body // the conversation's newest records stay in memory
		}
		s.cache = append(s.cache, b)
	}
	return nil
}

// write drops a pending torn tail, then writes buf and syncs.
func (s *Session) write(buf []byte) error {
	if s.tornPending {
		if err := s.f.Truncate(s.size); err != nil {
			return fmt.Errorf("store: truncate torn tail: %w", err)
		}
		if err := s.f.SyncData(); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		s.tornPending = false
	}
	if _, err := s.f.Write(buf); err != nil {
		return fmt.Errorf("store: append: %w", err)
	}
	if err := s.f.SyncData(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	s.size += int64(len(buf))
	return nil
}

// Close releases the lock and closes the file. Appends after Close return
// ErrClosed; closing again returns nil.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Close()
	if uerr := s.lock.Unlock(); uerr != nil {
		err = errors.Join(err, uerr)
	}
	if cerr := s.lock.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Err returns the error that failed the Session (it wraps ErrFailed: a
// write or sync error, or a record that could not be read back), or nil.
// Methods that cannot return an error (Messages, Records, Entries) return
// nil once the Session has failed; Err tells why.
func (s *Session) Err() error {
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	return nil
}

// ID returns the session ID.
func (s *Session) ID() string { return s.id }

// Path returns the session file's path.
func (s *Session) Path() string { return s.path }

// Header returns the file's header.
func (s *Session) Header() Header { return s.header }

// Records returns the loaded and appended records in file order, read
// back from the file. It decodes every record into memory at once, which
// no query of a run needs; after Close, or when the file cannot be read
// back, it returns nil (and the Session fails, see ErrFailed). The slice
// is new.
func (s *Session) Records() []Record {
	out, err := s.ReadRecords()
	if err != nil {
		return nil
	}
	return out
}

// ReadRecords is Records with the error.
func (s *Session) ReadRecords() ([]Record, error) {
	all := make([]int32, len(s.slots))
	for i := range all {
		all[i] = int32(i)
	}
	out := make([]Record, 0, len(all))
	if err := s.readRecords(all, func(_ int, r Record) { out = append(out, r) }); err != nil {
		s.readFailed(err)
		return nil, err
	}
	return out, nil
}

// TornTail reports whether loading found a torn last line and ignored it.
func (s *Session) TornTail() bool { return s.tornBytes > 0 }

// TornBytes returns the size of the torn tail found at load, 0 when none.
func (s *Session) TornBytes() int64 { return s.tornBytes }

// UnknownRecords returns how many records have a type this build does not
// know. They are kept in Records and ignored by the helpers.
func (s *Session) UnknownRecords() int { return s.unknown }

// HasUncertainUsage reports whether the session holds a usage_uncertainty
// record, or a native steering intent whose outcome is unknown (its
// successor may have been billed). The flag is sticky: nothing clears it,
// and it survives reopening and compaction (CONTRACT §12).
func (s *Session) HasUncertainUsage() bool {
	return len(s.uncertain) > 0 || len(s.native.unknown) > 0
}

// UsageUncertaintyRecords returns the session's usage_uncertainty records in
// order.
func (s *Session) UsageUncertaintyRecords() []UsageUncertainty {
	return slices.Clone(s.uncertain)
}

// UsageRecords returns the session's usage ledger: its usage records in
// file order, every branch's. The Session holds them in memory.
func (s *Session) UsageRecords() []Usage { return slices.Clone(s.usages) }

// RecordUsageUncertainty durably appends a usage_uncertainty record; it
// returns nil only after the record is synced, so a caller may then replace
// the failed attempt (CONTRACT §12). It records no tokens or cost and leaves
// the conversation unchanged.
func (s *Session) RecordUsageUncertainty(endpoint, model, operation string) error {
	return s.Append(Record{Body: UsageUncertainty{Endpoint: endpoint, Model: model, Operation: operation}})
}

// RunEnds returns how each ended run of the session ended, in the order the
// runs first ended: for a run with several run_end records (a later one
// corrects an earlier one), the latest.
func (s *Session) RunEnds() []RunEnd { return slices.Clone(s.runEnds) }

// LatestReasoning returns the effort of the latest reasoning_change record,
// "" when there is none.
func (s *Session) LatestReasoning() string { return s.reasoning }

// LatestCompaction returns the newest checkpoint that applies on route
// (see MessagesFor), if any. It is read back from the file unless the
// Session holds it (as it does the checkpoint of the conversation it built
// last); when that fails, ok is false and the Session fails (see
// ErrFailed).
func (s *Session) LatestCompaction(route string) (Compaction, bool) {
	v := s.view(route)
	if v.cp < 0 {
		return Compaction{}, false
	}
	b, err := s.body(v.cp)
	if err != nil {
		return Compaction{}, false
	}
	return b.(Compaction), true
}

// MessageCount returns the number of message records.
func (s *Session) MessageCount() int { return len(s.msgPos) }

// ContextUsage returns the usage of the newest model step (a usage record
// without an operation) recorded on the head's branch after its newest
// checkpoint, and how many message records follow it; ok is false when
// there is none (no step since the checkpoint: its usage would describe a
// context that no longer exists). A checkout moves the head before the
// newest step's context: its usage then describes a conversation that is
// no longer the head's, and ok is false until the next step.
func (s *Session) ContextUsage() (u provider.Usage, after int, ok bool) {
	if s.checkouts > 0 && s.slots[len(s.slots)-1].kind == kindCheckout {
		return provider.Usage{}, 0, false
	}
	chain := s.branch(s.head) // nil without a checkout: every record
	n := len(s.slots)
	if chain != nil {
		n = len(chain)
	}
	for j := n - 1; j >= 0; j-- {
		i := j
		if chain != nil {
			i = chain[j]
		}
		switch sl := &s.slots[i]; sl.kind {
		case kindMessage:
			after++
		case kindCompaction:
			return provider.Usage{}, 0, false
		case kindUsage:
			if b := &s.usages[sl.aux]; b.Operation == "" {
				return b.Usage.Provider(), after, true
			}
		}
	}
	return provider.Usage{}, 0, false
}

// ReasoningUpdate returns the effort of the latest reasoning update after
// the latest reasoning_change record, "" when there is none: the effort in
// effect is then the baseline, LatestReasoning.
func (s *Session) ReasoningUpdate() string { return s.reasoningUpdate }

// ReasoningUltra reports whether the latest reasoning_change record was
// made by the Ultra mode.
func (s *Session) ReasoningUltra() bool { return s.ultra }
