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

// Messages returns the conversation that ends at the head (Head): the
// message records on the head's branch in order, or, after a compaction
// checkpoint on that branch, the latest such checkpoint (WrapSummary of its
// summary, as a user message) followed by the branch's message records from
// its FirstKept on (including those appended after the checkpoint). Without
// a checkout the branch is the whole file. A run's prompt (the first user
// message the run recorded after its run_start, not a queued one) is marked
// NewTurn. The slice is new, and so are the messages' slices (they are
// converted from the records' MessageV1 on every call); their strings are
// shared with the Session. It reads back the records it does not
// hold (see Conversation); when that fails it returns nil.
func (s *Session) Messages() []provider.Message { return s.MessagesFor("") }

// MessagesFor is Messages for a run on route: a native checkpoint
// (Compaction.Items) applies only when its Route is route, and stands for
// the history before it as one message carrying its items verbatim
// (provider.Message.NativeItems); on any other route the checkpoint is
// skipped, and the conversation continues from the checkpoint before it,
// or the whole raw history. When the records cannot be read back it
// returns nil; Conversation reports why.
func (s *Session) MessagesFor(route string) []provider.Message {
	msgs, _ := s.Conversation(route)
	return msgs
}

// Conversation is MessagesFor with the error of reading back the records
// it needs. The Session holds the conversation it built last (and the
// message and compaction records appended since) in memory and reads the
// rest from the file; on a read error (the file was changed behind the
// lock, an I/O error, or the Session is closed) the Session fails (see
// ErrFailed).
func (s *Session) Conversation(route string) ([]provider.Message, error) {
	v := s.view(route)
	if err := s.hold(v); err != nil {
		s.readFailed(err)
		return nil, err
	}
	out := make([]provider.Message, 0, 1+len(v.pos))
	if v.cp >= 0 {
		cp := s.cache[v.cp-s.cacheLo].(Compaction)
		if cp.Items != nil {
			out = append(out, provider.Message{Role: provider.RoleUser, NativeItems: cp.Items})
		} else {
			out = append(out, provider.Message{Role: provider.RoleUser, Text: WrapSummary(cp.Summary)})
		}
	}
	// The records hold their messages in the record form; each call
	// converts them anew, with a few allocations whatever their number.
	var sl slabs
	for _, p := range v.pos {
		rec := s.cache[int(p)-s.cacheLo].(Message)
		sl.reserve(&rec.Message)
	}
	sl.alloc()
	for j, p := range v.pos {
		rec := s.cache[int(p)-s.cacheLo].(Message)
		m := sl.message(&rec.Message)
		if v.turn(s, j) {
			m.NewTurn = true // the run's prompt: it begins a new user turn
		}
		out = append(out, m)
	}
	return out, nil
}

// HasConversation reports whether Messages is not empty, without reading
// any record.
func (s *Session) HasConversation() bool {
	v := s.view("")
	return v.cp >= 0 || len(v.pos) > 0
}

// ConversationOrdinals returns, for each message of MessagesFor(route) that
// is a message record (every one but a checkpoint's), its ordinal among all
// message records of the file: the value a new Compaction's FirstKept takes
// to keep that message and the ones after it. Without a checkout and a
// checkpoint they are 0, 1, 2, … It reads no record.
func (s *Session) ConversationOrdinals(route string) []int {
	v := s.view(route)
	if v.chain != nil {
		return v.ords
	}
	ords := make([]int, len(v.pos))
	for j := range ords {
		ords[j] = v.first + j
	}
	return ords
}

// branch returns the 0-based positions, in file order, of the records on
// the path from the session's start to entry head: each record continues
// the head it was appended at, and a checkout record sets the head without
// being on any path. It returns nil, meaning every record, when no checkout
// was ever recorded, which is the common case and costs nothing.
func (s *Session) branch(head int) []int {
	if s.checkouts == 0 && head == len(s.slots) {
		return nil
	}
	parent := make([]int32, len(s.slots)+1) // parent[n]: the head record n continued
	h := int32(0)
	for i := range s.slots {
		parent[i+1] = h
		if s.slots[i].kind == kindCheckout {
			h = s.slots[i].aux // validated: an earlier entry, so the walk below ends
		} else {
			h = int32(i + 1)
		}
	}
	chain := []int{}
	for e := int32(head); e > 0; e = parent[e] {
		chain = append(chain, int(e-1))
	}
	slices.Reverse(chain)
	return chain
}

