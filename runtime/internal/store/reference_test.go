package store

import (
	"bytes"
	"errors"
	"slices"

	"octet.dev/host/runtime/provider"
)

// The reference model: the straightforward implementation the lazy Session
// replaced, kept as the oracle of the tests. refParse decodes a whole file
// in memory, every record fully; refSession answers the Session's queries
// from that slice of records, exactly as the Session did when it held every
// record decoded.

// refLoaded is the result of refParse.
type refLoaded struct {
	header Header
	recs   []Record
	good   int64 // offset just past the last good line
	torn   int64 // bytes of torn tail after good
}

// refParse loads a whole session file from memory.
func refParse(data []byte, path, id string) (refLoaded, error) {
	corrupt := func(line int, err error) (refLoaded, error) {
		return refLoaded{}, &CorruptError{Path: path, Line: line, Err: err}
	}
	if len(data) == 0 {
		return corrupt(1, errors.New("empty file, no header"))
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return corrupt(1, errors.New("header line has no newline"))
	}
	h, err := decodeHeader(data[:nl], id)
	if errors.Is(err, ErrUnsupportedSchema) {
		return refLoaded{}, err
	}
	if err != nil {
		return corrupt(1, err)
	}
	type span struct{ start, end int }
	body := data[nl+1:]
	var lines []span
	for pos := 0; ; {
		i := bytes.IndexByte(body[pos:], '\n')
		if i < 0 {
			break
		}
		lines = append(lines, span{pos, pos + i})
		pos += i + 1
	}
	tail := len(body)
	if len(lines) > 0 {
		tail -= lines[len(lines)-1].end + 1
	}
	var recs []Record
	types := func(e int) string { return recs[e-1].Type() }
	msgs := 0
	for i, ln := range lines {
		r, err := decodeRecord(body[ln.start:ln.end])
		if err == nil {
			err = validate(r, msgs, types, i)
		}
		if err != nil {
			if i < len(lines)-1 || tail > 0 {
				return corrupt(i+2, err)
			}
			good := int64(nl + 1 + ln.start)
			return refLoaded{header: h, recs: recs, good: good, torn: int64(len(data)) - good}, nil
		}
		if _, ok := r.Body.(Message); ok {
			msgs++
		}
		recs = append(recs, r)
	}
	return refLoaded{header: h, recs: recs, good: int64(len(data) - tail), torn: int64(tail)}, nil
}

// refSession is the state the Session derived from its records.
type refSession struct {
	id              string
	recs            []Record
	msgs            int
	head            int
	checkouts       int
	uncertain       []UsageUncertainty
	reasoning       string
	reasoningUpdate string
	ultra           bool
	unknown         int
	native          nativeState
}

// newRef builds the reference state of recs, loaded from a file.
func newRef(id string, recs []Record) *refSession {
	r := &refSession{id: id}
	for _, rec := range recs {
		r.add(rec)
	}
	r.native.loaded()
	return r
}

