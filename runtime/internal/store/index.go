package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The index. A Session keeps one slot per record instead of the decoded
// record: where its line is, its kind, and the little the conversation,
// the branches and the checks need. The records themselves are read back
// from the file when asked for (readLines).

// kind is a record's type in the index.
type kind uint8

const (
	kindUnknown kind = iota
	kindMessage
	kindModelChange
	kindUsage
	kindUncertainty
	kindReasoning
	kindCompaction
	kindRunStart
	kindRunEnd
	kindCheckout
	kindFork
	kindNative
)

// kindTypes maps a kind to its record type; kindUnknown's is the slot's
// interned type.
var kindTypes = [...]string{
	kindMessage:     TypeMessage,
	kindModelChange: TypeModelChange,
	kindUsage:       TypeUsage,
	kindUncertainty: TypeUsageUncertainty,
	kindReasoning:   TypeReasoningChange,
	kindCompaction:  TypeCompaction,
	kindRunStart:    TypeRunStart,
	kindRunEnd:      TypeRunEnd,
	kindCheckout:    TypeCheckout,
	kindFork:        TypeFork,
	kindNative:      TypeNativeSteering,
}

func kindOf(b Body) kind {
	switch b.(type) {
	case Message:
		return kindMessage
	case ModelChange:
		return kindModelChange
	case Usage:
		return kindUsage
	case UsageUncertainty:
		return kindUncertainty
	case ReasoningChange:
		return kindReasoning
	case Compaction:
		return kindCompaction
	case RunStart:
		return kindRunStart
	case RunEnd:
		return kindRunEnd
	case Checkout:
		return kindCheckout
	case Fork:
		return kindFork
	case NativeSteering:
		return kindNative
	}
	return kindUnknown
}

// Slot flags.
const (
	// flagPrompt marks a user message without an origin: its run's
	// prompt when the run's start precedes it on the branch with no
	// prompt in between.
	flagPrompt uint8 = 1 << iota
	// flagTurn marks the messages that are prompts in file order: the
	// NewTurn of a session without a checkout.
	flagTurn
	// flagNative marks a native checkpoint, which applies only on its
	// route (str).
	flagNative
)

// slot is one record in the index.
type slot struct {
	off int64 // offset of the record's line in the file
	ord int32 // message records before this one
	// aux is a checkout's entry, a checkpoint's first_kept, or a usage
	// record's index in Session.usages.
	aux int32
	// str is the interned run ID of a message or run start, the route of
	// a native checkpoint, or the type of an unknown record.
	str  int32
	kind kind
	flag uint8
}

// intern returns the number of v in the session's string table; "" is 0.
func (s *Session) intern(v string) int32 {
	if v == "" {
		return 0
	}
	if n, ok := s.strAt[v]; ok {
		return n
	}
	if s.strAt == nil {
		s.strAt = map[string]int32{}
		s.strs = []string{""}
	}
	n := int32(len(s.strs))
	s.strs = append(s.strs, v)
	s.strAt[v] = n
	return n
}

// typeAt returns the type of record entry (1-based).
func (s *Session) typeAt(entry int) string {
	sl := &s.slots[entry-1]
	if sl.kind == kindUnknown {
		return s.strs[sl.str]
	}
	return kindTypes[sl.kind]
}

// observe adds r, whose line starts at off, to the index and the derived
// state.
func (s *Session) observe(off int64, r Record) {
	i := len(s.slots)
	sl := slot{off: off, ord: int32(len(s.msgPos)), kind: kindOf(r.Body)}
	s.head = i + 1
	switch b := r.Body.(type) {
	case Checkout:
		s.head = b.Entry
		s.checkouts++
		sl.aux = int32(b.Entry)
	case Message:
		sl.str = s.intern(b.RunID)
		if b.Message.Role == RoleUser && b.Origin == "" {
			sl.flag |= flagPrompt
			if s.prompt != 0 && sl.str == s.prompt {
				sl.flag |= flagTurn
				s.prompt = 0
			}
		}
		s.msgPos = append(s.msgPos, int32(i))
		if b.Message.Role == RoleDeveloper && b.Message.ReasoningEffort != "" {
			s.reasoningUpdate = b.Message.ReasoningEffort
		}
	case RunStart:
		sl.str = s.intern(b.RunID)
		s.prompt = sl.str
	case Compaction:
		sl.aux = int32(b.FirstKept)
		if b.Items != nil {
			sl.flag |= flagNative
			sl.str = s.intern(b.Route)
		}
		s.cps = append(s.cps, int32(i))
	case Usage:
		sl.aux = int32(len(s.usages))
		s.usages = append(s.usages, b)
	case UsageUncertainty:
		s.uncertain = append(s.uncertain, b)
	case ReasoningChange:
		s.reasoning, s.reasoningUpdate, s.ultra = b.Effort, "", b.Ultra
	case NativeSteering:
		s.native.observe(b)
	case RunEnd:
		if j, seen := s.runEndAt[b.RunID]; seen {
			s.runEnds[j] = b
		} else {
			if s.runEndAt == nil {
				s.runEndAt = map[string]int{}
			}
			s.runEndAt[b.RunID] = len(s.runEnds)
			s.runEnds = append(s.runEnds, b)
		}
	case Fork:
		if i == 0 {
			s.origin = &b
		}
	case Unknown:
		s.unknown++
		sl.str = s.intern(b.Type)
	}
	s.slots = append(s.slots, sl)
}

