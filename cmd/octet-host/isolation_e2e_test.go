package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCommandCannotStopOrKillHost: a command that signals its parent,
// stops every pid it can see and kills everything it may reaches none of
// the host's processes: the run completes and the host answers the next
// request. The command attacks only after checking that it sees nothing
// but its own PID namespace (where the kernel refuses namespaces the test
// is skipped, rather than stopping every process of the machine).
func TestCommandCannotStopOrKillHost(t *testing.T) {
	cmd := `if [ "$PPID" = 1 ] && [ "$(ls -d /proc/[0-9]* | wc -l)" -lt 10 ]; then
  echo isolated
  kill -9 $PPID; kill -STOP $PPID
  for p in /proc/[0-9]*; do p=${p#/proc/}; [ "$p" = $$ ] || kill -STOP $p 2>/dev/null; done
  kill -9 -1 2>/dev/null
fi
echo attempted`
	h := startBashHost(t, cmd, nil, "--allow-shell", "--allow-process")
	watchdog := time.AfterFunc(time.Minute, func() { h.cmd.Process.Kill() }) // a stopped host fails, not hangs
	defer watchdog.Stop()
	h.sendRun(t, "attack")
	evs := h.events(t)
	fin := dataOf(t, evs, "tool_finish")[0]
	out, _ := fin["output"].(string)
	if !strings.Contains(out, "isolated") {
		t.Skipf("the command runs without namespaces here: %q", out)
	}
	if out != "isolated\nattempted\n" || fin["exit_code"] != 0.0 {
		t.Errorf("tool_finish %v", fin)
	}
	if last := dataOf(t, evs, "final_result")[0]; last["output"] != "done" {
		t.Errorf("final_result %v", last)
	}
	h.send(t, `{"protocol_version":1,"request_id":"bye","command":"shutdown"}`)
	if ev := h.next(t); ev.RequestID == nil || *ev.RequestID != "bye" {
		t.Fatalf("after the run: %+v", ev)
	}
}

// TestNamespacesOptOut: OCTET_SHELL_NAMESPACES=off runs commands in the
// process-group fallback (the shell's parent is the host itself), and the
// host says so once on stderr.
func TestNamespacesOptOut(t *testing.T) {
	h := startBashHost(t, `echo $PPID`, []string{"OCTET_SHELL_NAMESPACES=off"}, "--allow-shell", "--allow-process")
	h.sendRun(t, "optout")
	evs := h.events(t)
	fin := dataOf(t, evs, "tool_finish")[0]
	if out, _ := fin["output"].(string); out != strconv.Itoa(h.cmd.Process.Pid)+"\n" {
		t.Errorf("the command's parent is %q, want the host %d", out, h.cmd.Process.Pid)
	}
	h.send(t, `{"protocol_version":1,"request_id":"bye","command":"shutdown"}`)
	h.next(t)
	h.cmd.Wait()
	if log := h.stderr.String(); strings.Count(log, "process-group fallback") != 1 || !strings.Contains(log, "OCTET_SHELL_NAMESPACES=off") {
		t.Errorf("stderr: %s", log)
	}
}
