package soak

import (
	"octet.dev/host/protocol"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
)

// Config says how long and how hard to soak.
type Config struct {
	// HostPath is the octet-host binary.
	HostPath string
	// Runs is how many run requests to send (default 10000).
	Runs int
	// Concurrency is how many requests may be outstanding at once
	// (written, terminal event not yet read); default 4.
	Concurrency int
	// Seed seeds the workload and the faults; 0 picks one from the clock.
	Seed uint64
	// FaultRate is the probability that a run is sent with a fault
	// injected into the fake provider (default 0.15; negative: none).
	FaultRate float64
	// ToolRate is the probability that a run's model makes tool calls
	// before it answers (default 0.3; negative: none).
	ToolRate float64
	// ReportEvery is how many runs pass between progress samples
	// (default 1000).
	ReportEvery int
	// IdleTimeoutMS is the host's --provider-idle-timeout-ms (default
	// 500): what a stalled stream costs a run.
	IdleTimeoutMS int
	// RunTimeout is how long the driver waits for the host's next frame
	// before it declares the outstanding requests' terminal events lost
	// and stops (default 2 minutes).
	RunTimeout time.Duration
	// SchedTraceMS is the period of the host's Go scheduler dumps, from
	// which goroutines are counted (default 2000; negative: no dumps).
	SchedTraceMS int
	// Dir is a scratch directory for the workspace, HOME and sessions; ""
	// makes (and removes) a temporary one.
	Dir string
	// HostLog, when set, has the host log at trace level and receives
	// every line of its log (stderr without the scheduler dumps): the
	// state machines' transitions, for octet-tracecheck.
	HostLog io.Writer
	// Progress, when set, receives a sample every ReportEvery runs.
	Progress func(Sample, *Report)
}

