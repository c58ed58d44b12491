//go:build unix && !linux

package client

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the host in its own process group. Outside Linux there
// is no parent-death signal: a dying application may orphan the host.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitAndReap reaps cmd's process and then calls beforeReap. Without
// waitid(WNOWAIT) the process group cannot be signalled safely after the
// leader exits, so stragglers of the group are only killed by Kill and by
// Close's grace timeout while the leader lives.
func waitAndReap(cmd *exec.Cmd, beforeReap func()) error {
	err := cmd.Wait()
	_ = beforeReap
	return err
}
