package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"octet.dev/host/internal/schematest"
	"octet.dev/host/internal/testbin"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec/schema"
)

// The built binary, shared by the tests (TestMain builds it).
var octetBin string

func TestMain(m *testing.M) {
	spec := testbin.Octet
	spec.Race = os.Getenv("OCTET_E2E_RACE") != "" // the binary under the race detector too
	octetBin = testbin.MustBuild(spec)
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// env is one test's fake provider, home and workspace.
type env struct {
	fake *fakeprovider.Server
	home string
	ws   string
}

func newEnv(t testing.TB, turns ...fakeprovider.Turn) *env {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	return &env{fake: fake, home: t.TempDir(), ws: t.TempDir()}
}

// args are the flags of a run on the fake's Chat Completions route, then
// extra.
func (e *env) args(extra ...string) []string {
	return append([]string{"--model", "fake-model", "--provider", "fake", "--base-url", e.fake.BaseURL(fakeprovider.ModeChat),
		"--workspace", e.ws}, extra...)
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(octetBin, args...)
	cmd.Env = append(os.Environ(), "HOME="+e.home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// result is a finished print-mode process.
type result struct {
	stdout, stderr string
	code           int
}

func (e *env) print(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	cmd := e.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	return result{out.String(), errb.String(), exitCode(t, err)}
}

func exitCode(t testing.TB, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("octet died of signal %v", ws.Signal())
		}
		return ee.ExitCode()
	default:
		t.Fatalf("wait: %v", err)
		return -1
	}
}

var done = fakeprovider.Turn{Text: "The answer is 42.", Usage: fakeprovider.Usage{Input: 10, Output: 3}}

func readTurn(path string) fakeprovider.Turn {
	return fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "read", Arguments: `{"path":"` + path + `"}`}}}
}

func bashTurn(command string) fakeprovider.Turn {
	args, _ := json.Marshal(map[string]string{"command": command})
	return fakeprovider.Turn{ToolCalls: []fakeprovider.ToolCall{{Name: "bash", Arguments: string(args)}}}
}