// add appends one record.
func (s *refSession) add(r Record) {
	s.recs = append(s.recs, r)
	s.head = len(s.recs)
	switch b := r.Body.(type) {
	case Checkout:
		s.head = b.Entry
		s.checkouts++
	case Message:
		s.msgs++
		if b.Message.Role == RoleDeveloper && b.Message.ReasoningEffort != "" {
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

func (s *refSession) branch(head int) []int {
	if s.checkouts == 0 && head == len(s.recs) {
		return nil
	}
	parent := make([]int, len(s.recs)+1)
	h := 0
	for i := range s.recs {
		parent[i+1] = h
		if c, ok := s.recs[i].Body.(Checkout); ok {
			h = c.Entry
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

func (s *refSession) MessagesFor(route string) []provider.Message {
	msgs, _ := s.conversation(s.branch(s.head), false, route)
	return msgs
}

func (s *refSession) ConversationOrdinals(route string) []int {
	_, ords := s.conversation(s.branch(s.head), true, route)
	return ords
}

func (s *refSession) conversation(chain []int, ords bool, route string) ([]provider.Message, []int) {
	var ordAt []int
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
	prompt := ""
	visit := func(i int) {
		switch b := s.recs[i].Body.(type) {
		case RunStart:
			prompt = b.RunID
		case Message:
			m := b.Message.Provider()
			if prompt != "" && b.RunID == prompt && m.Role == provider.RoleUser && b.Origin == "" {
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
	k := min(cp.FirstKept, len(all))
	if chain != nil {
		k, _ = slices.BinarySearch(allOrd, cp.FirstKept)
	}
	out := make([]provider.Message, 0, 1+len(all)-k)
	if cp.Items != nil {
		out = append(out, provider.Message{Role: RoleUser, NativeItems: cp.Items})
	} else {
		out = append(out, provider.Message{Role: RoleUser, Text: WrapSummary(cp.Summary)})
	}
	out = append(out, all[k:]...)
	if allOrd != nil {
		allOrd = allOrd[k:]
	}
	return out, allOrd
}

func (s *refSession) Entries() []Entry {
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

func (s *refSession) RunEnds() []RunEnd {
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

func (s *refSession) LatestCompaction(route string) (Compaction, bool) {
	recs := s.branch(s.head)
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

func (s *refSession) ContextUsage() (u provider.Usage, after int, ok bool) {
	if s.checkouts > 0 {
		if _, lastIsCheckout := s.recs[len(s.recs)-1].Body.(Checkout); lastIsCheckout {
			return provider.Usage{}, 0, false
		}
	}
	recs := s.branch(s.head)
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
				return b.Usage.Provider(), after, true
			}
		}
	}
	return provider.Usage{}, 0, false
}

func (s *refSession) usages() []Usage {
	var out []Usage
	for _, r := range s.recs {
		if u, ok := r.Body.(Usage); ok {
			out = append(out, u)
		}
	}
	return out
}

func (s *refSession) forkOrigin() (Fork, bool) {
	if len(s.recs) > 0 {
		if f, ok := s.recs[0].Body.(Fork); ok {
			return f, true
		}
	}
	return Fork{}, false
}

// forkRecords is the old Session.forkRecords.
func (s *refSession) forkRecords() []Record {
	recs := []Record{{Body: Fork{ParentID: s.id, ParentEntry: s.head}}}
	chain := s.branch(s.head)
	if chain == nil {
		chain = make([]int, len(s.recs))
		for i := range chain {
			chain[i] = i
		}
	}
	_, ords := s.conversation(chain, true, "")
	kept := make(map[int]bool, len(ords))
	for _, o := range ords {
		kept[o] = true
	}
	var cp *Compaction
	var model *ModelChange
	for _, i := range chain {
		switch b := s.recs[i].Body.(type) {
		case Compaction:
			if b.applies("") {
				cp = &b
			}
		case ModelChange:
			model = &b
		}
	}
	if model != nil {
		recs = append(recs, Record{Body: *model})
	}
	if s.reasoning != "" || s.ultra {
		recs = append(recs, Record{Body: ReasoningChange{Effort: s.reasoning, Ultra: s.ultra}})
	}
	if cp != nil {
		recs = append(recs, Record{Body: Compaction{Summary: cp.Summary}})
	}
	ord := 0
	at := 0
	for _, i := range chain {
		for ; at < i; at++ {
			if _, ok := s.recs[at].Body.(Message); ok {
				ord++
			}
		}
		switch b := s.recs[i].Body.(type) {
		case RunStart:
			recs = append(recs, s.recs[i])
		case Message:
			if kept[ord] {
				recs = append(recs, Record{TS: s.recs[i].TS, Body: b})
			}
		}
	}
	update := ""
	for _, r := range recs {
		if m, ok := r.Body.(Message); ok && m.Message.Role == RoleDeveloper && m.Message.ReasoningEffort != "" {
			update = m.Message.ReasoningEffort
		}
	}
	if update != s.reasoningUpdate {
		recs = append(recs, Record{Body: ReasoningChange{Effort: s.reasoning, Ultra: s.ultra}})
	}
	return recs
}
