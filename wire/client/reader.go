package client

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
	"octet.dev/host/wire"
)

// call is one request from the moment its ID is issued until its terminal
// event (or its failure).
type call struct {
	id        string
	command   string
	runID     string // run requests only
	sessionID string // the session_id the run supplied, or ""

	seq int64 // seq of the last event accepted; guarded by Client.mu

	// events carries the non-terminal events of a run to its RunStream.
	// Only the reader sends on it, and only before done is closed.
	events chan Event

	done chan struct{} // closed when the call has ended, once
	once sync.Once

	// Set before done is closed.
	terminal Event // the terminal event, on success
	value    any   // its decoded data: helloAnswer, protocol.Models, *protocol.FinalResult or nil
	err      error // why the call failed: *ProtocolError, a violation, ctx.Err(), …
}

func (cl *call) complete(ev Event, value any, err error) {
	cl.once.Do(func() {
		cl.terminal, cl.value, cl.err = ev, value, err
		close(cl.done)
	})
}

func (cl *call) fail(err error) { cl.complete(Event{}, nil, err) }

// readLoop is the only reader of the host's stdout. It validates every line
// and dispatches it to the request in flight. After a violation or a kill it
// keeps reading, discarding, until EOF so that the host never blocks on a
// full pipe while it dies.
func (c *Client) readLoop() {
	defer close(c.readerDone)
	lr := wire.NewLineReader(c.stdout)
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, wire.ErrFrameTooLarge):
			c.violate(&MalformedEventError{Reason: "line exceeds 1048576 bytes including the newline", Err: wire.ErrFrameTooLarge})
			continue
		case err != nil:
			c.endOfOutput()
			return
		}
		if c.cfg.tap != nil {
			c.cfg.tap(false, line)
		}
		c.handleLine(line)
	}
}

func (c *Client) handleLine(line []byte) {
	r := c.route(line)
	switch {
	case r.skip:
	case r.err != nil:
		c.violate(r.err)
	case r.terminal:
		r.call.complete(r.event, r.value, r.perr)
	default:
		select {
		case r.call.events <- r.event:
		case <-r.call.done: // the call was canceled, closed or killed meanwhile
		}
	}
}

// violate poisons the client with err, fails the request in flight and
// kills the host's process group.
func (c *Client) violate(err error) {
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return // already poisoned, closed or killed: the line is discarded
	}
	c.broken = err
	c.killedByUs = true
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	c.logf("%v; killing process group %d", err, c.pid)
	if cur != nil {
		cur.fail(err)
	}
	c.killGroup()
	c.closeStdin()
}

// endOfOutput handles the end of the host's stdout. Unless the client ended
// the host itself, this is an unexpected exit: wait (bounded) for the exit
// status so that the error can report it with the stderr tail.
func (c *Client) endOfOutput() {
	c.mu.Lock()
	broken := c.broken
	c.mu.Unlock()
	if broken == nil {
		timer := time.NewTimer(exitWait)
		select {
		case <-c.exited:
		case <-timer.C:
			c.logf("the host closed its stdout but did not exit; killing process group %d", c.pid)
			c.markKilled()
			c.killGroup()
			<-c.exited
		}
		timer.Reset(exitWait / 4)
		select {
		case <-c.stderrDone:
		case <-timer.C:
		}
		timer.Stop()
		broken = &HostExitedError{Err: c.exitErr, Stderr: c.Stderr()}
	}
	c.mu.Lock()
	first := c.broken == nil
	if first {
		c.broken = broken
	}
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if first {
		c.logf("%v", broken)
	}
	if cur != nil {
		cur.fail(broken)
	}
}

// routed is the outcome of one line.
type routed struct {
	skip     bool  // discard the line: the client is already broken
	err      error // a violation
	call     *call
	event    Event
	terminal bool
	value    any   // decoded terminal data
	perr     error // *ProtocolError for a protocol_error terminal
}

// rawEvent is an event's envelope with its members kept raw, so that each
// can be checked for presence and type. Unknown members are tolerated: the
// host may add fields.
type rawEvent struct {
	ProtocolVersion jsontext.Value `json:"protocol_version"`
	RequestID       jsontext.Value `json:"request_id"`
	Seq             jsontext.Value `json:"seq"`
	Type            jsontext.Value `json:"type"`
	RunID           jsontext.Value `json:"run_id"`
	SessionID       jsontext.Value `json:"session_id"`
	Data            jsontext.Value `json:"data"`
}

