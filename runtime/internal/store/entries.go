package store

import "fmt"

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