func TestPrintAnswerOnStdoutOnly(t *testing.T) {
	e := newEnv(t, readTurn("notes.txt"), done)
	os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("forty-two\n"), 0o644)
	r := e.print(t, "", e.args("-p", "what is in notes.txt?")...)
	if r.code != 0 || r.stdout != "The answer is 42.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// Not a terminal: plain progress lines on stderr, the tool among them.
	for _, want := range []string{"octet: model fake/fake-model, session ", "octet: step 1: read", "octet: completed: 2 step(s), 1 tool call(s)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "\x1b[") {
		t.Errorf("live status escapes on a stderr that is not a terminal:\n%q", r.stderr)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 2 || !strings.Contains(fmt.Sprint(reqs[1].Body["messages"]), "forty-two") {
		t.Fatalf("the model did not get the tool's result: %d requests", len(reqs))
	}
}

func TestPrintPromptFromStdin(t *testing.T) {
	e := newEnv(t, done)
	r := e.print(t, "a prompt from stdin\n", e.args("-p", "-")...)
	if r.code != 0 || r.stdout != "The answer is 42.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 1 || !strings.Contains(fmt.Sprint(reqs[0].Body["messages"]), "a prompt from stdin") {
		t.Fatalf("the prompt did not reach the model: %+v", reqs)
	}
	// An empty stdin prompt is a usage error; nothing is sent.
	if r := e.print(t, "\n", e.args("-p", "-")...); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "the prompt is empty") {
		t.Fatalf("empty stdin prompt: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestPrintExitCodes(t *testing.T) {
	t.Run("usage", func(t *testing.T) {
		e := newEnv(t)
		for _, args := range [][]string{
			{"-p", "x"}, // no --model
			{"--model", "m"},
			{"--model", "m", "--mode", "chat"},
			{"--model", "m", "--mode", "rpc", "-p", "x"},
			{"--model", "m", "-p", "x", "stray"},
			{"--model", "m", "-p", "x", "--no-such-flag"},
			{"--model", "m", "-p", "x", "--max-steps", "0"},
			{"--model", "m", "-p", "x", "--api-key-env", "OCTET_TEST_UNSET_KEY"},
			{"--model", "m", "-p", "x", "--provider-idle-timeout-ms", "0"},
			{"--login", "no-such-provider"},
			{"--login", "x", "--logout", "x"},
			{"--headless", "--model", "m", "-p", "x"},
		} {
			if r := e.print(t, "", args...); r.code != 2 || r.stdout != "" || r.stderr == "" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 with a reason on stderr", args, r.code, r.stdout, r.stderr)
			}
		}
		// The Copilot login is wired under both names: without an OAuth
		// client id in the operator's settings it says what to configure,
		// before any request, and leaves stdout empty.
		for _, name := range []string{"copilot", "github-copilot"} {
			r := e.print(t, "", "--login", name, "--headless")
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "client_id") {
				t.Errorf("--login %s without a client id: exit %d, stdout %q, stderr %q", name, r.code, r.stdout, r.stderr)
			}
		}
		if r := e.print(t, "", "--logout", "copilot"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "nothing was deleted") {
			t.Errorf("--logout copilot without a login: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		r := e.print(t, "", "--login", "no-such-provider")
		if !strings.Contains(r.stderr, `unknown provider "no-such-provider"`) || !strings.Contains(r.stderr, "copilot, github-copilot") {
			t.Errorf("--login of an unknown provider: %q", r.stderr)
		}
		r = e.print(t, "", "--model", "m", "-p", "x", "--tools", "read", "--mode", "print", "--allow-shell", "--version")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "octet ") {
			t.Errorf("--version: exit %d, stdout %q", r.code, r.stdout)
		}
	})
	t.Run("error", func(t *testing.T) {
		e := newEnv(t, done)
		e.fake.InjectFault(fakeprovider.FaultStatus{Code: 401})
		r := e.print(t, "", e.args("-p", "x")...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "octet: error: auth_failed") {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
		// A refused run (an unknown catalog model) is an error too.
		r = e.print(t, "", "--model", "no-such-model", "-p", "x", "--workspace", e.ws)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "refused") {
			t.Fatalf("refused run: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		e := newEnv(t, readTurn("a"), readTurn("b"), done)
		r := e.print(t, "", e.args("-p", "x", "--max-steps", "1")...)
		if r.code != 3 || r.stdout != "" || !strings.Contains(r.stderr, "blocked after 1 step(s): max_steps_reached") {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("usage uncertain warning", func(t *testing.T) {
		e := newEnv(t, done)
		e.fake.InjectFault(fakeprovider.FaultStatus{Code: 500})
		r := e.print(t, "", e.args("-p", "x")...)
		if r.code != 0 || r.stdout != "The answer is 42.\n" {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if strings.Count(r.stderr, "warning: usage is uncertain") != 1 || !strings.Contains(r.stderr, "retry 1/") {
			t.Fatalf("stderr lacks one usage warning and the retry:\n%s", r.stderr)
		}
	})
}

// sessionFile returns the one session file under home.
func sessionFile(t *testing.T, home string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".octet", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	return files[0]
}

// A signal cancels the run, which records its end in the session (and
// closes it) before the process exits 128+n with nothing on stdout.
func TestPrintSIGTERM(t *testing.T) {
	e := newEnv(t, done)
	e.fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 1})
	cmd := e.command(e.args("-p", "x", "--session", "sig-1")...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(e.fake.Requests()) == 1 }, "the model request")
	time.Sleep(50 * time.Millisecond) // into the stall
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd.Wait()); code != 143 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, out.String(), errb.String())
	}
	data, err := os.ReadFile(sessionFile(t, e.home))
	if err != nil || !strings.Contains(string(data), `"type":"run_end"`) || !strings.Contains(string(data), `"status":"error"`) {
		t.Fatalf("the session does not record the run's end: %v\n%s", err, data)
	}
	// The lock was released: a resume works.
	e.fake.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{done}})
	if r := e.print(t, "", e.args("-p", "again", "--session", "sig-1")...); r.code != 0 {
		t.Fatalf("resume after SIGTERM: exit %d\n%s", r.code, r.stderr)
	}
}

