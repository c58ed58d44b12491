package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a run leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
