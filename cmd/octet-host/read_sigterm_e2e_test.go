package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// TestSigtermDuringLongReadExits143: SIGTERM while a read works through a
// 16 GiB sparse file (reaching an offset beyond a 16 GiB line) still ends
// the run with final_result canceled before the exit 143. The read used to
// check its context only every 4096 lines, so the cleanup grace ran out
// and the host exited with no terminal event.
func TestSigtermDuringLongReadExits143(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "rd-1", Name: "read", Arguments: `{"path":"sparse.txt","offset":100000}`}}},
		{Text: "done"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	h := &bashHost{proc: startEnv(t, nil, hostBin), fake: fake, ws: t.TempDir()}

	f, err := os.Create(filepath.Join(h.ws, "sparse.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("a line of text ahead of the hole\n", 300))
	if err := f.Truncate(16 << 30); err != nil {
		f.Close()
		t.Skipf("the file system refuses a sparse file: %v", err)
	}
	f.Close()

	h.sendRun(t, "longread")
	for {
		ev := h.next(t)
		if ev.Type == "final_result" {
			t.Fatalf("the run ended before the read: %s", ev.Data)
		}
		if ev.Type == "tool_start" {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var last event
	for {
		line, err := h.stdout.ReadBytes('\n')
		if err != nil {
			break
		}
		json.Unmarshal(line, &last)
	}
	if code := h.wait(t); code != 143 {
		t.Fatalf("exit %d after SIGTERM, want 143; stderr %s", code, h.stderr)
	}
	if last.Type != "final_result" || !strings.Contains(string(last.Data), `"code":"canceled"`) {
		t.Errorf("last event before the exit: %s %s; want final_result canceled", last.Type, last.Data)
	}
}
