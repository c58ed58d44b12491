package earlysig

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStartInstalls: a test binary gets no handler from initialisation;
// Start installs them, and once Ready is closed a HUP sent to the process
// arrives on Signals instead of ending it.
func TestStartInstalls(t *testing.T) {
	select {
	case <-Ready():
		t.Fatal("initialisation installed the handlers in a test binary")
	default:
	}
	Start()
	Start() // a second call is harmless
	select {
	case <-Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the handlers were not installed")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-Signals():
		if s != syscall.SIGHUP {
			t.Fatalf("got %v, want SIGHUP", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP did not arrive on Signals")
	}
}
