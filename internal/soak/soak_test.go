package soak

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/fsm/tracecheck"
	"octet.dev/host/internal/testbin"
)

// buildHost returns the octet-host binary (testbin builds it once a test
// run).
func buildHost(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Build(testbin.Host)
	if err != nil {
		t.Fatalf("building octet-host: %v", err)
	}
	return bin
}

// TestShortSoak is the soak of scripts/soak, short enough for every test
// run: 200 runs through one host with faults and tool calls, and not one
// lost terminal event or broken rule.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host and runs 200 runs")
	}
	bin := buildHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var progress []Sample
	rep, err := Run(ctx, Config{
		HostPath: bin, Runs: 200, Concurrency: 3, Seed: 7, FaultRate: 0.25, ReportEvery: 100,
		SchedTraceMS: 200, Dir: t.TempDir(),
		Progress: func(s Sample, _ *Report) { progress = append(progress, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("soak failed: %d violations, %d lost, %d/%d ended: %s\nhost log:\n%s",
			rep.Violations, rep.Lost, rep.Ended, rep.Requested, strings.Join(rep.Problems, "\n"), rep.HostLogTail)
	}
	if len(progress) != 2 || progress[1].Runs != 200 {
		t.Errorf("progress samples %+v, want two (at 100 and 200 runs)", progress)
	}
	// The workload did what it is for: faults met requests and were
	// retried, tools ran, and most runs completed.
	if rep.FaultsServed == 0 || rep.Retries == 0 || rep.ToolCalls == 0 {
		t.Errorf("faults served %d, retries %d, tool calls %d: the workload is not exercising the host", rep.FaultsServed, rep.Retries, rep.ToolCalls)
	}
	if rep.Completed < 150 {
		t.Errorf("only %d of 200 runs completed (error codes %v)", rep.Completed, rep.ErrorCodes)
	}
	if rep.Start.RSSKiB <= 0 || rep.End.RSSKiB <= 0 || rep.End.Threads <= 0 {
		t.Errorf("host figures not read: start %+v end %+v", rep.Start, rep.End)
	}
	// The host is non-dumpable: only root (or its owner with
	// CAP_SYS_PTRACE) may list its descriptors.
	if os.Geteuid() == 0 && (rep.Start.FDs <= 0 || rep.End.FDs <= 0) {
		t.Errorf("descriptors not counted as root: start %d end %d", rep.Start.FDs, rep.End.FDs)
	}
	if rep.PeakGoroutines <= 0 {
		t.Errorf("no goroutine count from the scheduler dumps (peak %d)", rep.PeakGoroutines)
	}
	if rep.HostExit != "exit status 0" {
		t.Errorf("host exit %q", rep.HostExit)
	}
}

// TestGoroutineWatch checks the counting of a scheduler dump.
func TestGoroutineWatch(t *testing.T) {
	w := newGoroutineWatch(nil)
	dump := strings.Join([]string{
		"SCHED 2004ms: gomaxprocs=2 idleprocs=2 threads=8 spinningthreads=0 needspinning=0 idlethreads=5 runqueue=0 gcwaiting=false nmidlelocked=0 stopwait=0 sysmonwait=false",
		"  P0: status=0 schedtick=10 syscalltick=3 m=nil runqsize=0 gfreecnt=0 timerslen=1",
		"  M1: p=nil curg=nil mallocing=0 throwing=0 preemptoff= locks=0 dying=0 spinning=false blocked=true lockedg=nil",
		"  G1: status=4(select) m=nil lockedm=nil",
		"  G2: status=4(force gc (idle)) m=nil lockedm=nil",
		"  G3: status=6() m=nil lockedm=nil",
		"  G17: status=3() m=3 lockedm=nil",
		`{"level":"warn","message":"a log line"}`,
		"SCHED 4004ms: gomaxprocs=2",
		"  G1: status=4(select) m=nil lockedm=nil",
		"",
	}, "\n")
	w.consume(strings.NewReader(dump))
	if last, peak := w.goroutines(); last != 3 || peak != 3 {
		t.Errorf("goroutines %d peak %d, want 3 and 3 (the second dump never ended)", last, peak)
	}
	if got := w.logTail(); !strings.Contains(got, "a log line") || strings.Contains(got, "SCHED") {
		t.Errorf("log tail %q", got)
	}
}

// TestSampleProc reads this process's own figures.
func TestSampleProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	s := sampleProc(os.Getpid())
	if s.RSSKiB <= 0 || s.HWMKiB < s.RSSKiB || s.FDs < 3 || s.Threads < 1 {
		t.Errorf("sample %+v", s)
	}
}

// TestSoakTraceChecked: a soak whose host logs at trace level replays,
// transition by transition, against the TLA+ specs (fsm/tracecheck), as
// scripts/soak --check-trace does.
func TestSoakTraceChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host and runs 60 runs")
	}
	bin := buildHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := Run(ctx, Config{HostPath: bin, Runs: 60, Concurrency: 3, Seed: 11, FaultRate: 0.3, SchedTraceMS: -1,
		Dir: t.TempDir(), HostLog: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("soak failed: %s\nhost log:\n%s", strings.Join(rep.Problems, "\n"), rep.HostLogTail)
	}
	c, err := tracecheck.Load(func(f string) ([]byte, error) { return os.ReadFile(filepath.Join("..", "..", "tla", f)) })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Log(log.Bytes()); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	t.Log(st)
	if st.Runs != rep.Ended || st.ByMachine["session"] == 0 || st.ByMachine["recovery"] == 0 || st.ByMachine["steering"] == 0 {
		t.Errorf("%s; %d runs ended", st, rep.Ended)
	}
}

// TestWatchKeepsLogLinesWhole: a log line the Go runtime's dump cut into
// ("  G" + the line, then the dump line's rest) reaches Config.HostLog
// whole, as the host wrote it.
func TestWatchKeepsLogLinesWhole(t *testing.T) {
	var log bytes.Buffer
	w := newGoroutineWatch(&log)
	line := `{"level":"trace","component":"octet-host","message":"state machine transition"}`
	w.consume(strings.NewReader("SCHED 2004ms: gomaxprocs=2\n  G" + line + "\n17: status=4(select) m=nil lockedm=nil\n" + line + "\n"))
	if got := strings.Count(log.String(), line+"\n"); got != 2 || strings.Contains(log.String(), "G{") {
		t.Errorf("log %q: want the line twice, whole", log.String())
	}
	if tail := w.logTail(); strings.Contains(tail, "octet-host") {
		t.Errorf("trace lines in the tail: %q", tail)
	}
}