// applies reports whether checkpoint slot sl applies on route (see
// Compaction.applies).
func (s *Session) applies(sl *slot, route string) bool {
	return sl.flag&flagNative == 0 || (route != "" && s.strs[sl.str] == route)
}

// lineSpan returns the offsets of record i's line: its first byte and its
// newline.
func (s *Session) lineSpan(i int) (start, nl int64) {
	if i+1 < len(s.slots) {
		return s.slots[i].off, s.slots[i+1].off - 1
	}
	return s.slots[i].off, s.size - 1
}

// Reading back. readLines reads the lines of records from the file with
// positioned reads, in spans of up to readSpan bytes that join records
// less than readGap bytes apart, so that memory stays bounded by the
// larger of readSpan and the longest line.
const (
	readSpan = 1 << 20
	readGap  = 64 << 10
)

// errReadBack wraps the failures to read back a record the Session loaded.
var errReadBack = errors.New("store: read session")

// readLines calls fn with the line (without its newline) of each record
// of positions, which are 0-based and ascending. The line is only valid
// during the call.
func (s *Session) readLines(positions []int32, fn func(i int, line []byte) error) error {
	var buf []byte
	for j := 0; j < len(positions); {
		start, end := s.lineSpan(int(positions[j]))
		k := j + 1
		for ; k < len(positions); k++ {
			st, nl := s.lineSpan(int(positions[k]))
			if st-end > readGap || nl+1-start > readSpan {
				break
			}
			end = nl
		}
		n := end + 1 - start
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := s.src.ReadAt(b, start); err != nil {
			return fmt.Errorf("%w: %s: %w", errReadBack, s.path, err)
		}
		for ; j < k; j++ {
			i := int(positions[j])
			st, nl := s.lineSpan(i)
			if b[nl-start] != '\n' {
				return fmt.Errorf("%w: %s: record %d is not where it was loaded from", errReadBack, s.path, i+1)
			}
			if err := fn(i, b[st-start:nl-start]); err != nil {
				return err
			}
		}
	}
	return nil
}

// readRecords reads back and decodes the records at positions (0-based,
// ascending), calling fn with each.
func (s *Session) readRecords(positions []int32, fn func(i int, r Record)) error {
	return s.readLines(positions, func(i int, line []byte) error {
		r, err := decodeRecord(line)
		if err == nil && kindOf(r.Body) != s.slots[i].kind {
			err = fmt.Errorf("a %s record, loaded as %s", r.Type(), s.typeAt(i+1))
		}
		if err != nil {
			return fmt.Errorf("%w: %s: record %d changed since it was loaded: %v", errReadBack, s.path, i+1, err)
		}
		fn(i, r)
		return nil
	})
}

// readFailed records a failure to read back: the Session fails (see
// ErrFailed) as after a write error.
func (s *Session) readFailed(err error) {
	if s.failed == nil && !s.closed {
		s.failed = err
	}
}

// Loading.

// scanChunk is the size of the reads that load a session file.
const scanChunk = 1 << 20

// parallelMinLines is the number of lines of a chunk from which the loader
// decodes them on several goroutines; below it the goroutines cost more
// than they save.
const parallelMinLines = 512

// lineReader reads a file forward through a bounded buffer.
type lineReader struct {
	src  io.ReaderAt
	buf  []byte // buf[:len] holds the file's bytes from offset base
	base int64
	eof  bool
}

// more drops buf[:keep] and reads at least one more byte into the buffer,
// unless at the end of the file; a buffer full of kept bytes doubles.
func (r *lineReader) more(keep int) error {
	n := copy(r.buf[:cap(r.buf)], r.buf[keep:])
	r.base += int64(keep)
	if n == cap(r.buf) {
		nb := make([]byte, n, 2*n)
		copy(nb, r.buf[:n])
		r.buf = nb
	}
	r.buf = r.buf[:n]
	for !r.eof && len(r.buf) == n {
		m, err := r.src.ReadAt(r.buf[n:cap(r.buf)], r.base+int64(n))
		r.buf = r.buf[:n+m]
		switch {
		case err == io.EOF:
			r.eof = true
		case err != nil:
			return err
		}
	}
	return nil
}