// parsed is a syntactically valid envelope.
type parsed struct {
	requestID *string // nil for null
	seq       int64
	typ       protocol.EventType
	runID     *string // nil when absent
	sessionID *string // nil when absent
	data      jsontext.Value
}

// parseEvent checks a line's syntax and envelope types. protocol_version is
// checked before anything else: a host speaking another protocol may use
// another envelope altogether.
func parseEvent(line []byte) (*parsed, error) {
	// Unmarshal would accept null for a struct: check the kind first.
	if jsontext.Value(bytes.TrimLeft(line, " \t\r\n")).Kind() != '{' {
		if jsontext.Value(line).IsValid() {
			return nil, &MalformedEventError{Reason: "not a JSON object: " + snippet(line)}
		}
		return nil, &MalformedEventError{Reason: "invalid JSON " + snippet(line)}
	}
	var raw rawEvent
	// Duplicate member names and invalid UTF-8 are rejected by default.
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, &MalformedEventError{Reason: "invalid JSON " + snippet(line), Err: err}
	}
	if raw.ProtocolVersion == nil {
		return nil, &ProtocolMismatchError{}
	}
	if string(raw.ProtocolVersion) != "1" {
		got := string(raw.ProtocolVersion)
		if len(got) > 64 {
			got = got[:64] + "…"
		}
		return nil, &ProtocolMismatchError{Got: got}
	}
	p := &parsed{data: raw.Data}
	switch {
	case raw.RequestID == nil:
		return nil, &MalformedEventError{Reason: "missing request_id"}
	case raw.RequestID.Kind() == 'n':
	case raw.RequestID.Kind() == '"':
		var s string
		if err := json.Unmarshal(raw.RequestID, &s); err != nil {
			return nil, &MalformedEventError{Reason: "request_id", Err: err}
		}
		p.requestID = &s
	default:
		return nil, &MalformedEventError{Reason: "request_id is neither a string nor null"}
	}
	if raw.Seq == nil || raw.Seq.Kind() != '0' {
		return nil, &MalformedEventError{Reason: "missing or non-numeric seq"}
	}
	if err := json.Unmarshal(raw.Seq, &p.seq); err != nil {
		return nil, &MalformedEventError{Reason: "seq is not an integer", Err: err}
	}
	if raw.Type == nil || raw.Type.Kind() != '"' || json.Unmarshal(raw.Type, &p.typ) != nil || p.typ == "" {
		return nil, &MalformedEventError{Reason: "missing or invalid type"}
	}
	if raw.Data == nil {
		return nil, &MalformedEventError{Reason: "missing data in " + strconv.Quote(string(p.typ)) + " event"}
	}
	var err error
	if p.runID, err = optionalString(raw.RunID, "run_id"); err != nil {
		return nil, err
	}
	if p.sessionID, err = optionalString(raw.SessionID, "session_id"); err != nil {
		return nil, err
	}
	return p, nil
}

func optionalString(v jsontext.Value, name string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s) != nil {
		return nil, &MalformedEventError{Reason: name + " is not a string"}
	}
	return &s, nil
}

// route validates one line against the request in flight and advances that
// request's state. It runs under c.mu so that attribution, the seq check
// and the end of the request are one step.
func (c *Client) route(line []byte) routed {
	p, perr := parseEvent(line)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return routed{skip: true}
	}
	if perr != nil {
		return routed{err: perr}
	}
	cl := c.cur

	// Attribution.
	switch {
	case p.requestID == nil:
		// The host writes a null request_id only for a line that yielded
		// no valid ID. The client writes every byte of the host's stdin,
		// one line per request and only while no other request is in
		// flight, and the host reads a line only after the previous
		// request's terminal event. So a null-ID protocol_error can only
		// answer the line of the request in flight, and only as its first
		// event; anything else is unattributable.
		if cl == nil || cl.seq != 0 || p.typ != protocol.TypeProtocolError {
			return routed{err: &UnknownRequestError{InFlight: idOf(cl)}}
		}
	case cl == nil || *p.requestID != cl.id:
		if c.issuedBefore(*p.requestID, cl) {
			return routed{err: &SecondTerminalError{RequestID: *p.requestID, Type: p.typ}}
		}
		return routed{err: &UnknownRequestError{RequestID: *p.requestID, InFlight: idOf(cl)}}
	}

	if p.seq != cl.seq+1 {
		return routed{err: &SeqGapError{RequestID: cl.id, Want: cl.seq + 1, Got: p.seq}}
	}

	terminal := p.typ == protocol.TypeProtocolError
	if cl.command == protocol.CommandRun {
		terminal = terminal || p.typ == protocol.TypeFinalResult
		if err := checkRunIDs(cl, p); err != nil {
			return routed{err: err}
		}
	} else {
		terminal = terminal || string(p.typ) == cl.command
		if !terminal {
			return routed{err: &UnexpectedEventError{RequestID: cl.id, Command: cl.command, Type: p.typ}}
		}
	}

	ev := Event{Type: p.typ, Seq: p.seq, RequestID: cl.id, Data: bytes.Clone(p.data)}
	if p.runID != nil {
		ev.RunID = *p.runID
	}
	if p.sessionID != nil {
		ev.SessionID = *p.sessionID
	}
	r := routed{call: cl, event: ev, terminal: terminal}
	if terminal {
		var err error
		if r.value, r.perr, err = decodeTerminal(cl, p); err != nil {
			return routed{err: err}
		}
		c.cur = nil
		if p.typ == protocol.TypeShutdown {
			// The host exits next: its EOF is expected, and nothing may
			// be sent any more.
			c.broken = ErrClosed
		}
	}
	cl.seq = p.seq
	return r
}

