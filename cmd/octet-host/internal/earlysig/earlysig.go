// Package earlysig installs octet-host's signal handlers as early as a Go
// program can: from package initialisation, on a goroutine of its own.
//
// Installing a handler takes a round trip to the Go runtime's signal
// thread per signal (the thread is started by the first one), about a
// millisecond at start-up on a small machine. Started here, that work
// overlaps the initialisation of the packages that follow this one and the
// building of the host, instead of lying on the path to the first answer.
//
// Until Ready is closed a signal has its default effect: the process dies
// with nothing started and nothing written. One that comes after is held
// in Signals (HUP, INT, QUIT and TERM; a buffer of one) until the binary
// reads it. SIGPIPE is notified, not ignored, so that a broken pipe is a
// write error and child processes still get its default.
//
// A test binary (its name ends in ".test") gets no handler from
// initialisation: a Ctrl-C or the go command's SIGQUIT must still stop
// it. Start installs them on demand there, and is harmless elsewhere.
package earlysig

// The package imports nothing that os/signal does not need too: a package
// is initialised after everything it imports, and os/signal comes early.
import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

var (
	signals = make(chan os.Signal, 1)
	ready   = make(chan struct{})
	started atomic.Bool
)

func init() {
	const suffix = ".test"
	if a := os.Args; len(a) > 0 && len(a[0]) >= len(suffix) && a[0][len(a[0])-len(suffix):] == suffix {
		return
	}
	Start()
}

// Start begins installing the handlers if that has not begun yet; it does
// not wait for them.
func Start() {
	if started.CompareAndSwap(false, true) {
		go install()
	}
}

func install() {
	signal.Notify(signals, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	close(ready)
}

// Ready is closed once every handler is installed.
func Ready() <-chan struct{} { return ready }

// Signals delivers HUP, INT, QUIT and TERM once Ready is closed.
func Signals() <-chan os.Signal { return signals }