func (c *Config) defaults() {
	if c.Runs <= 0 {
		c.Runs = 10000
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.FaultRate == 0 {
		c.FaultRate = 0.15
	}
	if c.ToolRate == 0 {
		c.ToolRate = 0.3
	}
	if c.ReportEvery <= 0 {
		c.ReportEvery = 1000
	}
	if c.IdleTimeoutMS <= 0 {
		c.IdleTimeoutMS = 500
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = 2 * time.Minute
	}
	if c.SchedTraceMS == 0 {
		c.SchedTraceMS = 2000
	}
}

// Report is the outcome of a soak.
type Report struct {
	Seed        uint64 `json:"seed"`
	Requested   int    `json:"requested"`       // Config.Runs
	Runs        int    `json:"runs"`            // run requests sent
	Ended       int    `json:"ended"`           // runs whose terminal event arrived
	Completed   int    `json:"completed"`       // final_result completed
	Errored     int    `json:"errored"`         // final_result error
	Blocked     int    `json:"blocked"`         // final_result blocked
	ProtocolErr int    `json:"protocol_errors"` // protocol_error as the terminal event
	// Lost counts requests that never got their terminal event (the host
	// went quiet for RunTimeout, or exited).
	Lost int `json:"lost_terminal_events"`
	// Violations counts frames or runs that broke a rule; Problems keeps
	// the first of them.
	Violations int      `json:"violations"`
	Problems   []string `json:"problems,omitempty"`
	// ErrorCodes counts final_result error codes.
	ErrorCodes map[string]int `json:"error_codes,omitempty"`
	// FaultsInjected counts the faults put into the fake provider, by
	// kind; FaultsServed counts those that met a request.
	FaultsInjected map[string]int `json:"faults_injected"`
	FaultsServed   int            `json:"faults_served"`
	// Retries counts provider_retry events, ToolCalls tool_start events.
	Retries   int `json:"provider_retries"`
	ToolCalls int `json:"tool_calls"`
	Frames    int `json:"frames"`

	Start Sample `json:"start"`
	End   Sample `json:"end"`
	// PeakRSSKiB is the highest VmHWM or VmRSS of any sample;
	// PeakGoroutines the highest goroutine count of any scheduler dump.
	PeakRSSKiB     int64    `json:"peak_rss_kib"`
	PeakGoroutines int      `json:"peak_goroutines"`
	Samples        []Sample `json:"samples"`
	DurationMS     int64    `json:"duration_ms"`
	RunsPerSecond  float64  `json:"runs_per_second"`
	HostExit       string   `json:"host_exit"`
	HostLogTail    string   `json:"host_log_tail,omitempty"`
}

// OK reports whether the soak saw no violation and lost no terminal event.
func (r *Report) OK() bool {
	return r.Violations == 0 && r.Lost == 0 && r.Runs == r.Requested && r.Ended == r.Requested
}

const maxProblems = 20

func (r *Report) problem(format string, args ...any) {
	r.Violations++
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// batchRuns is how many runs share one fake provider server. The fake
// keeps every request it receives; a fresh server per batch bounds the
// driver's own memory, and the host meets a new address now and then.
const batchRuns = 250

// maxFrame is the protocol's frame bound, newline included (CONTRACT §3).
const maxFrame = 1 << 20

// frame is the envelope of one event, as read off the host's stdout.
type frame struct {
	ProtocolVersion *int               `json:"protocol_version"`
	RequestID       *string            `json:"request_id"`
	Seq             int                `json:"seq"`
	Type            protocol.EventType `json:"type"`
	RunID           string             `json:"run_id"`
	SessionID       string             `json:"session_id"`
	Data            json.RawMessage    `json:"data"`
}

// pending is a request written to the host whose terminal event has not
// been read yet.
type pending struct {
	requestID string
	command   string
	plan      *runPlan // nil for hello and shutdown
	sessionID string
	frames    []spec.Frame
	events    []spec.RunEvent
	openTools map[string]bool
	batch     *batch
	ended     bool
}

// batch is one fake provider server and the runs it answers.
type batch struct {
	srv     *fakeprovider.Server
	last    int // index of its last run
	answers map[string]bool
	used    map[string]bool // answers a completed run already gave
}

type driver struct {
	cfg     Config
	rng     *rand.Rand
	rep     *Report
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	frames  chan []byte
	readErr chan error
	quit    chan struct{} // closed by finish: readFrames stops passing lines
	watch   *goroutineWatch
	start   time.Time
	ws      string
	home    string
	session string

	batches map[int]*batch
	plans   map[int]*runPlan // planned runs not sent yet
	queue   []*pending
}

// Run soaks the host of cfg.HostPath and returns the report; the error
// is for a soak that could not be carried out at all (the host did not
// start, the scratch directory could not be made). A soak that found
// problems returns its report and a nil error: see Report.OK.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.HostPath == "" {
		return nil, errors.New("soak: no host binary given")
	}
	// The host runs in the workspace: a relative path must not change
	// meaning.
	if abs, err := filepath.Abs(cfg.HostPath); err == nil {
		cfg.HostPath = abs
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "octet-soak")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	d := &driver{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		rep: &Report{Seed: cfg.Seed, Requested: cfg.Runs, ErrorCodes: map[string]int{}, FaultsInjected: map[string]int{}},
		ws:  filepath.Join(dir, "workspace"), home: filepath.Join(dir, "home"),
		session: filepath.Join(dir, "sessions"),
		batches: map[int]*batch{},
		plans:   map[int]*runPlan{},
		frames:  make(chan []byte, 256),
		readErr: make(chan error, 1),
		quit:    make(chan struct{}),
		watch:   newGoroutineWatch(cfg.HostLog),
	}
	if err := d.prepare(); err != nil {
		return nil, err
	}
	if err := d.startHost(); err != nil {
		return nil, err
	}
	defer d.closeBatches(-1)
	d.loop(ctx)
	d.finish()
	return d.rep, nil
}