// checkRunIDs checks that a run event carries the run's run_id and echoes
// the session_id the request supplied. A protocol_error without run_id is
// accepted as the first event only: the host rejected the line before it
// knew the run. When the request supplied no session_id, a session_id on
// the event is tolerated.
func checkRunIDs(cl *call, p *parsed) error {
	if p.runID == nil {
		if p.typ == protocol.TypeProtocolError && p.seq == 1 {
			return nil
		}
		return &RunIDMismatchError{RequestID: cl.id, Want: cl.runID}
	}
	if *p.runID != cl.runID {
		return &RunIDMismatchError{RequestID: cl.id, Want: cl.runID, Got: *p.runID}
	}
	if cl.sessionID != "" {
		got := ""
		if p.sessionID != nil {
			got = *p.sessionID
		}
		if got != cl.sessionID {
			return &SessionIDMismatchError{RequestID: cl.id, Want: cl.sessionID, Got: got}
		}
	}
	return nil
}

// decodeTerminal decodes a terminal event's data. A protocol_error becomes
// perr; data of the wrong shape is a violation (err).
func decodeTerminal(cl *call, p *parsed) (value any, perr, err error) {
	bad := func(e error) error {
		return &MalformedEventError{Reason: "data of the " + strconv.Quote(string(p.typ)) + " event", Err: e}
	}
	if p.data.Kind() != '{' {
		return nil, nil, bad(errors.New("not a JSON object"))
	}
	switch p.typ {
	case protocol.TypeProtocolError:
		var ed protocol.ErrorData
		if err := json.Unmarshal(p.data, &ed); err != nil {
			return nil, nil, bad(err)
		}
		if ed.Code == "" {
			return nil, nil, bad(errors.New("empty code"))
		}
		return nil, &ProtocolError{RequestID: cl.id, Code: ed.Code, Message: ed.Message}, nil
	case protocol.TypeHello:
		var ha helloAnswer
		var flags struct {
			Features map[string]jsontext.Value `json:"features"`
		}
		if err := json.Unmarshal(p.data, &ha.Hello); err != nil {
			return nil, nil, bad(err)
		}
		if err := json.Unmarshal(p.data, &flags); err != nil {
			return nil, nil, bad(err)
		}
		ha.Features = flags.Features
		return ha, nil, nil
	case protocol.TypeModels:
		var md protocol.Models
		if err := json.Unmarshal(p.data, &md); err != nil {
			return nil, nil, bad(err)
		}
		return md, nil, nil
	case protocol.TypeFinalResult:
		fr := new(protocol.FinalResult)
		if err := json.Unmarshal(p.data, fr); err != nil {
			return nil, nil, bad(err)
		}
		switch fr.Status {
		case protocol.StatusCompleted, protocol.StatusBlocked, protocol.StatusError:
		default:
			return nil, nil, bad(errors.New("unknown status " + strconv.Quote(fr.Status)))
		}
		return fr, nil, nil
	}
	return nil, nil, nil // shutdown: {}
}

// issuedBefore reports whether id is one the client issued earlier than the
// request in flight (whose ID it is not): its events have all ended.
func (c *Client) issuedBefore(id string, cur *call) bool {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != rest || n == 0 || n > c.issued {
		return false
	}
	return cur == nil || id != cur.id
}

func idOf(cl *call) string {
	if cl == nil {
		return ""
	}
	return cl.id
}

// snippet quotes at most 64 bytes of b for an error message.
func snippet(b []byte) string {
	const max = 64
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}
