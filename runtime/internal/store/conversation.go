package store

import (
	"slices"

	"octet.dev/host/runtime/provider"
)

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

// applies reports whether the checkpoint applies on route.
func (c *Compaction) applies(route string) bool {
	return c.Items == nil || (route != "" && c.Route == route)
}
