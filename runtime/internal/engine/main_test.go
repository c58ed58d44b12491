package engine

import (
	"testing"

	"octet.dev/host/runtime/internal/shell"

	"go.uber.org/goleak"
)

// TestMain fails the package when a run leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(spareReleasing{m}) }

// spareReleasing ends the shell's spare guard (a child process and the
// goroutine waiting on it) once the tests are over, before goleak looks.
type spareReleasing struct{ m *testing.M }

func (s spareReleasing) Run() int {
	code := s.m.Run()
	shell.ReleaseSpare()
	return code
}