func waitFor(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rpcProc is a running `octet --mode rpc`.
type rpcProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (e *env) rpc(t testing.TB, extra ...string) *rpcProc {
	t.Helper()
	p, _ := startRPC(t, e.command(e.args(append([]string{"--mode", "rpc"}, extra...)...)...))
	return p
}

// startRPC starts cmd, an `octet --mode rpc`, and returns it with its
// stdout pipe (which the rpcProc reads); the test's end kills its process
// group.
func startRPC(t testing.TB, cmd *exec.Cmd) (*rpcProc, io.ReadCloser) {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	p := &rpcProc{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), stderr: &syncBuf{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return p, stdout
}

func (p *rpcProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing to octet: %v", err)
	}
}

// line is one output line, decoded.
type line map[string]any

func (l line) typ() string { s, _ := l["type"].(string); return s }

func (p *rpcProc) next() line {
	p.t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := p.out.ReadBytes('\n'); ch <- res{b, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("reading octet's output: %v; stderr:\n%s", r.err, p.stderr)
		}
		var l line
		if err := json.Unmarshal(r.b, &l); err != nil {
			p.t.Fatalf("output line is not JSON: %q", r.b)
		}
		schematest.CheckRPCLine(p.t, r.b) // every line the tests see
		return l
	case <-time.After(15 * time.Second):
		p.t.Fatalf("no output line within 15 s; stderr:\n%s", p.stderr)
		return nil
	}
}

// until reads lines until one of type typ (returning it and those before).
func (p *rpcProc) until(typ string) (line, []line) {
	p.t.Helper()
	var seen []line
	for {
		l := p.next()
		if l.typ() == typ {
			return l, seen
		}
		seen = append(seen, l)
	}
}

// response reads until the next response and checks its command.
func (p *rpcProc) response(command string) (line, []line) {
	p.t.Helper()
	r, seen := p.until("response")
	if r["command"] != command {
		p.t.Fatalf("response to %s expected, got %v", command, r)
	}
	return r, seen
}

func data(l line) map[string]any { d, _ := l["data"].(map[string]any); return d }

// types lists the lines' types, consecutive model_delta lines as one.
func types(ls []line) string {
	var s []string
	for _, l := range ls {
		if l.typ() == "model_delta" && len(s) > 0 && s[len(s)-1] == "model_delta" {
			continue
		}
		s = append(s, l.typ())
	}
	return strings.Join(s, ",")
}

func (p *rpcProc) close() int {
	p.t.Helper()
	p.stdin.Close()
	rest, _ := io.ReadAll(p.out)
	code := exitCode(p.t, p.cmd.Wait())
	if len(rest) != 0 {
		p.t.Errorf("output after the last expected line: %q", rest)
	}
	return code
}

