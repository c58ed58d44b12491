//go:build linux

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// SysProcAttr puts the process in its own process group and has the kernel
// SIGKILL it when the thread that started it dies.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// WaitAndReap waits for cmd's process to exit, calls beforeReap while the
// exited process is still a zombie (its PID, and so its process group ID,
// cannot be reused yet), then reaps it and returns cmd.Wait's error.
func WaitAndReap(cmd *exec.Cmd, beforeReap func()) error {
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
