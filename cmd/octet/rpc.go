package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
	"octet.dev/host/protocol/rpc"
	"octet.dev/host/runtime"
	"octet.dev/host/wire"
)

// tally is a session's usage figures.
type tally struct {
	tokens rpc.Tokens
	cost   float64
}

func (t *tally) add(o tally) {
	t.tokens.Input += o.tokens.Input
	t.tokens.Output += o.tokens.Output
	t.tokens.CacheRead += o.tokens.CacheRead
	t.tokens.CacheWrite += o.tokens.CacheWrite
	t.tokens.Total += o.tokens.Total
	t.cost += o.cost
}

// activeRun is the run of the current prompt.
type activeRun struct {
	id    string
	rc    *runtime.RunControl
	delta tally // this run's model_step figures, not yet in the ledger's tally
}

// rpcServer serves RPC mode: commands are handled on the reading
// goroutine; each run's events are forwarded by a goroutine of their own.
// One mutex orders state changes and output lines.
type rpcServer struct {
	agent *runtime.Agent
	cfg   *config
	out   io.Writer

	mu        sync.Mutex
	buf       []byte
	werr      error // the first output failure: the mode ends
	sessionID string
	uncertain bool
	base      tally      // the session's ledger as of the last idle point
	active    *activeRun // nil when idle

	forwarders sync.WaitGroup
	// failed is closed at the first output failure (a failed write, or
	// the reader of stdout gone): the mode ends at once, whatever stdin
	// does.
	failed   chan struct{}
	failOnce sync.Once
}

func newRPCServer(agent *runtime.Agent, cfg *config, out io.Writer) *rpcServer {
	return &rpcServer{agent: agent, cfg: cfg, out: out, failed: make(chan struct{})}
}

// fail records the first output failure and ends the mode; mu is held.
func (s *rpcServer) fail(err error) {
	if s.werr == nil {
		s.werr = err
	}
	s.failOnce.Do(func() { close(s.failed) })
}

// stdinLine is one result of the line reader.
type stdinLine struct {
	line []byte
	err  error
}

// readLines reads stdin on its own goroutine, so that an output failure
// ends the mode while a read blocks. Each line is handed over and the next
// read waits for next (the reader reuses its buffer).
func (s *rpcServer) readLines(lr *wire.LineReader, lines chan<- stdinLine, next <-chan struct{}) {
	for {
		line, err := lr.Next()
		select {
		case lines <- stdinLine{line, err}:
		case <-s.failed:
			return
		}
		if err != nil && !errors.Is(err, wire.ErrFrameTooLarge) {
			return
		}
		select {
		case <-next:
		case <-s.failed:
			return
		}
	}
}

// serve reads commands until end of input, then waits for the active run
// to end (its final_result written) and returns the exit status.
func (s *rpcServer) serve(ctx context.Context, in io.Reader) int {
	s.sessionID = s.cfg.session
	if s.sessionID == "" {
		s.sessionID = runtime.NewSessionID()
	} else if err := s.loadSession(); err != nil {
		fmt.Fprintf(os.Stderr, "octet: session %s: %v\n", s.sessionID, err)
		return exitError
	}
	if f, ok := s.out.(*os.File); ok {
		stop := make(chan struct{})
		defer close(stop)
		go watchReaderGone(f, stop, func() {
			s.mu.Lock()
			s.fail(errors.New("the reader of stdout went away (broken pipe)"))
			s.mu.Unlock()
		})
	}
	lines, next := make(chan stdinLine), make(chan struct{})
	go s.readLines(wire.NewLineReader(in), lines, next)
read:
	for {
		var r stdinLine
		select {
		case r = <-lines:
		case <-s.failed:
			break read
		}
		line, err := r.line, r.err
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, wire.ErrFrameTooLarge) {
			s.mu.Lock()
			s.respond(nil, rpc.CommandParse, false, nil, "the command line exceeds "+strconv.Itoa(protocol.MaxFrameBytes)+" bytes including the newline; it was discarded")
			s.mu.Unlock()
			next <- struct{}{}
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "octet: reading stdin failed; treating it as end of input: %v\n", err)
			break
		}
		s.handle(ctx, line)
		s.mu.Lock()
		werr := s.werr
		s.mu.Unlock()
		if werr != nil {
			break
		}
		next <- struct{}{}
	}
	s.mu.Lock()
	if a := s.active; s.werr != nil && a != nil {
		// Nobody reads the events any more: the run is canceled, its
		// events discarded, and it records its end in the session as a
		// cancel does; the forwarder returns once it has.
		a.rc.Abandon()
	}
	s.mu.Unlock()
	s.forwarders.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.werr != nil {
		fmt.Fprintf(os.Stderr, "octet: writing to stdout failed: %v\n", s.werr)
		return exitError
	}
	return exitCompleted
}

