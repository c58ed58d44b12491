//go:build straytest

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// With the straytest tag the host makes every kind of stray write to
// "stdout" at start-up; the end-to-end test checks that none of it reaches
// the protocol stream.
func init() {
	afterReserve = func() {
		fmt.Println("stray: fmt.Println")
		fmt.Fprintln(os.Stdout, "stray: os.Stdout")
		syscall.Write(1, []byte("stray: raw fd 1\n"))
		cmd := exec.Command("/bin/sh", "-c", "echo stray: child stdout; echo stray: child fd1 >&1")
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		_ = cmd.Run()
		// A child that inherits descriptors 0-2 directly.
		attr := &syscall.ProcAttr{Files: []uintptr{0, 1, 2}}
		if pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "echo stray: inherited fd 1"}, attr); err == nil {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
		}
	}
}
