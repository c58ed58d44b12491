//go:build linux

package procgroup

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestWaitAndReapKillsTheGroup: the leader exits leaving a child in its
// group; beforeReap runs while the leader is a zombie, so a kill of the
// group by the leader's PID still reaches the child.
func TestWaitAndReapKillsTheGroup(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & echo $!")
	cmd.SysProcAttr = SysProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n])))
	if err != nil {
		t.Fatalf("child pid %q: %v", buf[:n], err)
	}
	if pgid, err := syscall.Getpgid(child); err != nil || pgid != cmd.Process.Pid {
		t.Fatalf("the child's group is %d (%v), want the leader's %d", pgid, err, cmd.Process.Pid)
	}
	var zombie bool
	err = WaitAndReap(cmd, func() {
		// The leader has exited but is not reaped yet.
		zombie = state(cmd.Process.Pid) == 'Z'
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	if err != nil {
		t.Fatalf("WaitAndReap: %v", err)
	}
	if !zombie {
		t.Error("beforeReap ran after the leader was reaped")
	}
	deadline := time.Now().Add(5 * time.Second)
	// Killed, the child is gone or a zombie its new parent has not reaped.
	for st := state(child); st != 0 && st != 'Z'; st = state(child) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatal("the group's kill did not reach the child")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// state returns the state letter of process pid (/proc/PID/stat), 0 when
// there is no such process.
func state(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: the state
	// follows the last ") ".
	i := bytes.LastIndex(b, []byte(") "))
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
