package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Fork starts the session newID, in the same directory, from s's head: its
// file holds a Fork record naming s and its head, then copies of the
// records that make up the conversation at that head (the run starts that
// mark prompts, the messages, and as one checkpoint the latest compaction on
// the head's branch, with only the messages it kept), the branch's latest
// model change and s's reasoning selection. Usage and usage_uncertainty
// records are not copied: the fork's ledger starts at zero and certain.
// Media objects its messages refer to are copied beside the new file.
//
// The new file is written whole through a synced temporary file and a
// rename, under the new session's own lock, which the returned Session
// holds; s is left as it was and stays open. An ID that already has a
// session file is ErrExists; an invalid one ErrInvalidID.
func (s *Session) Fork(newID string) (*Session, error) {
	if s.closed {
		return nil, ErrClosed
	}
	name, err := FileName(newID)
	if err != nil {
		return nil, err
	}
	if newID == s.id {
		return nil, fmt.Errorf("%w: %s", ErrExists, newID)
	}
	dir := filepath.Dir(s.path)
	path := filepath.Join(dir, name)
	lock, err := lockSession(s.fs, path)
	if err != nil {
		return nil, err
	}
	f, err := s.fork(dir, path, newID)
	if err != nil {
		_ = lock.Unlock()
		lock.Close()
		return nil, err
	}
	f.lock = lock
	return f, nil
}

// fork writes and loads the fork's file; the caller holds its lock.
func (s *Session) fork(dir, path, id string) (*Session, error) {
	switch _, err := s.fs.Lstat(path); {
	case err == nil:
		return nil, fmt.Errorf("%w: %s", ErrExists, path)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("store: fork: %w", err)
	}
	recs, err := s.forkRecords()
	if err != nil {
		return nil, err
	}
	media := strings.TrimSuffix(path, fileSuffix) + mediaSuffix
	var body []byte
	msgs := 0
	for i, r := range recs {
		if m, ok := r.Body.(Message); ok {
			for _, ref := range m.Message.Media {
				data, err := s.Media(ref.SHA256)
				if err != nil {
					return nil, fmt.Errorf("store: fork: %w", err)
				}
				if err := makeDir(s.fs, media); err != nil {
					return nil, fmt.Errorf("store: fork: media folder: %w", err)
				}
				if _, err := putMedia(s.fs, media, data); err != nil {
					return nil, fmt.Errorf("store: fork: %w", err)
				}
			}
		}
		if r.TS.IsZero() {
			r.TS = s.now()
		}
		r.TS = r.TS.UTC()
		if err := validate(r, msgs, func(e int) string { return recs[e-1].Type() }, i); err != nil {
			return nil, fmt.Errorf("%w: fork record %d: %v", ErrInvalidRecord, i, err)
		}
		if _, ok := r.Body.(Message); ok {
			msgs++
		}
		var err error
		if body, err = appendRecord(body, r); err != nil {
			return nil, err
		}
	}
	if err := create(s.fs, dir, path, id, s.now(), body); err != nil {
		return nil, err
	}
	return load(s.fs, dir, path, id, s.now)
}

// forkRecords returns the records of a fork of s at its head, reading
// them back from the file.
func (s *Session) forkRecords() ([]Record, error) {
	recs := []Record{{Body: Fork{ParentID: s.id, ParentEntry: s.head}}}
	chain := s.branch(s.head)
	if chain == nil {
		chain = make([]int, len(s.slots))
		for i := range chain {
			chain[i] = i
		}
	}
	// The conversation's messages are the branch's message records from
	// the latest checkpoint's first kept one on. A native checkpoint is
	// tied to its route and not carried into a fork: the fork starts from
	// the latest local checkpoint, or the raw history.
	v := s.view("")
	model := -1
	var need []int32
	for _, i := range chain {
		switch s.slots[i].kind {
		case kindModelChange:
			model = i
		case kindRunStart:
			need = append(need, int32(i))
		}
	}
	need = append(need, v.pos...)
	if model >= 0 {
		need = append(need, int32(model))
	}
	if v.cp >= 0 {
		need = append(need, int32(v.cp))
	}
	slices.Sort(need)
	got := make(map[int]Record, len(need))
	if err := s.readRecords(need, func(i int, r Record) { got[i] = r }); err != nil {
		s.readFailed(err)
		return nil, fmt.Errorf("store: fork: %w", err)
	}
	if model >= 0 {
		recs = append(recs, Record{Body: got[model].Body})
	}
	if s.reasoning != "" || s.ultra {
		recs = append(recs, Record{Body: ReasoningChange{Effort: s.reasoning, Ultra: s.ultra}})
	}
	if v.cp >= 0 {
		// Every message the fork holds is kept: first_kept 0.
		recs = append(recs, Record{Body: Compaction{Summary: got[v.cp].Body.(Compaction).Summary}})
	}
	kept := v.pos // ascending, on the branch
	for _, i := range chain {
		switch s.slots[i].kind {
		case kindRunStart:
			recs = append(recs, got[i])
		case kindMessage:
			if len(kept) > 0 && int(kept[0]) == i {
				recs = append(recs, Record{TS: got[i].TS, Body: got[i].Body})
				kept = kept[1:]
			}
		}
	}
	// The fork's messages may hold reasoning updates a later baseline
	// superseded (or none of the parent's latest, past the head): a
	// closing baseline record then gives the fork the parent's baseline
	// with no update in effect.
	update := ""
	for _, r := range recs {
		if m, ok := r.Body.(Message); ok && m.Message.Role == RoleDeveloper && m.Message.ReasoningEffort != "" {
			update = m.Message.ReasoningEffort
		}
	}
	if update != s.reasoningUpdate {
		recs = append(recs, Record{Body: ReasoningChange{Effort: s.reasoning, Ultra: s.ultra}})
	}
	return recs, nil
}
