//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// SysProcAttr puts the process in its own process group.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// WaitAndReap reaps cmd's process and returns cmd.Wait's error; beforeReap
// is skipped (see the package comment).
func WaitAndReap(cmd *exec.Cmd, beforeReap func()) error {
	_ = beforeReap
	return cmd.Wait()
}
