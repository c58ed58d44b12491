package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/fsm/tracecheck"
	"octet.dev/host/internal/schematest"
	"octet.dev/host/internal/testbin"
)

// Binaries built once by TestMain: the real host, and one built with the
// straytest tag that makes stray writes to stdout at start-up.
var hostBin, strayBin string

func TestMain(m *testing.M) {
	hostBin = testbin.MustBuild(testbin.Host)
	stray := testbin.Host
	stray.Tags = []string{"straytest"}
	strayBin = testbin.MustBuild(stray)
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// proc is a running host with pipes.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *syncWriter
	// schema validates every event read and every request the host
	// accepted against the JSON Schema.
	schema schematest.Session
}

func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	return startEnv(t, nil, bin, args...)
}

// startEnv starts bin with extra environment variables.
func startEnv(t *testing.T, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncWriter{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: stderr}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return p
}

// syncWriter is a buffer the exec package's copier writes while the test
// may read it.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	p.schema.Sent([]byte(line))
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to the host: %v", err)
	}
}

type event struct {
	ProtocolVersion int             `json:"protocol_version"`
	RequestID       *string         `json:"request_id"`
	Seq             int             `json:"seq"`
	Type            string          `json:"type"`
	Data            json.RawMessage `json:"data"`
}

func (p *proc) next(t *testing.T) event {
	t.Helper()
	line, err := p.stdout.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading an event: %v (stderr: %s)", err, p.stderr)
	}
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatalf("stdout carried a non-protocol line %q: %v", line, err)
	}
	p.schema.Got(t, line)
	return ev
}

// exit closes stdin unless asked not to and returns the exit status.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("host died of signal %v", ws.Signal())
		}
		return ee.ExitCode()
	default:
		t.Fatalf("wait: %v", err)
		return -1
	}
}

func TestHelloThenEOFExitsZero(t *testing.T) {
	p := start(t, hostBin)
	p.send(t, `{"protocol_version":1,"request_id":"probe-1","command":"hello"}`)
	ev := p.next(t)
	if ev.Type != "hello" || ev.Seq != 1 || ev.RequestID == nil || *ev.RequestID != "probe-1" {
		t.Fatalf("hello answered with %+v", ev)
	}
	var h struct {
		ProtocolVersion   int             `json:"protocol_version"`
		MaxFrameBytes     int             `json:"max_frame_bytes"`
		MaxConcurrentRuns int             `json:"max_concurrent_runs"`
		Commands          []string        `json:"commands"`
		Features          map[string]bool `json:"features"`
	}
	if err := json.Unmarshal(ev.Data, &h); err != nil {
		t.Fatal(err)
	}
	if h.ProtocolVersion != 1 || h.MaxFrameBytes != 1048576 || h.MaxConcurrentRuns != 1 ||
		strings.Join(h.Commands, ",") != "hello,models,run,shutdown" ||
		!h.Features["process_group_abort"] || h.Features["in_band_abort"] {
		t.Errorf("hello data %s", ev.Data)
	}
	p.stdin.Close()
	if rest, _ := io.ReadAll(p.stdout); len(rest) != 0 {
		t.Errorf("output after EOF: %q", rest)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after EOF, want 0; stderr: %s", code, p.stderr)
	}
}

func TestShutdownFlushesAndExitsZero(t *testing.T) {
	p := start(t, hostBin)
	p.send(t, `{"protocol_version":1,"request_id":"m","command":"models","offline":true}`)
	if ev := p.next(t); ev.Type != "models" {
		t.Fatalf("models answered with %s", ev.Type)
	}
	// One write holding both lines: the host may exit as soon as it has read
	// the shutdown, so a second write could meet a closed pipe. The late
	// hello is already in the host's input buffer and must be ignored.
	p.send(t, `{"protocol_version":1,"request_id":"bye","command":"shutdown"}`+"\n"+
		`{"protocol_version":1,"request_id":"late","command":"hello"}`)
	if ev := p.next(t); ev.Type != "shutdown" || ev.Seq != 1 {
		t.Fatalf("shutdown answered with %+v", ev)
	}
	if rest, _ := io.ReadAll(p.stdout); len(rest) != 0 {
		t.Errorf("output after shutdown: %q", rest)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after shutdown, want 0", code)
	}
}

