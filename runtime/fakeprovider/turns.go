package fakeprovider

import "fmt"

// SetScript replaces the script. Its turns answer the following requests
// in order, whatever their mode. A request without a fault consumes its
// turn when it is dispatched (even if its client then goes away); a
// request that gets a fault consumes none, so the retry gets the same
// turn — except a FaultStall that resumes after its For and sends the turn
// whole, which consumes it then. A request that finds no turn left gets a
// 500 with an error saying so.
func (s *Server) SetScript(sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setScriptLocked(sc)
}

func (s *Server) setScriptLocked(sc Script) {
	sc.Models = append([]string(nil), sc.Models...)
	sc.Turns = append([]Turn(nil), sc.Turns...)
	sc.Summaries = append([]Turn(nil), sc.Summaries...)
	s.script = sc
	s.summaries = 0
	s.loading = max(sc.Loading, 0)
	s.gen++
	s.pending = make([]int, len(sc.Turns))
	for i := range s.pending {
		s.pending[i] = i
	}
}

// LoadingLeft returns how many requests the model-loading phase
// (Script.Loading) will still answer with LoadingBody.
func (s *Server) LoadingLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loading
}

// takeLoading consumes one loading answer for the request at idx and
// reports whether there was one.
func (s *Server) takeLoading(idx int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading == 0 {
		return false
	}
	s.loading--
	s.reqAt(idx).Fault = "loading"
	return true
}

// TurnsLeft returns how many script turns have not been served yet.
func (s *Server) TurnsLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// ServeFixture queues the named recorded fixture (see Fixtures) for the
// next request to mode's endpoint; several calls queue several answers. A
// queued fixture comes before a SetFixture one and before the script, and
// is consumed like a turn (see SetScript): a faulted request leaves it
// queued for the retry.
func (s *Server) ServeFixture(mode Mode, name string) error {
	f, err := loadFixture(mode, name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued[mode] = append(s.queued[mode], f)
	return nil
}

// SetFixture makes the named fixture the answer to every request to mode's
// endpoint that finds no queued fixture, instead of the script. An empty
// name goes back to the script.
func (s *Server) SetFixture(mode Mode, name string) error {
	var f *fixture
	if name != "" {
		var err error
		if f, err = loadFixture(mode, name); err != nil {
			return err
		}
	} else if _, ok := fixtureIndex[mode]; !ok {
		return fmt.Errorf("fakeprovider: unknown mode %q", mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sticky[mode] = f
	return nil
}

// plan is what dispatch chose for one request.
type plan struct {
	fault   Fault
	gen     int
	turn    int // -1: none
	t       Turn
	fix     *fixture
	queued  bool   // fix is the head of the mode's queue
	peeked  bool   // the source was looked at, not taken (a faulted request)
	summary bool   // t answers a summarizer request (Script.Summaries)
	missing string // why there is nothing to answer with
}

// dispatch takes the request's fault and answer source, in that order:
// the next fault; then a queued fixture of mode, the SetFixture one, or
// the next turn. A request without a fault takes its source off the queue
// there and then; a request with a stream fault only looks at it, so the
// retry gets the same answer however the two requests race; FaultStatus
// FaultResetAfterHeaders and FaultNoHeaders need no source at all.
//
// Before all that, a request over Script.ContextWindow gets the overflow
// error, and a summarizer request (raw holds SummarizerMarker) takes the
// next of Script.Summaries instead of a turn.
func (s *Server) dispatch(mode Mode, idx int, raw []byte) plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := plan{gen: s.gen, turn: -1}
	if w := s.script.ContextWindow; w > 0 && len(raw)/4 > w {
		p.fault = OverflowFault(mode, s.script.OverflowStyle, len(raw)/4, w)
		s.reqAt(idx).Fault = "overflow"
		return p
	}
	summary := isSummarizer(raw)
	s.reqAt(idx).Summary = summary
	if len(s.faults) > 0 {
		p.fault = s.faults[0]
		s.faults = s.faults[1:]
		s.refuseAtHeadLocked()
		s.reqAt(idx).Fault = p.fault.describe()
	}
	switch p.fault.(type) {
	case FaultStatus, FaultResetAfterHeaders, FaultNoHeaders, FaultRedirect, FaultEndless:
		return p
	}
	p.peeked = p.fault != nil
	switch {
	case summary:
		p.summary = true
		p.t = s.nextSummaryLocked(!p.peeked, raw)
	case len(s.queued[mode]) > 0:
		p.fix, p.queued = s.queued[mode][0], true
		if !p.peeked {
			s.queued[mode] = s.queued[mode][1:]
		}
	case s.sticky[mode] != nil:
		p.fix = s.sticky[mode]
	case len(s.pending) > 0:
		p.turn = s.pending[0]
		p.t = s.script.Turns[p.turn]
		if !p.peeked {
			s.pending = s.pending[1:]
		}
	case len(s.script.Turns) == 0:
		p.missing = fmt.Sprintf("fakeprovider: no script turn and no fixture for %s: call SetScript or ServeFixture", mode)
	default:
		p.missing = fmt.Sprintf("fakeprovider: the script is exhausted: all %d turns were served, and this request asks for one more", len(s.script.Turns))
	}
	if p.fix != nil {
		s.reqAt(idx).Fixture = p.fix.name
	}
	s.reqAt(idx).Turn = p.turn
	if s.script.AutoUsage && (p.turn >= 0 || p.summary) && p.t.Usage == (Usage{}) {
		p.t.Usage = Usage{Input: len(raw) / 4, Output: (len(p.t.Text)+len(p.t.Reasoning))/4 + 1}
		for _, c := range p.t.ToolCalls {
			p.t.Usage.Output += (len(c.Name) + len(c.Arguments)) / 4
		}
	}
	return p
}

// settle consumes a peeked source that was served whole after all (a
// FaultStall that ran out of time), if it is still next in its queue.
func (s *Server) settle(p plan, served bool) {
	if !served || !p.peeked {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.summary && p.gen == s.gen {
		s.summaries++
	}
	if p.turn >= 0 && p.gen == s.gen && len(s.pending) > 0 && s.pending[0] == p.turn {
		s.pending = s.pending[1:]
	}
	if p.queued {
		if q := s.queued[p.fix.mode]; len(q) > 0 && q[0] == p.fix {
			s.queued[p.fix.mode] = q[1:]
		}
	}
}
