//go:build linux

package main

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the host under test in its own process group, so the
// kit can end it and everything it started with one signal, and has the
// kernel kill it if the kit's starting thread dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitAndReap waits for cmd's process to exit, calls beforeReap while it
// is still a zombie (so its process group ID cannot have been reused),
// then reaps it.
func waitAndReap(cmd *exec.Cmd, beforeReap func()) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	beforeReap()
	return cmd.Wait()
}