func TestMalformedLinesKeepServing(t *testing.T) {
	p := start(t, hostBin)
	for _, l := range []string{"{", "[]", `{"protocol_version":1,"request_id":"x","command":"hello","y":1}`, strings.Repeat("z", 3<<20)} {
		p.send(t, l)
		if ev := p.next(t); ev.Type != "protocol_error" {
			t.Fatalf("%.20q answered with %s", l, ev.Type)
		}
	}
	p.send(t, `{"protocol_version":1,"request_id":"ok","command":"hello"}`)
	if ev := p.next(t); ev.Type != "hello" {
		t.Fatalf("hello after bad lines answered with %s", ev.Type)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestStrayWritesNeverReachProtocol runs a host that, at start-up, prints
// with fmt, writes os.Stdout and raw fd 1, and starts children writing to
// the stdout they inherit: all of it must land on stderr.
func TestStrayWritesNeverReachProtocol(t *testing.T) {
	p := start(t, strayBin)
	p.send(t, `{"protocol_version":1,"request_id":"h","command":"hello"}`)
	p.stdin.Close()
	out, _ := io.ReadAll(p.stdout)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"protocol_version":1,"request_id":"h","seq":1,"type":"hello"`) {
		t.Fatalf("stdout is not exactly one hello frame: %q", out)
	}
	for _, want := range []string{"fmt.Println", "os.Stdout", "raw fd 1", "child stdout", "child fd1", "inherited fd 1"} {
		if !strings.Contains(p.stderr.String(), "stray: "+want) {
			t.Errorf("stderr lacks the stray write %q: %s", want, p.stderr)
		}
	}
}

func TestSignalWhileIdleExits128PlusSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			p := start(t, hostBin)
			p.send(t, `{"protocol_version":1,"request_id":"h","command":"hello"}`)
			p.next(t) // the host is up and idle
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != 128+int(sig) {
				t.Errorf("exit %d after %v, want %d", code, sig, 128+int(sig))
			}
		})
	}
}

// TestStdoutGoneExitsOne closes the reading end of the host's stdout: the
// next write fails, and the host exits 1 with a diagnostic on stderr.
func TestStdoutGoneExitsOne(t *testing.T) {
	cmd := exec.Command(hostBin)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close() // nobody reads the protocol any more
	io.WriteString(stdin, `{"protocol_version":1,"request_id":"h","command":"hello"}`+"\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		cmd.Process.Kill()
		t.Fatal("host did not exit after its stdout was closed")
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", werr)
	}
	if !strings.Contains(stderr.String(), "stdout") {
		t.Errorf("no stdout diagnostic on stderr: %s", stderr.String())
	}
}

func TestFlags(t *testing.T) {
	out, err := exec.Command(hostBin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "octet-host ") {
		t.Errorf("--version: %q, %v", out, err)
	}
	out, err = exec.Command(hostBin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "native-host protocol 1") || !strings.Contains(string(out), "-log-level") {
		t.Errorf("--help: %q, %v", out, err)
	}
	for _, args := range [][]string{{"--bogus"}, {"--log-level", "loud"}, {"extra"}, {"--provider-idle-timeout-ms", "0"}} {
		err := exec.Command(hostBin, args...).Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
	}
}

// TestStderrLogLevels: stderr carries zerolog JSON lines (level, time,
// component, message), whether the line comes from the binary or, through
// the slog bridge, from the NDJSON adapter and the runtime; --log-level
// filters them, and only trace shows state machine transitions.
func TestStderrLogLevels(t *testing.T) {
	for _, lvl := range []string{"trace", "debug", "info"} {
		p := start(t, hostBin, "--log-level", lvl)
		p.send(t, "{")
		if ev := p.next(t); ev.Type != "protocol_error" {
			t.Fatalf("got %s", ev.Type)
		}
		p.send(t, `{"protocol_version":1,"request_id":"h","command":"hello"}`)
		if ev := p.next(t); ev.Type != "hello" {
			t.Fatalf("got %s", ev.Type)
		}
		p.stdin.Close()
		p.wait(t)
		var malformed, transitions int
		for _, line := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
			if line == "" {
				continue
			}
			var l struct {
				Level, Time, Component, Message, Code, Machine, Trigger, From, To string
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("--log-level %s: stderr line %q: %v", lvl, line, err)
			}
			if l.Level == "" || l.Time == "" || l.Component != "octet-host" || l.Message == "" {
				t.Errorf("--log-level %s: line %s lacks a zerolog field", lvl, line)
			}
			switch l.Message {
			case "malformed request":
				malformed++
				if l.Level != "debug" || l.Code == "" {
					t.Errorf("--log-level %s: %s", lvl, line)
				}
			case "state machine transition":
				transitions++
				if l.Level != "trace" || l.Machine != "session" || l.Trigger == "" || l.From == "" || l.To == "" {
					t.Errorf("--log-level %s: %s", lvl, line)
				}
			}
		}
		if want := map[string]int{"trace": 1, "debug": 1, "info": 0}[lvl]; malformed != want {
			t.Errorf("--log-level %s: %d malformed request lines, want %d: %s", lvl, malformed, want, p.stderr)
		}
		// malformed, request, terminal, eof
		if want := map[string]int{"trace": 4, "debug": 0, "info": 0}[lvl]; transitions != want {
			t.Errorf("--log-level %s: %d transition lines, want %d: %s", lvl, transitions, want, p.stderr)
		}
		if lvl == "trace" {
			// The lines replay against tla/Session.tla (fsm/tracecheck).
			c, err := tracecheck.Load(func(f string) ([]byte, error) { return os.ReadFile(filepath.Join("..", "..", "tla", f)) })
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Log([]byte(p.stderr.String())); err != nil || c.Stats().ByMachine["session"] != 4 {
				t.Errorf("trace check: %v (%s)", err, c.Stats())
			}
		}
	}
}
