package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"octet.dev/host/runtime/internal/store"
)

// Session inspection errors.
var (
	// ErrNoSessionEntry: a checkout target that is neither 0 nor the ID of
	// one of the session's entries.
	ErrNoSessionEntry = store.ErrNoEntry
	// ErrSessionExists: a fork onto a session ID that already has a file.
	ErrSessionExists = store.ErrExists
)

// Entry kinds.
const (
	EntryMessage    = "message"    // a conversation message
	EntryCompaction = "compaction" // a compaction checkpoint (its summary)
)

// entryTextRunes bounds SessionEntry.Text.
const entryTextRunes = 80

// SessionEntry is one entry of a session: a message or a compaction
// checkpoint, what Checkout may target.
type SessionEntry struct {
	// ID is the entry's record sequence number in the session file
	// (1-based, the header not counted). The file only grows, so an ID
	// stays valid for good, across resumes and checkouts; a fork numbers
	// its own records from 1.
	ID int
	// Kind is EntryMessage or EntryCompaction.
	Kind string
	// Role is the message's role (user, assistant, tool); "" for a
	// compaction.
	Role string
	// RunID is the run that recorded the message; "" for seeded history.
	RunID string
	// Origin is "steering" or "follow_up" for a queued user message.
	Origin string
	// Text is the start of the message's text (or the checkpoint's
	// summary) on one line, at most 80 characters with "…" when cut.
	Text string
	// ToolCalls names the tool calls of an assistant message, in order;
	// for a tool result, ToolCalls holds the one tool it answers.
	ToolCalls []string
	// Time is when the record was appended.
	Time time.Time
	// OnHead reports whether the entry is on the path from the session's
	// start to its head, that is, part of the history the next run
	// continues (possibly summarized by a checkpoint on that path).
	// Entries of a branch a checkout left behind are not, and stay valid
	// checkout targets.
	OnHead bool
}

// Entries lists the session's entries in file order, abandoned branches
// included, for an application to pick a checkout target.
func (s *Session) Entries() []SessionEntry {
	es := s.s.Entries()
	out := make([]SessionEntry, 0, len(es))
	for _, e := range es {
		se := SessionEntry{ID: e.ID, Time: e.Record.TS, OnHead: e.OnHead}
		switch b := e.Record.Body.(type) {
		case store.Message:
			se.Kind, se.Role, se.RunID, se.Origin = EntryMessage, string(b.Message.Role), b.RunID, b.Origin
			se.Text = shortText(b.Message.Text)
			for _, c := range b.Message.ToolCalls {
				se.ToolCalls = append(se.ToolCalls, c.Name)
			}
			if b.Message.ToolName != "" {
				se.ToolCalls = []string{b.Message.ToolName}
			}
		case store.Compaction:
			se.Kind, se.Text = EntryCompaction, shortText(b.Summary)
		}
		out = append(out, se)
	}
	return out
}

// shortText is the first entryTextRunes characters of s, whitespace runs
// (newlines included) folded to one space, with "…" after a cut. It reads
// no further than it keeps.
func shortText(s string) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = n > 0
			continue
		}
		need := 1
		if space {
			need++
		}
		if n+need > entryTextRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r) // invalid UTF-8 comes as U+FFFD
		n += need
	}
	return b.String()
}

// Head returns the session's head entry: the entry the next run's history
// ends at before its prompt. It is the last record's sequence number, or
// the checked-out entry until something is appended; 0 is the start.
func (s *Session) Head() int { return s.s.Head() }

// Checkout durably moves the session's head back to entryID, an entry of
// Entries (any branch) or 0 for the session's start: a checkout record is
// appended and synced before it returns. The next run's history is the
// conversation that ended at that entry (Messages), followed by its
// prompt; the records of the branch left behind stay in the file. The
// usage ledger (Statistics) and the sticky usage uncertainty are
// untouched: a checkout changes the history, not what was spent, and the
// flag survives it as it survives resume and compaction. Checking out the
// current head records nothing. An unknown entry is ErrNoSessionEntry.
func (s *Session) Checkout(entryID int) error {
	return s.s.Checkout(entryID)
}

// Fork starts the session newID in this session's directory from its
// current head, and returns it open, holding its own lock (this session
// stays open and unchanged). The fork's history is this session's
// conversation up to the head (after a compaction: the checkpoint's
// summary and the messages it kept), its reasoning selection is this
// session's, and its media are copied beside it; its first record names
// this session and the head entry (ForkedFrom). Its accounting is
// independent: its ledger starts at zero, and it starts with certain usage,
// since none of this session's uncertain calls is counted in it (the
// parent keeps its own flag). An ID that has a session file is
// ErrSessionExists; this session's ID is refused the same way.
func (s *Session) Fork(newID string) (*Session, error) {
	if err := store.ValidateID(newID); err != nil {
		return nil, fmt.Errorf("runtime: fork: %w", err)
	}
	f, err := s.s.Fork(newID)
	if err != nil {
		if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("runtime: fork %s: %w", newID, err)
	}
	return &Session{s: f}, nil
}

// ForkedFrom returns the parent session's ID and the parent's head entry a
// forked session started from; ok is false for a session that is no fork.
func (s *Session) ForkedFrom() (parentID string, parentEntry int, ok bool) {
	f, ok := s.s.ForkOrigin()
	return f.ParentID, f.ParentEntry, ok
}