// prepare writes the workspace the tool calls look at.
func (d *driver) prepare() error {
	for _, p := range []string{d.ws, d.home, d.session, filepath.Join(d.ws, "src")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"notes.txt":    "soak notes: the host reads this file many times.\n",
		"src/main.txt": "package soak\n\nfunc main() {}\n",
		"README.txt":   "A workspace for the soak.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(d.ws, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) startHost() error {
	level := "warn"
	if d.cfg.HostLog != nil {
		level = "trace"
	}
	d.cmd = exec.Command(d.cfg.HostPath, "--log-level", level,
		"--provider-idle-timeout-ms", strconv.Itoa(d.cfg.IdleTimeoutMS))
	env := append(os.Environ(), "HOME="+d.home)
	if d.cfg.SchedTraceMS > 0 {
		env = append(env, fmt.Sprintf("GODEBUG=schedtrace=%d,scheddetail=1", d.cfg.SchedTraceMS))
	}
	d.cmd.Env = env
	d.cmd.Dir = d.ws
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("soak: starting the host: %w", err)
	}
	d.start = time.Now()
	go d.watch.consume(stderr)
	go d.readFrames(stdout)
	return nil
}

// readFrames passes each stdout line to the loop; a line longer than the
// frame bound is passed cut (and reported by the loop).
func (d *driver) readFrames(r io.Reader) {
	br := bufio.NewReaderSize(r, maxFrame+1)
	pass := func(line []byte) bool {
		select {
		case d.frames <- append([]byte(nil), line...):
			return true
		case <-d.quit:
			return false
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Oversized: no newline within the bound. The rest of the
			// line is skipped.
			if !pass(line) {
				return
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 && !pass(line) {
			return
		}
		if err != nil {
			d.readErr <- err
			return
		}
	}
}

func (d *driver) sample() Sample {
	s := sampleProc(d.cmd.Process.Pid)
	s.Runs = d.rep.Ended
	s.Goroutines, _ = d.watch.goroutines()
	s.ElapsedMS = time.Since(d.start).Milliseconds()
	return s
}

// loop sends the requests and checks the frames until every request has
// ended, the host stops answering, or ctx ends.
func (d *driver) loop(ctx context.Context) {
	// The start figures are taken once hello has been answered: the host
	// is then up, and has not run anything yet.
	if err := d.send(&pending{requestID: "hello-1", command: "hello"}, map[string]any{"command": "hello"}); err != nil {
		d.rep.problem("writing hello: %v", err)
		return
	}
	select {
	case line := <-d.frames:
		d.frame(line)
	case err := <-d.readErr:
		d.rep.problem("host stdout ended before hello was answered: %v", err)
		return
	case <-time.After(d.cfg.RunTimeout):
		d.rep.problem("hello not answered within %v", d.cfg.RunTimeout)
		return
	}
	if d.cfg.SchedTraceMS > 0 {
		// Let the first scheduler dump come, for a goroutine count at
		// the start too.
		deadline := time.Now().Add(2*time.Duration(d.cfg.SchedTraceMS)*time.Millisecond + time.Second)
		for n, _ := d.watch.goroutines(); n < 0 && time.Now().Before(deadline); n, _ = d.watch.goroutines() {
			time.Sleep(20 * time.Millisecond)
		}
	}
	d.rep.Start = d.sample()
	d.rep.Samples = append(d.rep.Samples, d.rep.Start)
	next := 0
	shutdownSent := false
	timer := time.NewTimer(d.cfg.RunTimeout)
	defer timer.Stop()
	for {
		for next < d.cfg.Runs && len(d.queue) < d.cfg.Concurrency {
			if err := d.sendRun(next); err != nil {
				d.rep.problem("writing run %d: %v", next, err)
				d.lose()
				return
			}
			next++
		}
		if next == d.cfg.Runs && !shutdownSent && len(d.queue) == 0 {
			d.send(&pending{requestID: "shutdown-1", command: "shutdown"}, map[string]any{"command": "shutdown"})
			shutdownSent = true
		}
		if shutdownSent && len(d.queue) == 0 {
			return
		}
		timer.Reset(d.cfg.RunTimeout)
		select {
		case line := <-d.frames:
			d.frame(line)
		case err := <-d.readErr:
			// Drain what was read before the end.
			for {
				select {
				case line := <-d.frames:
					d.frame(line)
					continue
				default:
				}
				break
			}
			if len(d.queue) > 0 {
				d.rep.problem("host stdout ended (%v) with %d requests outstanding", err, len(d.queue))
				d.lose()
			}
			return
		case <-timer.C:
			d.rep.problem("no frame for %v with %d requests outstanding (oldest %s)", d.cfg.RunTimeout, len(d.queue), d.queue[0].requestID)
			d.lose()
			return
		case <-ctx.Done():
			d.rep.problem("interrupted with %d requests outstanding: %v", len(d.queue), ctx.Err())
			d.lose()
			return
		}
	}
}

// lose counts the outstanding requests as lost terminal events.
func (d *driver) lose() {
	for _, p := range d.queue {
		if p.plan != nil {
			d.rep.Lost++
		}
	}
	d.queue = nil
}

func (d *driver) send(p *pending, body map[string]any) error {
	body["protocol_version"] = 1
	body["request_id"] = p.requestID
	line, err := json.Marshal(body)
	if err != nil {
		return err
	}
	d.queue = append(d.queue, p)
	_, err = d.stdin.Write(append(line, '\n'))
	return err
}

// sendRun writes run i, first making its batch's fake provider and
// injecting the run's faults.
func (d *driver) sendRun(i int) error {
	b, err := d.batchFor(i)
	if err != nil {
		return err
	}
	plan := d.plans[i]
	delete(d.plans, i)
	if d.cfg.FaultRate > 0 && d.rng.Float64() < d.cfg.FaultRate {
		for range 1 + d.rng.IntN(2) {
			name, f := pickFault(d.rng, d.cfg.IdleTimeoutMS)
			b.srv.InjectFault(f)
			d.rep.FaultsInjected[name]++
			plan.faults = append(plan.faults, name)
		}
	}
	d.rep.Runs++
	p := &pending{
		requestID: fmt.Sprintf("req-%d", i),
		command:   "run",
		plan:      plan,
		openTools: map[string]bool{},
		batch:     b,
	}
	body := map[string]any{
		"command":       "run",
		"run_id":        fmt.Sprintf("run-%d", i),
		"workspace":     d.ws,
		"model":         "soak-model",
		"prompt":        fmt.Sprintf("Soak run %d: look around and answer.", i),
		"session_dir":   d.session,
		"provider":      "fake",
		"base_url":      b.srv.BaseURL(plan.mode),
		"api_key":       "soak-key-0123456789",
		"provider_mode": string(plan.mode),
		"tools":         []string{"read", "ls", "grep", "find"},
	}
	// Two runs in three belong to a session of up to 20 runs, so
	// sessions are created, resumed and left behind all along without
	// one growing for ever.
	if i%3 != 0 {
		p.sessionID = fmt.Sprintf("soak-%d", i/30)
		body["session_id"] = p.sessionID
	}
	return d.send(p, body)
}

func (d *driver) batchFor(i int) (*batch, error) {
	n := i / batchRuns
	if b, ok := d.batches[n]; ok {
		return b, nil
	}
	// A new batch: plan its runs, and give its server their turns in
	// order (the host serves runs one at a time, so a batch's runs take
	// their turns in run order; a run that fails leaves its turns to the
	// next).
	first := n * batchRuns
	last := min(first+batchRuns, d.cfg.Runs) - 1
	b := &batch{last: last, answers: map[string]bool{}, used: map[string]bool{}}
	var turns []fakeprovider.Turn
	plans := make([]runPlan, 0, last-first+1)
	for j := first; j <= last; j++ {
		p := planRun(d.rng, j, d.cfg.ToolRate)
		plans = append(plans, p)
		turns = append(turns, p.turns...)
		b.answers[p.answer] = true
	}
	srv, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}, APIKey: "soak-key-0123456789"})
	if err != nil {
		return nil, err
	}
	b.srv = srv
	d.batches[n] = b
	for k := range plans {
		d.plans[plans[k].index] = &plans[k]
	}
	return b, nil
}