// waitForwarded waits up to timeout for the runs' last events to be
// written.
func (s *rpcServer) waitForwarded(timeout time.Duration) {
	done := make(chan struct{})
	go func() { s.forwarders.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// loadSession reads the current session's ledger (when its file exists)
// into base and uncertain. The session is opened only for the read: runs
// open it themselves.
func (s *rpcServer) loadSession() error {
	ok, err := s.agent.SessionExists("", s.sessionID)
	if err != nil || !ok {
		s.base, s.uncertain = tally{}, false
		return err
	}
	sess, err := s.agent.OpenSession("", s.sessionID)
	if err != nil {
		return err
	}
	st := sess.Statistics()
	sess.Close()
	s.base = tally{tokens: rpc.Tokens{Input: st.InputTokens, Output: st.OutputTokens, CacheRead: st.CacheReadTokens,
		CacheWrite: st.CacheWriteTokens, Total: st.TotalTokens}, cost: st.Cost}
	s.uncertain = st.UsageUncertain
	return nil
}

// decode decodes and checks one command line. On failure it returns the
// id and command it could read, for the response, and the reason.
func decode(line []byte) (cmd rpc.Command, command string, reason string) {
	err := json.Unmarshal(line, &cmd, json.RejectUnknownMembers(true))
	if err != nil {
		// Read what can be read, leniently, to address the response.
		var probe struct {
			ID   any `json:"id"`
			Type any `json:"type"`
		}
		command = rpc.CommandParse
		if json.Unmarshal(line, &probe, jsontext.AllowDuplicateNames(true)) == nil {
			if id, ok := probe.ID.(string); ok {
				cmd.ID = &id
			} else {
				cmd.ID = nil
			}
			if t, ok := probe.Type.(string); ok {
				command = t
			}
		} else {
			cmd.ID = nil
		}
		return cmd, command, decodeReason(err)
	}
	if cmd.Type == nil {
		return cmd, rpc.CommandParse, `the command has no "type" member`
	}
	command = *cmd.Type
	switch command {
	case rpc.CommandPrompt, rpc.CommandSteer, rpc.CommandFollowUp:
		if cmd.Message == nil {
			return cmd, command, command + ` needs a "message" member (a string)`
		}
		if *cmd.Message == "" {
			return cmd, command, command + `'s "message" is empty`
		}
	case rpc.CommandAbort, rpc.CommandGetState, rpc.CommandGetSessionStats, rpc.CommandNewSession:
		if cmd.Message != nil {
			return cmd, command, command + ` takes no "message" member`
		}
	default:
		return cmd, command, fmt.Sprintf("unknown command %s; the commands are %v", strconv.Quote(command), rpc.Commands())
	}
	return cmd, command, ""
}

// decodeReason says what is wrong with a line in the client's terms.
func decodeReason(err error) string {
	var se *json.SemanticError
	if errors.As(err, &se) {
		name := string(se.JSONPointer)
		if len(name) > 1 {
			name = strconv.Quote(name[1:])
		}
		switch {
		case errors.Is(err, json.ErrUnknownName):
			return "unknown member " + name + "; a command has id, type and message"
		case se.JSONKind != 0 && name != "":
			return "member " + name + " must be a string, not " + wire.KindName(se.JSONKind)
		case se.JSONKind != 0:
			return "a command is a JSON object, not " + wire.KindName(se.JSONKind)
		}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		if errors.Is(err, jsontext.ErrDuplicateName) {
			return "a member appears twice: " + syn.Error()
		}
		return "not a JSON object: " + syn.Error()
	}
	return "malformed command: " + err.Error()
}

// handle serves one command line with exactly one response.
func (s *rpcServer) handle(ctx context.Context, line []byte) {
	cmd, command, reason := decode(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	if reason != "" {
		s.respond(cmd.ID, command, false, nil, reason)
		return
	}
	id, a := cmd.ID, s.active
	fail := func(msg string) { s.respond(id, command, false, nil, msg) }
	switch command {
	case rpc.CommandPrompt:
		if a != nil {
			fail("a run is active (runId " + a.id + "): steer it, queue a follow_up, or abort it first")
			return
		}
		runID := runtime.NewSessionID()
		rc, err := s.agent.Run(ctx, s.cfg.request(runID, s.sessionID, *cmd.Message))
		if err != nil {
			var re *runtime.RunError
			if errors.As(err, &re) {
				fail("the run was refused: " + string(re.Code) + ": " + re.Message)
			} else {
				fail("the run was refused: " + err.Error())
			}
			return
		}
		a = &activeRun{id: runID, rc: rc}
		s.active = a
		s.respond(id, command, true, map[string]string{"runId": runID, "sessionId": s.sessionID}, "")
		s.forwarders.Add(1)
		go s.forward(a)
	case rpc.CommandSteer, rpc.CommandFollowUp:
		if a == nil {
			fail("no run is active: send a prompt")
			return
		}
		submit := a.rc.Steer
		if command == rpc.CommandFollowUp {
			submit = a.rc.FollowUp
		}
		switch err := submit(*cmd.Message); {
		case errors.Is(err, runtime.ErrRunEnded):
			fail("the run is ending: the message was not queued; send it as a prompt after the final_result")
		case err != nil:
			fail(err.Error())
		default:
			s.respond(id, command, true, map[string]string{"runId": a.id}, "")
		}
	case rpc.CommandAbort:
		if a == nil {
			fail("no run is active")
			return
		}
		a.rc.Cancel()
		s.respond(id, command, true, map[string]string{"runId": a.id}, "")
	case rpc.CommandGetState:
		s.respond(id, command, true, rpc.State{Model: s.cfg.model, SessionID: s.sessionID, IsRunning: a != nil, UsageUncertain: s.uncertain}, "")
	case rpc.CommandGetSessionStats:
		t := s.base
		if a == nil {
			// Idle: the ledger is authoritative (another process may have
			// run on the session meanwhile).
			if err := s.loadSession(); err != nil {
				fail("the session's statistics cannot be read: " + err.Error())
				return
			}
			t = s.base
		} else {
			t.add(a.delta)
		}
		s.respond(id, command, true, rpc.Stats{SessionID: s.sessionID, Tokens: t.tokens, Cost: t.cost, UsageUncertain: s.uncertain}, "")
	case rpc.CommandNewSession:
		if a != nil {
			fail("a run is active (runId " + a.id + "): abort it or wait for its final_result first")
			return
		}
		s.sessionID = runtime.NewSessionID()
		s.base, s.uncertain = tally{}, false
		s.respond(id, command, true, map[string]string{"sessionId": s.sessionID}, "")
	}
}

// forward writes run a's events. Its final_result is written last, once
// the run has closed its session and the mode is idle again, so that a
// prompt sent on reading it is accepted.
func (s *rpcServer) forward(a *activeRun) {
	defer s.forwarders.Done()
	var final *runtime.Event
	for ev := range a.rc.Events() {
		if ev.Type == runtime.TypeRecoveredOutput {
			continue // Go API only, as in octet-host
		}
		if ev.Type == protocol.TypeFinalResult {
			final = &ev
			continue
		}
		s.mu.Lock()
		switch d := ev.Data.(type) {
		case *protocol.ModelStep:
			u := d.Usage
			a.delta.add(tally{tokens: rpc.Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
				CacheWrite: u.CacheWriteTokens, Total: u.TotalTokens}, cost: d.Cost.Total})
			if d.UsageUncertain {
				s.uncertain = true
			}
		case *protocol.ProviderUsageUncertain:
			s.uncertain = true
		}
		err := s.writeEvent(a.id, ev)
		s.mu.Unlock()
		if err != nil {
			a.rc.Abandon() // the serving loop ends the mode (s.failed)
		}
	}
	a.rc.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base.add(a.delta)
	s.active = nil
	if final != nil {
		s.writeEvent(a.id, *final)
	}
}

// writeEvent writes one run event line; mu is held.
func (s *rpcServer) writeEvent(runID string, ev runtime.Event) error {
	if s.werr != nil {
		return s.werr
	}
	b, err := appendRPCEvent(s.buf[:0], runID, ev)
	if err != nil {
		// A payload that cannot be encoded is a bug: say so in-band
		// rather than dropping the event silently.
		fmt.Fprintf(os.Stderr, "octet: encoding a %s event: %v\n", ev.Type, err)
		return nil
	}
	return s.write(b)
}

// respond writes a command's response; mu is held.
func (s *rpcServer) respond(id *string, command string, ok bool, data any, errMsg string) {
	if s.werr != nil {
		return
	}
	r := rpc.Response{Type: rpc.TypeResponse, ID: id, Command: command, Success: ok, Data: data, Error: errMsg}
	b, err := json.Marshal(r, encOpts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "octet: encoding a response: %v\n", err)
		return
	}
	s.write(append(b, '\n'))
}

func (s *rpcServer) write(b []byte) error {
	s.buf = b[:0]
	if _, err := s.out.Write(b); err != nil {
		s.fail(err)
		return err
	}
	return nil
}