func TestRPCPromptEventsAndState(t *testing.T) {
	e := newEnv(t, readTurn("notes.txt"), done)
	os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("forty-two\n"), 0o644)
	p := e.rpc(t)
	p.send(`{"id":"s1","type":"get_state"}`)
	r, _ := p.response("get_state")
	st := data(r)
	if r["id"] != "s1" || r["success"] != true || st["model"] != "fake-model" || st["isRunning"] != false || st["usageUncertain"] != false || st["sessionId"] == "" {
		t.Fatalf("get_state: %v", r)
	}
	sid := st["sessionId"]
	p.send(`{"id":"p1","type":"prompt","message":"what is in notes.txt?"}`)
	r, _ = p.response("prompt")
	runID := data(r)["runId"]
	if r["id"] != "p1" || r["success"] != true || runID == "" || data(r)["sessionId"] != sid {
		t.Fatalf("prompt: %v", r)
	}
	final, evs := p.until("final_result")
	if got := types(evs); got != "accepted,started,model_step,tool_start,tool_policy,tool_finish,model_delta,model_step,settled" {
		t.Errorf("events: %s", got)
	}
	for _, ev := range append(evs, final) {
		if ev["runId"] != runID {
			t.Errorf("%s has runId %v, want %v", ev.typ(), ev["runId"], runID)
		}
		for k := range ev {
			if strings.Contains(k, "_") {
				t.Errorf("%s has a snake_case member %q", ev.typ(), k)
			}
		}
	}
	if ts := evs[3]; ts["callId"] == nil || ts["arguments"].(map[string]any)["path"] != "notes.txt" {
		t.Errorf("tool_start: %v", ts)
	}
	if final["status"] != "completed" || final["output"] != "The answer is 42." {
		t.Fatalf("final_result: %v", final)
	}
	// The final_result comes once the mode is idle: a prompt right away
	// is accepted (it runs on the same session).
	e.fake.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{done}})
	p.send(`{"type":"prompt","message":"again"}`)
	if r, _ := p.response("prompt"); r["success"] != true || data(r)["sessionId"] != sid {
		t.Fatalf("second prompt: %v", r)
	}
	p.until("final_result")
	p.send(`{"type":"get_session_stats"}`)
	r, _ = p.response("get_session_stats")
	tok := data(r)["tokens"].(map[string]any)
	if tok["input"] != 20.0 || tok["output"] != 6.0 || tok["total"] != 26.0 || data(r)["usageUncertain"] != false {
		t.Fatalf("get_session_stats: %v", r)
	}
	p.send(`{"type":"new_session"}`)
	r, _ = p.response("new_session")
	if nsid := data(r)["sessionId"]; nsid == sid || nsid == "" {
		t.Fatalf("new_session: %v", r)
	}
	p.send(`{"type":"get_session_stats"}`)
	r, _ = p.response("get_session_stats")
	if data(r)["tokens"].(map[string]any)["total"] != 0.0 {
		t.Fatalf("stats of the new session: %v", r)
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
}

