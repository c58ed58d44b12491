package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/internal/provider"
	"octet.dev/host/runtime/internal/sysfile"
)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Now returns the current time for record timestamps and the header's
	// created_at. Nil means time.Now.
	Now func() time.Time
}

// Session is one open session file, holding its lock until Close.
//
// A Session is safe for use by one goroutine at a time; callers that share
// it must serialize their calls. Records and the helpers read the in-memory
// copy and keep working after Close.
type Session struct {
	id     string
	path   string
	f      *os.File // the session file, O_APPEND
	lock   *os.File // the flocked <name>.lock
	now    func() time.Time
	header Header
	recs   []Record

	size        int64 // end of the last good line: where the next line goes
	tornBytes   int64 // bytes of torn tail found at load
	tornPending bool  // the torn tail is still in the file
	failed      error // first write or sync error; no appends after it
	closed      bool
	buf         []byte // reused line buffer

	// Derived state, updated by observe.
	msgs      int // number of message records
	head      int // the head entry: see Head
	checkouts int // number of checkout records
	uncertain []UsageUncertainty
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
	if err := makeDir(dir); err != nil {
		return nil, fmt.Errorf("store: create session dir: %w", err)
	}
	path := filepath.Join(dir, name)
	lock, err := lockSession(path)
	if err != nil {
		return nil, err
	}
	s, err := load(dir, path, id, now)
	if err != nil {
		_ = unlockFile(lock)
		lock.Close()
		return nil, err
	}
	s.lock = lock
	s.removeSpools()
	return s, nil
}

// lockSession opens and flocks the lock file of the session file path.
func lockSession(path string) (*os.File, error) {
	lock, err := os.OpenFile(path+lockSuffix, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open lock: %w", err)
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return lock, nil
}

// makeDir creates dir with mode 0700 when it is missing, and then syncs its
// parent so that the new directory entry is durable too.
func makeDir(dir string) error {
	if _, err := os.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return sysfile.SyncDir(filepath.Dir(filepath.Clean(dir)))
}

// load opens or creates the session file; the caller holds the lock.
func load(dir, path, id string, now func() time.Time) (*Session, error) {
	const flags = os.O_RDWR | os.O_APPEND | unix.O_NOFOLLOW
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := create(dir, path, id, now(), nil); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, flags, 0)
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
	data := make([]byte, fi.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, fmt.Errorf("store: read session: %w", err)
	}
	l, err := parse(data[:n], path, id)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &Session{
		id:          id,
		path:        path,
		f:           f,
		now:         now,
		header:      l.header,
		recs:        l.recs,
		size:        l.good,
		tornBytes:   l.torn,
		tornPending: l.torn > 0,
	}
	for i, r := range s.recs {
		s.observe(i+1, r)
	}
	s.native.loaded()
	return s, nil
}

// create writes a new session file atomically: header and the encoded
// records body to <name>.tmp, sync, rename, sync the directory.
func create(dir, path, id string, createdAt time.Time, body []byte) error {
	line, err := appendHeader(nil, Header{SchemaVersion: SchemaVersion, ID: id, CreatedAt: createdAt.UTC()})
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	line = append(line, body...)
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	_, err = f.Write(line)
	if err == nil {
		err = syncData(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = sysfile.SyncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
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
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	if len(recs) == 0 {
		return nil
	}
	out := make([]Record, len(recs))
	buf := s.buf[:0]
	msgs := s.msgs
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
		n := len(s.recs) + i
		prior := func(e int) Body {
			if e <= len(s.recs) {
				return s.recs[e-1].Body
			}
			return out[e-1-len(s.recs)].Body
		}
		if err := validate(r, msgs, prior, n); err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrInvalidRecord, i, err)
		}
		if _, ok := r.Body.(Message); ok {
			msgs++
		}
		var err error
		if buf, err = appendRecord(buf, r); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		out[i] = r
	}
	if cap(buf) <= 1<<20 {
		s.buf = buf // keep a modest buffer for the next append
	}
	if err := s.write(buf); err != nil {
		s.failed = err
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	for _, r := range out {
		s.recs = append(s.recs, r)
		s.observe(len(s.recs), r)
	}
	return nil
}

// write drops a pending torn tail, then writes buf and syncs.
func (s *Session) write(buf []byte) error {
	if s.tornPending {
		if err := s.f.Truncate(s.size); err != nil {
			return fmt.Errorf("store: truncate torn tail: %w", err)
		}
		if err := syncData(s.f); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		s.tornPending = false
	}
	if _, err := s.f.Write(buf); err != nil {
		return fmt.Errorf("store: append: %w", err)
	}
	if err := syncData(s.f); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	s.size += int64(len(buf))
	return nil
}