// span is one line of a buffer, without its newline.
type span struct{ start, end int }

// scan loads the session file from src into s: the header, then every
// record, checked and added to the index. A last line without '\n', or a
// last line that does not decode or validate, is a torn tail: it is
// reported (tornBytes), not loaded. Anything invalid before the last line
// is an error wrapping ErrCorrupt with its line number; a header of
// another schema version wraps ErrUnsupportedSchema. Chunks of the file
// decode on up to workers goroutines; the result does not depend on
// workers or chunk.
func (s *Session) scan(src io.ReaderAt, workers, chunk int) error {
	corrupt := func(line int, err error) error {
		return &CorruptError{Path: s.path, Line: line, Err: err}
	}
	ioErr := func(err error) error { return fmt.Errorf("store: read session: %w", err) }
	r := &lineReader{src: src, buf: make([]byte, 0, max(chunk, 1))}
	if err := r.more(0); err != nil {
		return ioErr(err)
	}
	nl := bytes.IndexByte(r.buf, '\n')
	for nl < 0 && !r.eof {
		if err := r.more(0); err != nil {
			return ioErr(err)
		}
		nl = bytes.IndexByte(r.buf, '\n')
	}
	if len(r.buf) == 0 {
		return corrupt(1, errors.New("empty file, no header"))
	}
	if nl < 0 {
		return corrupt(1, errors.New("header line has no newline"))
	}
	h, err := decodeHeader(r.buf[:nl], s.id)
	if errors.Is(err, ErrUnsupportedSchema) {
		if s.path != "" {
			return fmt.Errorf("%w: %s", err, s.path)
		}
		return err
	}
	if err != nil {
		return corrupt(1, err)
	}
	s.header = h

	pos := nl + 1 // the next line's first byte in r.buf
	var lines []span
	var recs []Record
	for {
		lines = lines[:0]
		for p := pos; ; {
			i := bytes.IndexByte(r.buf[p:], '\n')
			if i < 0 {
				break
			}
			lines = append(lines, span{p, p + i})
			p += i + 1
		}
		if len(lines) == 0 {
			if r.eof {
				break
			}
			if err := r.more(pos); err != nil {
				return ioErr(err)
			}
			pos = 0
			continue
		}
		if cap(recs) < len(lines) {
			recs = make([]Record, len(lines))
		}
		recs = recs[:len(lines)]
		bad, badErr := decodeBatch(r.buf, lines, recs, workers)
		for i, ln := range lines {
			err := badErr
			if i < bad {
				err = validate(recs[i], len(s.msgPos), s.typeAt, len(s.slots))
			}
			if err == nil {
				s.observe(r.base+int64(ln.start), recs[i])
				continue
			}
			// The first bad line: a torn tail when nothing follows it,
			// else corruption.
			last := ln.end+1 == len(r.buf)
			if last && !r.eof {
				pos = ln.start
				if err := r.more(pos); err != nil {
					return ioErr(err)
				}
				last = ln.end+1-pos == len(r.buf) && r.eof
				pos, ln = 0, span{0, ln.end - pos}
			}
			if !last {
				return corrupt(len(s.slots)+2, err) // +1 for the header, +1 for 1-based
			}
			s.size = r.base + int64(ln.start)
			s.tornBytes = int64(ln.end + 1 - ln.start)
			return nil
		}
		clear(recs)
		pos = lines[len(lines)-1].end + 1
		if r.eof {
			break
		}
		if err := r.more(pos); err != nil {
			return ioErr(err)
		}
		pos = 0
	}
	// What follows the last '\n' is a torn tail.
	s.size = r.base + int64(pos)
	s.tornBytes = int64(len(r.buf) - pos)
	return nil
}

// decodeBatch skims each line into recs. It returns the index of the
// first line that fails to decode, with its error, or len(lines) and nil.
// With workers > 1 and enough lines, contiguous parts decode on their own
// goroutines, all finished before it returns.
func decodeBatch(buf []byte, lines []span, recs []Record, workers int) (int, error) {
	decodePart := func(lo, hi int) (int, error) {
		for i := lo; i < hi; i++ {
			r, err := decodeSkim(buf[lines[i].start:lines[i].end])
			if err != nil {
				return i, err
			}
			recs[i] = r
		}
		return hi, nil
	}
	workers = min(workers, len(lines)/(parallelMinLines/2))
	if workers <= 1 || len(lines) < parallelMinLines {
		return decodePart(0, len(lines))
	}
	type result struct {
		bad int
		err error
	}
	results := make([]result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(lines)/workers, (w+1)*len(lines)/workers
		wg.Go(func() {
			bad, err := decodePart(lo, hi)
			results[w] = result{bad, err}
		})
	}
	wg.Wait()
	for _, r := range results { // parts are in line order
		if r.err != nil {
			return r.bad, r.err
		}
	}
	return len(lines), nil
}