func TestRPCMalformedCommandsKeepServing(t *testing.T) {
	e := newEnv(t)
	p := e.rpc(t)
	cases := []struct{ line, command, id, errHas string }{
		{"{", "parse", "", "not a JSON object"},
		{"[]", "parse", "", "a command is a JSON object"},
		{`{"id":"a","type":"get_state","extra":1}`, "get_state", "a", `unknown member "extra"`},
		{`{"id":"b","type":"launch"}`, "launch", "b", `unknown command "launch"`},
		{`{"id":"c"}`, "parse", "c", `no "type"`},
		{`{"id":"d","type":"prompt"}`, "prompt", "d", `needs a "message"`},
		{`{"id":"e","type":"prompt","message":""}`, "prompt", "e", "empty"},
		{`{"id":"f","type":"abort","message":"x"}`, "abort", "f", `takes no "message"`},
		{`{"id":1,"type":"get_state"}`, "get_state", "", `member "id" must be a string`},
		{`{"id":"g","type":"get_state","type":"abort"}`, "abort", "g", "appears twice"}, // the last one names it
		{`{"id":"h","type":"steer","message":"x"}`, "steer", "h", "no run is active"},
		{`{"id":"i","type":"abort"}`, "abort", "i", "no run is active"},
		{strings.Repeat("x", 2<<20), "parse", "", "exceeds 1048576 bytes"},
	}
	for _, c := range cases {
		p.send(c.line)
		r := p.next()
		if r.typ() != "response" || r["success"] != false || r["command"] != c.command || !strings.Contains(fmt.Sprint(r["error"]), c.errHas) {
			t.Errorf("%.40q answered %v; want command %s, error containing %q", c.line, r, c.command, c.errHas)
		}
		if got, _ := r["id"].(string); got != c.id {
			t.Errorf("%.40q: id %q, want %q", c.line, got, c.id)
		}
	}
	p.send(`{"type":"get_state"}`)
	if r := p.next(); r["success"] != true {
		t.Fatalf("get_state after bad lines: %v", r)
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Steering reaches the model at the next boundary, a follow-up when the run
// would complete; a prompt while the run is active is refused.
func TestRPCSteerMidRun(t *testing.T) {
	// The command runs until the test has steered, so no timing decides
	// whether the steer lands in the first step.
	e := newEnv(t, bashTurn("until [ -e released ]; do sleep 0.01; done"), done, fakeprovider.Turn{Text: "Followed up."})
	p := e.rpc(t, "--allow-shell", "--allow-process")
	p.send(`{"type":"prompt","message":"go"}`)
	p.response("prompt")
	p.until("tool_start")
	p.send(`{"id":"busy","type":"prompt","message":"another"}`)
	if r, _ := p.response("prompt"); r["success"] != false || !strings.Contains(fmt.Sprint(r["error"]), "a run is active") {
		t.Fatalf("prompt while running: %v", r)
	}
	p.send(`{"type":"new_session"}`)
	if r, _ := p.response("new_session"); r["success"] != false || !strings.Contains(fmt.Sprint(r["error"]), "a run is active") {
		t.Fatalf("new_session while running: %v", r)
	}
	p.send(`{"id":"st","type":"steer","message":"use the other file"}`)
	if r, _ := p.response("steer"); r["success"] != true {
		t.Fatalf("steer: %v", r)
	}
	p.send(`{"id":"fu","type":"follow_up","message":"and then summarize"}`)
	if r, _ := p.response("follow_up"); r["success"] != true {
		t.Fatalf("follow_up: %v", r)
	}
	p.send(`{"type":"get_state"}`)
	if r, _ := p.response("get_state"); data(r)["isRunning"] != true {
		t.Fatalf("get_state mid-run: %v", r)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "released"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sd, _ := p.until("steering_delivered")
	if sd["text"] != "use the other file" || sd["step"] != 2.0 {
		t.Fatalf("steering_delivered: %v", sd)
	}
	fd, _ := p.until("follow_up_delivered")
	if fd["text"] != "and then summarize" || fd["step"] != 3.0 {
		t.Fatalf("follow_up_delivered: %v", fd)
	}
	final, _ := p.until("final_result")
	if final["status"] != "completed" || final["output"] != "Followed up." {
		t.Fatalf("final: %v", final)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 3 || !strings.Contains(fmt.Sprint(reqs[1].Body["messages"]), "use the other file") ||
		!strings.Contains(fmt.Sprint(reqs[2].Body["messages"]), "and then summarize") {
		t.Fatalf("the steering message and the follow-up did not reach the model's later calls")
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// abort cancels the run in the middle of a bash command: the command's
// process group is gone and the run still ends with its final_result. The
// command's child is found by its unique argument in the host's /proc: a
// pid the command prints is one of its own PID namespace.
func TestRPCAbortMidTool(t *testing.T) {
	e := newEnv(t, bashTurn("sleep 30.4242 & echo $! > child.pid; wait"), done)
	p := e.rpc(t, "--allow-shell", "--allow-process")
	p.send(`{"type":"prompt","message":"go"}`)
	p.response("prompt")
	p.until("tool_start")
	pidFile := filepath.Join(e.ws, "child.pid")
	waitFor(t, func() bool {
		b, err := os.ReadFile(pidFile)
		var pid int
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(b), &pid)
		return err == nil && sleeperAlive()
	}, "the command's child")
	p.send(`{"id":"x","type":"abort"}`)
	if r, _ := p.response("abort"); r["success"] != true || r["id"] != "x" {
		t.Fatalf("abort: %v", r)
	}
	final, evs := p.until("final_result")
	errInfo, _ := final["error"].(map[string]any)
	if final["status"] != "error" || errInfo["code"] != "canceled" {
		t.Fatalf("final after abort: %v (events %s)", final, types(evs))
	}
	if types(evs) == "" || evs[len(evs)-1].typ() != "settled" {
		t.Errorf("events before final_result: %s", types(evs))
	}
	// No orphan: the sleep of the command's group is gone.
	waitFor(t, func() bool { return !sleeperAlive() }, "the aborted command's child to exit")
	p.send(`{"type":"get_state"}`)
	if r, _ := p.response("get_state"); data(r)["isRunning"] != false {
		t.Fatalf("get_state after abort: %v", r)
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A session whose earlier run failed an attempt that may have been billed
// is resumed in RPC mode: get_state and get_session_stats say so, with the
// ledger's figures.
func TestRPCResumeWithUncertainUsage(t *testing.T) {
	e := newEnv(t, done)
	e.fake.InjectFault(fakeprovider.FaultStatus{Code: 500})
	if r := e.print(t, "", e.args("-p", "x", "--session", "resumed")...); r.code != 0 {
		t.Fatalf("print run: exit %d\n%s", r.code, r.stderr)
	}
	p := e.rpc(t, "--session", "resumed")
	p.send(`{"type":"get_state"}`)
	r, _ := p.response("get_state")
	if data(r)["sessionId"] != "resumed" || data(r)["usageUncertain"] != true {
		t.Fatalf("get_state after resume: %v", r)
	}
	p.send(`{"type":"get_session_stats"}`)
	r, _ = p.response("get_session_stats")
	d := data(r)
	want := map[string]any{"input": 10.0, "output": 3.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 13.0}
	if fmt.Sprint(d["tokens"]) != fmt.Sprint(want) || d["cost"] != 0.0 || d["usageUncertain"] != true {
		t.Fatalf("get_session_stats after resume: %v", r)
	}
	// A run on the resumed session says again that usage is uncertain.
	e.fake.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{done}})
	p.send(`{"type":"prompt","message":"more"}`)
	p.response("prompt")
	_, evs := p.until("final_result")
	if !strings.Contains(types(evs), "provider_usage_uncertain") {
		t.Errorf("events of a run on an uncertain session: %s", types(evs))
	}
	p.send(`{"type":"get_session_stats"}`)
	r, _ = p.response("get_session_stats")
	if tok := data(r)["tokens"].(map[string]any); tok["total"] != 26.0 {
		t.Fatalf("stats after a second run: %v", r)
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Finite retries are auto_retry_start with camelCase members.
func TestRPCRetryEvents(t *testing.T) {
	e := newEnv(t, done)
	e.fake.InjectFault(fakeprovider.FaultStatus{Code: 429, RetryAfterMS: "20"})
	p := e.rpc(t)
	p.send(`{"type":"prompt","message":"x"}`)
	p.response("prompt")
	ev, _ := p.until("auto_retry_start")
	if ev["attempt"] != 1.0 || ev["maxAttempts"] == nil || ev["delayMs"] != 20.0 || !strings.Contains(fmt.Sprint(ev["errorMessage"]), "429") {
		t.Fatalf("auto_retry_start: %v", ev)
	}
	if final, _ := p.until("final_result"); final["status"] != "completed" {
		t.Fatalf("final: %v", final)
	}
	p.close()
}

// SIGTERM in RPC mode: the active run ends with its final_result written,
// then the process exits 143.
func TestRPCSIGTERM(t *testing.T) {
	e := newEnv(t, done)
	e.fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 1})
	p := e.rpc(t)
	p.send(`{"type":"prompt","message":"x"}`)
	p.response("prompt")
	waitFor(t, func() bool { return len(e.fake.Requests()) == 1 }, "the model request")
	p.cmd.Process.Signal(syscall.SIGTERM)
	final, _ := p.until("final_result")
	if final["status"] != "error" {
		t.Fatalf("final after SIGTERM: %v", final)
	}
	if code := exitCode(t, p.cmd.Wait()); code != 143 {
		t.Fatalf("exit %d, want 143", code)
	}
}

// A prompt the runtime refuses gets a failed response naming the code, and
// no run starts.
func TestRPCRefusedPrompt(t *testing.T) {
	e := newEnv(t)
	cmd := e.command("--mode", "rpc", "--model", "no-such-model", "--workspace", e.ws)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"id":"p","type":"prompt","message":"x"}`+"\n"+`{"type":"get_state"}`+"\n")
	stdin.Close()
	out, _ := io.ReadAll(stdout)
	if code := exitCode(t, cmd.Wait()); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":"p","command":"prompt","success":false,"error":"the run was refused: model_not_found`) ||
		!strings.Contains(lines[1], `"isRunning":false`) {
		t.Fatalf("output:\n%s", out)
	}
}

// --tools selects the tools the model is offered; "" offers none.
func TestPrintToolsFlag(t *testing.T) {
	e := newEnv(t, done, done)
	for _, c := range []struct{ flag, want string }{{"read,grep", "read,grep"}, {"", ""}} {
		if r := e.print(t, "", e.args("-p", "x", "--tools", c.flag)...); r.code != 0 {
			t.Fatalf("--tools %q: exit %d\n%s", c.flag, r.code, r.stderr)
		}
		reqs := e.fake.Requests()
		tools, _ := reqs[len(reqs)-1].Body["tools"].([]any)
		var names []string
		for _, tl := range tools {
			fn, _ := tl.(map[string]any)["function"].(map[string]any)
			names = append(names, fmt.Sprint(fn["name"]))
		}
		if got := strings.Join(names, ","); got != c.want {
			t.Errorf("--tools %q: the model was offered %q", c.flag, got)
		}
	}
}

// openPTY returns a pseudo-terminal's master and slave ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// With stderr on a terminal, progress is one status line redrawn in place
// and cleared at the end; stdout still carries only the answer.
func TestPrintLiveStatusOnTerminal(t *testing.T) {
	e := newEnv(t, readTurn("notes.txt"), done)
	os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("x\n"), 0o644)
	master, slave := openPTY(t)
	cmd := e.command(e.args("-p", "x")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var tty bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&tty, master); close(copied) }() // ends with EIO once the child is gone
	if code := exitCode(t, cmd.Wait()); code != 0 || out.String() != "The answer is 42.\n" {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	<-copied
	got := tty.String()
	if !strings.Contains(got, "\r\x1b[2Koctet: fake/fake-model · step 1 · running read · 1 tool call") {
		t.Errorf("no live status naming the running tool on the terminal:\n%q", got)
	}
	if !strings.HasSuffix(got, "\r\x1b[2K") || strings.Contains(got, "octet: step 1: read") {
		t.Errorf("the terminal got plain lines or an uncleared status:\n%q", got)
	}
}

// TestRPCSchemaFlag: octet --mode rpc --schema prints the embedded RPC
// schema and exits 0, without a model; --schema outside RPC mode is a
// usage error.
func TestRPCSchemaFlag(t *testing.T) {
	e := newEnv(t)
	out, err := e.command("--mode", "rpc", "--schema").Output()
	if err != nil {
		t.Fatalf("octet --mode rpc --schema: %v", err)
	}
	if !bytes.Equal(out, schema.RPCJSON()) {
		t.Error("the printed schema is not the embedded RPC schema")
	}
	err = e.command("--schema", "-p", "hi", "--model", "m").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("--schema in print mode: %v, want exit %d", err, exitUsage)
	}
}

// sleeperAlive reports whether a process whose command line is the one
// TestRPCAbortMidTool's command starts ("sleep 30.4242") is running.
func sleeperAlive() bool {
	ms, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, m := range ms {
		if b, err := os.ReadFile(m); err == nil && string(b) == "sleep\x0030.4242\x00" {
			return true
		}
	}
	return false
}