// frame checks one line of the host's stdout and files it under its
// request.
func (d *driver) frame(line []byte) {
	d.rep.Frames++
	if len(line) > maxFrame || !bytes.HasSuffix(line, []byte("\n")) {
		d.rep.problem("frame of %d bytes without a newline within the %d-byte bound", len(line), maxFrame)
		return
	}
	if !utf8.Valid(line) {
		d.rep.problem("frame is not valid UTF-8: %.200q", line)
		return
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		d.rep.problem("frame is not a JSON event (%v): %.200s", err, line)
		return
	}
	if f.ProtocolVersion == nil || *f.ProtocolVersion != 1 {
		d.rep.problem("frame without protocol_version 1: %.200s", line)
	}
	if len(d.queue) == 0 {
		d.rep.problem("frame with no request outstanding: %.200s", line)
		return
	}
	p := d.queue[0]
	if f.RequestID == nil || *f.RequestID != p.requestID {
		// Requests are served one at a time in arrival order: every
		// frame belongs to the oldest outstanding request.
		got := "null"
		if f.RequestID != nil {
			got = strconv.Quote(*f.RequestID)
		}
		d.rep.problem("frame of request %s while %s is outstanding (seq %d, type %s)", got, p.requestID, f.Seq, f.Type)
		return
	}
	terminal := f.Type == "final_result" || f.Type == "protocol_error" ||
		(p.command != "run" && string(f.Type) == p.command)
	if f.Seq != len(p.frames)+1 {
		d.rep.problem("%s: seq %d after %d (type %s)", p.requestID, f.Seq, len(p.frames), f.Type)
	}
	p.frames = append(p.frames, spec.Frame{RequestID: f.RequestID, Seq: f.Seq, Type: f.Type, Terminal: terminal})
	if p.plan != nil {
		d.runFrame(p, &f)
	}
	if terminal {
		d.end(p, &f)
	}
}

