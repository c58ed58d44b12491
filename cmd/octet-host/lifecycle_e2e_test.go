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
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// Stream lifecycle through the binary while a run is active (CONTRACT §2,
// §3): EOF during a run, an outbound event over the frame bound, and a
// stdout that fails mid-run with a command running.

// fakeFor starts a fake provider with script for the test.
func fakeFor(t *testing.T, script fakeprovider.Script) *fakeprovider.Server {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	return fake
}

func runLine(id, ws string, fake *fakeprovider.Server, extra string) string {
	return fmt.Sprintf(`{"protocol_version":1,"request_id":%q,"command":"run","run_id":"run-%s","workspace":%q,"model":"m","prompt":"go","provider":"fake","base_url":%q%s}`,
		id, id, ws, fake.BaseURL(fakeprovider.ModeChat), extra)
}

// TestEOFDuringRunFinishesTheRun closes stdin while the provider stalls
// mid-answer: the run still finishes, its final_result is written, and the
// host exits 0 with nothing after it.
func TestEOFDuringRunFinishesTheRun(t *testing.T) {
	fake := fakeFor(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "one two three four five six", Chunk: 4}}})
	fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 2, For: 300 * time.Millisecond})
	p := start(t, hostBin)
	p.send(t, runLine("eof", t.TempDir(), fake, `,"tools":[]`))
	for {
		if ev := p.next(t); ev.Type == "model_delta" {
			break // the run is streaming: the provider stalls now
		}
	}
	p.stdin.Close()
	var last event
	for {
		ev := p.next(t)
		if ev.Type == "final_result" || ev.Type == "protocol_error" {
			last = ev
			break
		}
	}
	var fr struct {
		Status string `json:"status"`
		Output string `json:"output"`
	}
	json.Unmarshal(last.Data, &fr)
	if last.Type != "final_result" || fr.Status != "completed" || fr.Output != "one two three four five six" {
		t.Fatalf("after EOF mid-run: %s %s", last.Type, last.Data)
	}
	if rest, _ := io.ReadAll(p.stdout); len(rest) != 0 {
		t.Errorf("output after the final_result: %q", rest)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after EOF during a run, want 0; stderr %s", code, p.stderr)
	}
}

// TestOversizedEventIsReplaced: a model_delta that would exceed 1 MiB is
// never written; the request ends with a bounded terminal protocol_error
// output_too_large, nothing more is written for it, and the next request is
// served.
func TestOversizedEventIsReplaced(t *testing.T) {
	big := strings.Repeat("x", 1100<<10)
	fake := fakeFor(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: big, Chunk: len(big)}}})
	p := start(t, hostBin)
	p.send(t, runLine("big", t.TempDir(), fake, `,"tools":[]`))
	var types []string
	var last event
	for {
		line, err := p.stdout.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		if len(line) > 1<<20 {
			t.Fatalf("a %d-byte frame was written", len(line))
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("frame %q: %v", line[:min(len(line), 200)], err)
		}
		p.schema.Got(t, line)
		if *ev.RequestID != "big" {
			t.Fatalf("event for %s", *ev.RequestID)
		}
		types = append(types, ev.Type)
		if ev.Type == "final_result" || ev.Type == "protocol_error" {
			last = ev
			break
		}
	}
	var pe struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	json.Unmarshal(last.Data, &pe)
	if last.Type != "protocol_error" || pe.Code != "output_too_large" || len(pe.Message) > 1024 || strings.Contains(pe.Message, "xxxxxxxx") {
		t.Fatalf("events %v, last %s", types, last.Data)
	}
	if last.Seq != len(types) {
		t.Errorf("terminal seq %d after %d events", last.Seq, len(types))
	}
	p.send(t, `{"protocol_version":1,"request_id":"after","command":"hello"}`)
	if ev := p.next(t); ev.Type != "hello" || *ev.RequestID != "after" {
		t.Fatalf("the next request got %s for %v", ev.Type, *ev.RequestID)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestStdoutGoneMidRunEndsCommands: the caller stops reading while a bash
// command (with a setsid child) streams output; the host's next write
// fails, it ends the run and the command's processes, and exits 1 with a
// diagnostic on stderr.
func TestStdoutGoneMidRunEndsCommands(t *testing.T) {
	killLeftovers(t, "4246")
	cmdText := "setsid sleep 4246001 & sleep 4246002 & while :; do echo tick; sleep 0.05; done"
	fake := fakeFor(t, fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "sh-1", Name: "bash", Arguments: string(mustJSONString(t, map[string]string{"command": cmdText}))}}},
		{Text: "done"},
	}})
	cmd := exec.Command(hostBin, "--allow-shell", "--allow-process")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	var stderr syncWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	w.Close()
	io.WriteString(stdin, runLine("gone", t.TempDir(), fake, "")+"\n")
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading events: %v; stderr %s", err, stderr.String())
		}
		if bytes.Contains(line, []byte(`"type":"tool_progress"`)) {
			break // the command runs and streams
		}
	}
	eventually(t, "the command's sleeps", func() bool { return len(sleepers("42460")) == 2 })
	r.Close() // the caller is gone
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("host did not exit after its stdout failed mid-run")
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1; stderr %s", werr, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stdout") {
		t.Errorf("no stdout diagnostic on stderr: %s", stderr.String())
	}
	eventually(t, "the command's processes to be gone", func() bool { return len(sleepers("42460")) == 0 })
}
