package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TerminateAll reaches Run's commands and the descendants that left their
// group, one by setsid, one by setsid after a double fork.
func TestTerminateAllRun(t *testing.T) {
	t.Parallel()
	var reg Registry
	mark := newMark()
	s := testSpec(t, mark, "setsid sleep 1000 & ( setsid sleep 1000 & ); sleep 1000 & echo ready; wait")
	s.Registry = &reg
	s.Grace = hangGuard // the ladder that counts is TerminateAll's
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(context.Background(), s)
		done <- outcome{res, err}
	}()
	eventually(t, "three sleeps", func() bool { return countComm(marked(t, mark), "sleep") == 3 })
	reg.TerminateAll(300 * time.Millisecond)
	requireNoneMarked(t, mark)
	o := <-done
	if o.err != nil || o.res.Signal != "SIGTERM" || o.res.Canceled || o.res.TimedOut {
		t.Errorf("Run after TerminateAll: %+v, %v", o.res, o.err)
	}
	if _, err := Run(context.Background(), s); !errors.Is(err, ErrTerminated) {
		t.Errorf("Run on a terminated registry: %v", err)
	}
	reg.TerminateAll(0) // idempotent
}

// TerminateAll reaches a group registered with Register, and its
// descendant that left the group while its parent lives.
func TestTerminateAllRegistered(t *testing.T) {
	t.Parallel()
	var reg Registry
	mark := newMark()
	cmd := exec.Command(bashPath(t), "-c", "trap '' TERM; setsid sleep 1000 & sleep 1000 & wait")
	cmd.Env = append(os.Environ(), markEnv+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	unregister := reg.Register(cmd.Process.Pid)
	defer func() {
		unregister()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	eventually(t, "two sleeps", func() bool { return countComm(marked(t, mark), "sleep") == 2 })
	// Everything ignores TERM (an ignored signal stays ignored across
	// fork and exec), so this also walks the ladder to SIGKILL.
	reg.TerminateAll(200 * time.Millisecond)
	requireNoneMarked(t, mark)
	unregister()
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("bash ended with %v", err)
	}
	// Registering on a terminated registry kills the group at once.
	late := exec.Command("sleep", "1000")
	late.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := late.Start(); err != nil {
		t.Fatal(err)
	}
	reg.Register(late.Process.Pid)()
	if err := late.Wait(); err == nil {
		t.Error("a group registered after TerminateAll survived")
	}
}

func TestRegisterRefusesBadGroups(t *testing.T) {
	t.Parallel()
	var reg Registry
	for _, pgid := range []int{-5, 0, 1, syscall.Getpgrp()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%d) did not panic", pgid)
				}
			}()
			reg.Register(pgid)
		}()
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "42 (a) b) (c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 1 2 3\n"
	p, ok := parseStat(42, []byte(line))
	if !ok || p.ppid != 7 || p.pgid != 42 || p.start != 123456 || p.dead {
		t.Errorf("parseStat = %+v, %v", p, ok)
	}
	if p, ok := parseStat(42, []byte("42 (z) Z 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0")); !ok || !p.dead || p.kernel {
		t.Errorf("zombie: %+v, %v", p, ok)
	}
	if p, ok := parseStat(2, []byte("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0")); !ok || !p.kernel {
		t.Errorf("kernel thread: %+v, %v", p, ok)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) S 1 2", "42 (x) S a 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, ok := parseStat(42, []byte(bad)); ok {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}
