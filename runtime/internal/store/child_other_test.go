//go:build !linux

package store

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
