package runtime_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"octet.dev/host/fsm/tracecheck"
	"octet.dev/host/runtime"
)

// traceLog is a runtime logger at runtime.LevelTrace whose lines
// (slog JSON) are kept for fsm/tracecheck.
type traceLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *traceLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *traceLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: runtime.LevelTrace}))
}

func (l *traceLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.buf.Bytes())
}

// tracedSteps counts the transitions the transcripts' logs replayed.
var tracedSteps, tracedRuns atomic.Int64

func newTraceChecker(t *testing.T) *tracecheck.Checker {
	t.Helper()
	c, err := tracecheck.Load(func(f string) ([]byte, error) { return os.ReadFile(filepath.Join("..", "tla", f)) })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkTrace replays a finished scenario's transition log against the
// TLA+ specs: every step of every machine of every run must be a step of
// its spec. Then the log without one run's start must be rejected, where
// the run's next step does not follow from the one before it.
func checkTrace(t *testing.T, l *traceLog) tracecheck.Stats {
	t.Helper()
	log := l.bytes()
	c := newTraceChecker(t)
	if err := c.Log(log); err != nil {
		t.Fatalf("the transition log breaks a spec: %v", err)
	}
	st := c.Stats()
	if st.ByMachine["run"] == 0 {
		t.Fatalf("no run transition traced: %s", st)
	}
	tracedSteps.Add(int64(st.Steps))
	tracedRuns.Add(int64(st.Runs))

	var cut []byte
	dropped := false
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		if !dropped && bytes.Contains(line, []byte(`"machine":"run","trigger":"start"`)) {
			dropped = true
			continue
		}
		cut = append(cut, line...)
	}
	if !dropped {
		return st // no run started: rejected at validation
	}
	var v *tracecheck.Violation
	if err := newTraceChecker(t).Log(cut); !errors.As(err, &v) || v.Instance.Machine != "run" || !strings.Contains(v.Reason, "another state") {
		t.Errorf("a log without a run's start: %v, want a violation of the run machine", err)
	}
	return st
}
