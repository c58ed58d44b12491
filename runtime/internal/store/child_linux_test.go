package store

import (
	"os/exec"
	"syscall"
)

// setPdeathsig kills the child if the test process dies first.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