// observe updates the derived state with record number n (1-based) that is
// now part of the session.
func (s *Session) observe(n int, r Record) {
	s.head = n
	switch b := r.Body.(type) {
	case Checkout:
		s.head = b.Entry
		s.checkouts++
	case Message:
		s.msgs++
		if b.Message.Role == provider.RoleDeveloper && b.Message.ReasoningEffort != "" {
			s.reasoningUpdate = b.Message.ReasoningEffort
		}
	case UsageUncertainty:
		s.uncertain = append(s.uncertain, b)
	case ReasoningChange:
		s.reasoning, s.reasoningUpdate, s.ultra = b.Effort, "", b.Ultra
	case NativeSteering:
		s.native.observe(b)
	case Unknown:
		s.unknown++
	}
}

// Close releases the lock and closes the file. Appends after Close return
// ErrClosed; closing again returns nil.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Close()
	if uerr := unlockFile(s.lock); uerr != nil {
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

// ID returns the session ID.
func (s *Session) ID() string { return s.id }

// Path returns the session file's path.
func (s *Session) Path() string { return s.path }

// Header returns the file's header.
func (s *Session) Header() Header { return s.header }

// Records returns the loaded and appended records in file order. The slice
// is a copy; the bodies share their contents with the Session and must not be
// modified.
func (s *Session) Records() []Record { return slices.Clone(s.recs) }

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
// NewTurn. The slice is new; the messages share their tool calls with the
// Session and must not be modified.
func (s *Session) Messages() []provider.Message { return s.MessagesFor("") }

// MessagesFor is Messages for a run on route: a native checkpoint
// (Compaction.Items) applies only when its Route is route, and stands for
// the history before it as one message carrying its items verbatim
// (provider.Message.NativeItems); on any other route the checkpoint is
// skipped, and the conversation continues from the checkpoint before it,
// or the whole raw history.
func (s *Session) MessagesFor(route string) []provider.Message {
	msgs, _ := s.conversation(s.branch(s.head), false, route)
	return msgs
}

// ConversationOrdinals returns, for each message of MessagesFor(route) that
// is a message record (every one but a checkpoint's), its ordinal among all
// message records of the file: the value a new Compaction's FirstKept takes
// to keep that message and the ones after it. Without a checkout and a
// checkpoint they are 0, 1, 2, …
func (s *Session) ConversationOrdinals(route string) []int {
	_, ords := s.conversation(s.branch(s.head), true, route)
	return ords
}

// branch returns the 0-based positions, in file order, of the records on
// the path from the session's start to entry head: each record continues
// the head it was appended at, and a checkout record sets the head without
// being on any path. It returns nil, meaning every record, when no checkout
// was ever recorded, which is the common case and costs nothing.
func (s *Session) branch(head int) []int {
	if s.checkouts == 0 && head == len(s.recs) {
		return nil
	}
	parent := make([]int, len(s.recs)+1) // parent[n]: the head record n continued
	h := 0
	for i := range s.recs {
		parent[i+1] = h
		if c, ok := s.recs[i].Body.(Checkout); ok {
			h = c.Entry // validated: an earlier entry, so the walk below ends
		} else {
			h = i + 1
		}
	}
	chain := []int{}
	for e := head; e > 0; e = parent[e] {
		chain = append(chain, e-1)
	}
	slices.Reverse(chain)
	return chain
}

// conversation builds the conversation of the records at positions chain
// (nil: all records) for route and, when ords, the file-wide ordinals of
// the message records it holds.
func (s *Session) conversation(chain []int, ords bool, route string) ([]provider.Message, []int) {
	var ordAt []int // ordAt[i]: message records before position i
	if chain != nil {
		ordAt = make([]int, len(s.recs))
		n := 0
		for i := range s.recs {
			ordAt[i] = n
			if _, ok := s.recs[i].Body.(Message); ok {
				n++
			}
		}
	}
	all := make([]provider.Message, 0, s.msgs)
	var allOrd []int
	var cp *Compaction
	prompt := "" // the run whose prompt is still to come
	visit := func(i int) {
		switch b := s.recs[i].Body.(type) {
		case RunStart:
			prompt = b.RunID
		case Message:
			m := b.Message
			if prompt != "" && b.RunID == prompt && m.Role == provider.RoleUser && b.Origin == "" {
				// The run's prompt: it begins a new user turn.
				m.NewTurn = true
				prompt = ""
			}
			all = append(all, m)
			if chain != nil {
				allOrd = append(allOrd, ordAt[i])
			}
		case Compaction:
			if b.applies(route) {
				cp = &b
			}
		}
	}
	if chain == nil {
		for i := range s.recs {
			visit(i)
		}
	} else {
		for _, i := range chain {
			visit(i)
		}
	}
	if chain == nil && ords {
		allOrd = make([]int, len(all))
		for i := range allOrd {
			allOrd[i] = i
		}
	}
	if cp == nil {
		return all, allOrd
	}
	// The first kept message: the branch's first message record whose
	// file-wide ordinal is FirstKept or later (without a checkout, simply
	// all[FirstKept:]).
	k := min(cp.FirstKept, len(all))
	if chain != nil {
		k, _ = slices.BinarySearch(allOrd, cp.FirstKept)
	}
	out := make([]provider.Message, 0, 1+len(all)-k)
	if cp.Items != nil {
		out = append(out, provider.Message{Role: provider.RoleUser, NativeItems: cp.Items})
	} else {
		out = append(out, provider.Message{Role: provider.RoleUser, Text: WrapSummary(cp.Summary)})
	}
	out = append(out, all[k:]...)
	if allOrd != nil {
		allOrd = allOrd[k:]
	}
	return out, allOrd
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
// order, abandoned branches included.
func (s *Session) Entries() []Entry {
	chain := s.branch(s.head)
	var on map[int]bool
	if chain != nil {
		on = make(map[int]bool, len(chain))
		for _, i := range chain {
			on[i] = true
		}
	}
	var out []Entry
	for i, r := range s.recs {
		if isEntry(r.Body) {
			out = append(out, Entry{ID: i + 1, Record: r, OnHead: chain == nil || on[i]})
		}
	}
	return out
}

// Checkout durably moves the head to entry: a message or compaction record
// (an Entries ID), or 0 for the start of the session. It appends a checkout
// record, unless entry already is the head, and returns after its sync; the
// conversation (Messages) then ends at entry, and later records continue it.
// Nothing is removed: the ledger and the uncertainty records stay as they
// were. An entry that is not a message or compaction record of the file is
// ErrNoEntry.
func (s *Session) Checkout(entry int) error {
	if entry < 0 || entry > len(s.recs) || (entry > 0 && !isEntry(s.recs[entry-1].Body)) {
		return fmt.Errorf("%w: %d (the session has %d records)", ErrNoEntry, entry, len(s.recs))
	}
	if entry == s.head {
		return nil
	}
	return s.Append(Record{Body: Checkout{Entry: entry}})
}

// ForkOrigin returns the session's fork record, when it is a fork.
func (s *Session) ForkOrigin() (Fork, bool) {
	if len(s.recs) > 0 {
		if f, ok := s.recs[0].Body.(Fork); ok {
			return f, true
		}
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
func (s *Session) RunEnds() []RunEnd {
	var out []RunEnd
	at := map[string]int{}
	for i := range s.recs {
		e, ok := s.recs[i].Body.(RunEnd)
		if !ok {
			continue
		}
		if j, seen := at[e.RunID]; seen {
			out[j] = e
			continue
		}
		at[e.RunID] = len(out)
		out = append(out, e)
	}
	return out
}

// LatestReasoning returns the effort of the latest reasoning_change record,
// "" when there is none.
func (s *Session) LatestReasoning() string { return s.reasoning }

// LatestCompaction returns the newest checkpoint that applies on route
// (see MessagesFor), if any.
func (s *Session) LatestCompaction(route string) (Compaction, bool) {
	recs := s.branch(s.head) // nil without a checkout: every record
	n := len(s.recs)
	if recs != nil {
		n = len(recs)
	}
	for j := n - 1; j >= 0; j-- {
		i := j
		if recs != nil {
			i = recs[j]
		}
		if c, ok := s.recs[i].Body.(Compaction); ok && c.applies(route) {
			return c, true
		}
	}
	return Compaction{}, false
}

// MessageCount returns the number of message records.
func (s *Session) MessageCount() int { return s.msgs }

// ContextUsage returns the usage of the newest model step (a usage record
// without an operation) recorded on the head's branch after its newest
// checkpoint, and how many message records follow it; ok is false when
// there is none (no step since the checkpoint: its usage would describe a
// context that no longer exists). A checkout moves the head before the
// newest step's context: its usage then describes a conversation that is
// no longer the head's, and ok is false until the next step.
func (s *Session) ContextUsage() (u provider.Usage, after int, ok bool) {
	if s.checkouts > 0 {
		if _, lastIsCheckout := s.recs[len(s.recs)-1].Body.(Checkout); lastIsCheckout {
			return provider.Usage{}, 0, false
		}
	}
	recs := s.branch(s.head) // nil without a checkout: every record
	n := len(s.recs)
	if recs != nil {
		n = len(recs)
	}
	after = 0
	for j := n - 1; j >= 0; j-- {
		i := j
		if recs != nil {
			i = recs[j]
		}
		switch b := s.recs[i].Body.(type) {
		case Message:
			after++
		case Compaction:
			return provider.Usage{}, 0, false
		case Usage:
			if b.Operation == "" {
				return b.Usage, after, true
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
