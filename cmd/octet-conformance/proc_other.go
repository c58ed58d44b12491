//go:build unix && !linux

package main

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the host under test in its own process group.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// waitAndReap reaps cmd's process. Without waitid's WNOWAIT the group's ID
// could be reused once the process is reaped, so beforeReap (the kill of
// what the host left in its group) is skipped here: the kit still kills
// the group on a timeout, while the host is alive.
func waitAndReap(cmd *exec.Cmd, beforeReap func()) error {
	_ = beforeReap
	return cmd.Wait()
}