// runFrame checks a run event's envelope and keeps what the end checks.
func (d *driver) runFrame(p *pending, f *frame) {
	if want := fmt.Sprintf("run-%d", p.plan.index); f.RunID != want {
		d.rep.problem("%s: %s with run_id %q, want %q", p.requestID, f.Type, f.RunID, want)
	}
	if f.SessionID != p.sessionID && f.Type != "protocol_error" {
		d.rep.problem("%s: %s with session_id %q, want %q", p.requestID, f.Type, f.SessionID, p.sessionID)
	}
	ev := spec.RunEvent{Type: f.Type}
	var data struct {
		Status string `json:"status"`
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal(f.Data, &data); err != nil {
		d.rep.problem("%s: %s data is not an object: %v", p.requestID, f.Type, err)
	}
	switch f.Type {
	case protocol.TypeSettled, protocol.TypeFinalResult:
		ev.Status = data.Status
	case "provider_retry":
		d.rep.Retries++
	case "tool_start":
		d.rep.ToolCalls++
		if p.openTools[data.CallID] {
			d.rep.problem("%s: tool_start %q twice", p.requestID, data.CallID)
		}
		p.openTools[data.CallID] = true
	case "tool_finish":
		if !p.openTools[data.CallID] {
			d.rep.problem("%s: tool_finish %q without its tool_start", p.requestID, data.CallID)
		}
		delete(p.openTools, data.CallID)
	}
	if f.Type != "protocol_error" {
		p.events = append(p.events, ev)
	}
}

// end checks a request whose terminal event arrived and retires it.
func (d *driver) end(p *pending, f *frame) {
	d.queue = d.queue[1:]
	if err := errors.Join(spec.All(p.frames), spec.Complete(p.frames)); err != nil {
		d.rep.problem("%s: %v", p.requestID, err)
	}
	if p.plan == nil {
		if string(f.Type) != p.command {
			d.rep.problem("%s: answered with %s: %.300s", p.requestID, f.Type, f.Data)
		}
		return
	}
	d.rep.Ended++
	if f.Type == "protocol_error" {
		d.rep.ProtocolErr++
		d.rep.problem("%s: protocol_error %.300s", p.requestID, f.Data)
	} else {
		if err := errors.Join(spec.RunLifecycle(p.events), spec.RunComplete(p.events)); err != nil {
			d.rep.problem("%s: %v", p.requestID, err)
		}
		d.result(p, f)
	}
	if len(p.openTools) > 0 {
		d.rep.problem("%s: %d tool calls started and never finished", p.requestID, len(p.openTools))
	}
	if d.rep.Ended%d.cfg.ReportEvery == 0 || d.rep.Ended == d.cfg.Runs {
		s := d.sample()
		d.rep.Samples = append(d.rep.Samples, s)
		if d.rep.Ended == d.cfg.Runs {
			d.rep.End = s
		}
		if d.cfg.Progress != nil {
			d.cfg.Progress(s, d.rep)
		}
	}
	if p.plan.index == p.batch.last {
		d.closeBatches(p.plan.index / batchRuns)
	}
}

// result checks a run's final_result and counts its status.
func (d *driver) result(p *pending, f *frame) {
	var fr struct {
		Status string `json:"status"`
		Output string `json:"output"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(f.Data, &fr); err != nil {
		d.rep.problem("%s: final_result data: %v", p.requestID, err)
		return
	}
	switch fr.Status {
	case "completed":
		d.rep.Completed++
		// The answer is one of its batch's scripted answers (a run that
		// failed leaves its turns to the next), whole, and given once: a
		// retried attempt's provisional text must not be part of it.
		switch {
		case !p.batch.answers[fr.Output]:
			d.rep.problem("%s: completed with an output that is no scripted answer: %.200q", p.requestID, fr.Output)
		case p.batch.used[fr.Output]:
			d.rep.problem("%s: completed with an answer another run already gave: %.200q", p.requestID, fr.Output)
		default:
			p.batch.used[fr.Output] = true
		}
	case "error":
		d.rep.Errored++
		code := "(none)"
		if fr.Error != nil {
			code = fr.Error.Code
		}
		d.rep.ErrorCodes[code]++
	case "blocked":
		d.rep.Blocked++
		code := "(none)"
		if fr.Error != nil {
			code = fr.Error.Code
		}
		d.rep.ErrorCodes["blocked:"+code]++
	default:
		d.rep.problem("%s: final_result status %q", p.requestID, fr.Status)
	}
}

// closeBatches closes the fake servers of batches up to n (all when n is
// negative), counting the faults they served.
func (d *driver) closeBatches(n int) {
	for k, b := range d.batches {
		if n >= 0 && k > n {
			continue
		}
		for _, r := range b.srv.Requests() {
			if r.Fault != "" {
				d.rep.FaultsServed++
			}
		}
		b.srv.Close()
		delete(d.batches, k)
	}
}

// finish ends the host and completes the report.
func (d *driver) finish() {
	if d.rep.End.ElapsedMS == 0 {
		d.rep.End = d.sample()
		d.rep.Samples = append(d.rep.Samples, d.rep.End)
	}
	close(d.quit)
	d.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		d.rep.problem("the host did not exit within 15 s of shutdown; killed")
	}
	if err != nil {
		d.rep.HostExit = err.Error()
		if d.rep.Lost == 0 {
			d.rep.problem("host exit: %v", err)
		}
	} else {
		d.rep.HostExit = "exit status 0"
	}
	select { // the log's last lines (Config.HostLog)
	case <-d.watch.done:
	case <-time.After(5 * time.Second):
	}
	elapsed := time.Since(d.start)
	d.rep.DurationMS = elapsed.Milliseconds()
	if elapsed > 0 {
		d.rep.RunsPerSecond = float64(d.rep.Ended) / elapsed.Seconds()
	}
	// Linux updates VmHWM lazily (it may read lower than an RSS seen
	// before): the peak is the highest of both over every sample.
	for _, s := range d.rep.Samples {
		d.rep.PeakRSSKiB = max(d.rep.PeakRSSKiB, s.HWMKiB, s.RSSKiB)
	}
	_, d.rep.PeakGoroutines = d.watch.goroutines()
	d.rep.HostLogTail = d.watch.logTail()
}