// view is the shape of the conversation at the head for a route, found in
// the index: which records make it up.
type view struct {
	chain []int // the head's branch; nil: every record (no checkout)
	cp    int   // the position of the checkpoint it starts from, -1 none
	// pos are the positions of the message records it holds, in order.
	pos []int32
	// first is, without a checkout, the ordinal of pos[0] (the
	// checkpoint's first_kept); with one, ords are the ordinals of pos
	// and turns which of them are their run's prompt.
	first int
	ords  []int
	turns []bool
}

// turn reports whether the conversation's message j is its run's prompt.
func (v *view) turn(s *Session, j int) bool {
	if v.chain == nil {
		return s.slots[v.pos[j]].flag&flagTurn != 0
	}
	return v.turns[j]
}

// view computes the conversation at the head for route.
func (s *Session) view(route string) view {
	v := view{chain: s.branch(s.head), cp: -1}
	if v.chain == nil {
		for j := len(s.cps) - 1; j >= 0; j-- {
			if s.applies(&s.slots[s.cps[j]], route) {
				v.cp = int(s.cps[j])
				break
			}
		}
		if v.cp >= 0 {
			v.first = min(int(s.slots[v.cp].aux), len(s.msgPos))
		}
		v.pos = s.msgPos[v.first:]
		return v
	}
	n := 0
	for _, i := range v.chain {
		if s.slots[i].kind == kindMessage {
			n++
		}
	}
	if n > 0 {
		v.pos, v.ords, v.turns = make([]int32, 0, n), make([]int, 0, n), make([]bool, 0, n)
	}
	prompt := int32(0) // the run whose prompt is still to come
	for _, i := range v.chain {
		sl := &s.slots[i]
		switch sl.kind {
		case kindRunStart:
			prompt = sl.str
		case kindMessage:
			turn := prompt != 0 && sl.str == prompt && sl.flag&flagPrompt != 0
			if turn {
				prompt = 0
			}
			v.pos = append(v.pos, int32(i))
			v.ords = append(v.ords, int(sl.ord))
			v.turns = append(v.turns, turn)
		case kindCompaction:
			if s.applies(sl, route) {
				v.cp = i
			}
		}
	}
	if v.cp >= 0 {
		// The first kept message: the branch's first message record whose
		// file-wide ordinal is first_kept or later.
		k, _ := slices.BinarySearch(v.ords, int(s.slots[v.cp].aux))
		v.pos, v.turns = v.pos[k:], v.turns[k:]
		if v.ords != nil {
			v.ords = v.ords[k:]
		}
	}
	return v
}

// hold makes the cache hold exactly the bodies the conversation v needs,
// reading back the missing ones.
func (s *Session) hold(v view) error {
	n := len(s.slots)
	lo := n
	if len(v.pos) > 0 {
		lo = int(v.pos[0])
	}
	if v.cp >= 0 {
		lo = min(lo, v.cp)
	}
	s.moveCache(lo)
	// Drop the bodies v does not use: other checkpoints, and with a
	// checkout the records of other branches.
	if v.chain == nil {
		for j := len(s.cps) - 1; j >= 0 && int(s.cps[j]) >= lo; j-- {
			if c := int(s.cps[j]); c != v.cp {
				s.cache[c-lo] = nil
			}
		}
	} else {
		j := 0
		for i := lo; i < n; i++ {
			for j < len(v.pos) && int(v.pos[j]) < i {
				j++
			}
			if i != v.cp && (j == len(v.pos) || int(v.pos[j]) != i) {
				s.cache[i-lo] = nil
			}
		}
	}
	var missing []int32
	if v.cp >= 0 && s.cache[v.cp-lo] == nil {
		missing = append(missing, int32(v.cp))
	}
	for _, p := range v.pos {
		if s.cache[int(p)-lo] == nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing) // the checkpoint may come after kept messages
	return s.readRecords(missing, func(i int, r Record) { s.cache[i-lo] = r.Body })
}

// moveCache makes the cache start at position lo.
func (s *Session) moveCache(lo int) {
	n := len(s.slots)
	switch {
	case lo > s.cacheLo:
		d := lo - s.cacheLo
		clear(s.cache[:d])
		s.cache = s.cache[d:]
		if cap(s.cache) > 2*len(s.cache)+64 {
			s.cache = slices.Clone(s.cache) // let the larger array go
		}
	case lo < s.cacheLo:
		c := make([]Body, n-lo)
		copy(c[s.cacheLo-lo:], s.cache)
		s.cache = c
	}
	s.cacheLo = lo
}

// body returns the body of record i, from the cache or read back.
func (s *Session) body(i int) (Body, error) {
	if i >= s.cacheLo && s.cache[i-s.cacheLo] != nil {
		return s.cache[i-s.cacheLo], nil
	}
	var b Body
	err := s.readRecords([]int32{int32(i)}, func(_ int, r Record) { b = r.Body })
	if err != nil {
		s.readFailed(err)
		return nil, err
	}
	return b, nil
}

// Head returns the head entry: the record the conversation ends at and the
// next record continues. It is the last record's number (1-based, in file
// order), or, after a checkout with nothing appended since, the checked-out
// entry; 0 is the start of an empty session.
func (s *Session) Head() int { return s.head }

// Entry is one message or compaction record of the file: what a checkout
// may target.
type Entry struct {
	// ID is the record's 1-based sequence number in the file (the header
	// is not counted): stable, since the file only grows.
	ID int
	// Record is the message or compaction record.
	Record Record
	// OnHead reports whether the entry is on the head's branch: the path
	// from the session's start to the head (a message a checkpoint on that
	// path summarized is on it too).
	OnHead bool
}

// Entries returns the file's message and compaction records, in file
// order, abandoned branches included, read back from the file. After
// Close, or when the file cannot be read back, it returns nil (and the
// Session fails, see ErrFailed).
func (s *Session) Entries() []Entry {
	out, err := s.ReadEntries()
	if err != nil {
		return nil
	}
	return out
}

// ReadEntries is Entries with the error.
func (s *Session) ReadEntries() ([]Entry, error) {
	chain := s.branch(s.head)
	var on []bool
	if chain != nil {
		on = make([]bool, len(s.slots))
		for _, i := range chain {
			on[i] = true
		}
	}
	var pos []int32
	for i := range s.slots {
		if k := s.slots[i].kind; k == kindMessage || k == kindCompaction {
			pos = append(pos, int32(i))
		}
	}
	var out []Entry
	err := s.readRecords(pos, func(i int, r Record) {
		out = append(out, Entry{ID: i + 1, Record: r, OnHead: chain == nil || on[i]})
	})
	if err != nil {
		s.readFailed(err)
		return nil, err
	}
	return out, nil
}

// Checkout durably moves the head to entry: a message or compaction record
// (an Entries ID), or 0 for the start of the session. It appends a checkout
// record, unless entry already is the head, and returns after its sync; the
// conversation (Messages) then ends at entry, and later records continue it.
// Nothing is removed: the ledger and the uncertainty records stay as they
// were. An entry that is not a message or compaction record of the file is
// ErrNoEntry.
func (s *Session) Checkout(entry int) error {
	if entry < 0 || entry > len(s.slots) || (entry > 0 && !isEntryType(s.typeAt(entry))) {
		return fmt.Errorf("%w: %d (the session has %d records)", ErrNoEntry, entry, len(s.slots))
	}
	if entry == s.head {
		return nil
	}
	return s.Append(Record{Body: Checkout{Entry: entry}})
}

// ForkOrigin returns the session's fork record, when it is a fork.
func (s *Session) ForkOrigin() (Fork, bool) {
	if s.origin != nil {
		return *s.origin, true
	}
	return Fork{}, false
}

// applies reports whether the checkpoint applies on route.
func (c *Compaction) applies(route string) bool {
	return c.Items == nil || (route != "" && c.Route == route)
}

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
