package shell

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// helperEnv, when set, turns the test binary into a host that runs the
// command it names through Run (see TestPdeathsig).
const helperEnv = "SHELLTEST_HELPER_COMMAND"

// markEnv names the variable every test command carries, so a test can
// find the processes its command started wherever they went.
const markEnv = "SHELLTEST_MARK"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(helperEnv); cmd != "" {
		helperMain(cmd)
		return
	}
	if dir := os.Getenv(spareMountEnv); dir != "" {
		spareMountMain(dir)
		return
	}
	goleak.VerifyTestMain(spareReleasing{m})
}

// spareReleasing ends the shell's spare guard (a child process and the
// goroutine waiting on it) once the tests are over, before goleak looks.
type spareReleasing struct{ m *testing.M }

func (s spareReleasing) Run() int {
	code := s.m.Run()
	ReleaseSpare()
	return code
}

// helperMain runs cmd and never returns normally: the test SIGKILLs it
// while cmd runs.
func helperMain(cmd string) {
	var reg Registry
	_, err := Run(context.Background(), Spec{Shell: bashPath(nil), Dir: "/", Command: cmd, Env: os.Environ(), Registry: &reg})
	if err != nil {
		os.Stderr.WriteString("helper: " + err.Error() + "\n")
		os.Exit(2)
	}
	os.Exit(0)
}

// bashPath returns the path of bash, skipping t when there is none (t nil:
// "/bin/sh").
func bashPath(t testing.TB) string {
	p, err := exec.LookPath("bash")
	if err == nil {
		if p, err = filepath.Abs(p); err == nil {
			return p
		}
	}
	if t == nil {
		return "/bin/sh"
	}
	t.Skip("bash not found")
	return ""
}

// newMark returns a fresh mark value.
func newMark() string { return rand.Text() }

// testSpec returns a Spec running command in a temporary directory, with
// short timings, carrying mark in its environment.
func testSpec(t testing.TB, mark, command string) Spec {
	return Spec{
		Shell:   bashPath(t),
		Dir:     t.TempDir(),
		Command: command,
		Grace:   300 * time.Millisecond,
		Env:     append(os.Environ(), markEnv+"="+mark),
	}
}

// liveProc is a live process seen by a test.
type liveProc struct {
	proc
	comm string
}

// marked returns the live processes (zombies excluded) other than the test
// process whose environment carries mark.
func marked(t testing.TB, mark string) []liveProc {
	t.Helper()
	procs, err := listProcs()
	if err != nil {
		t.Fatal(err)
	}
	var out []liveProc
	for _, p := range procs {
		if p.dead || p.kernel || p.pid == os.Getpid() || !environHas(p.pid, []string{markEnv + "=" + mark + "\x00"}) {
			continue
		}
		out = append(out, liveProc{p, comm(p.pid)})
	}
	return out
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// countComm counts the processes in ps named name.
func countComm(ps []liveProc, name string) int {
	n := 0
	for _, p := range ps {
		if p.comm == name {
			n++
		}
	}
	return n
}

// alive reports which of ps still run (same pid and start time, not a
// zombie).
func alive(ps []proc) []proc {
	var out []proc
	var buf [statBufBytes]byte
	for _, p := range ps {
		if now, ok := readStat(p.pid, buf[:]); ok && now.start == p.start && !now.dead {
			out = append(out, p)
		}
	}
	return out
}

// hangGuard bounds the polls of tests; reaching it is a failure, never a
// timing assertion.
const hangGuard = 10 * time.Second

// eventually polls cond until it holds, failing t after hangGuard.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// requireNoneMarked fails t when a process carrying mark still runs.
func requireNoneMarked(t testing.TB, mark string) {
	t.Helper()
	if left := marked(t, mark); len(left) > 0 {
		t.Errorf("processes left behind: %+v", left)
		for _, p := range left {
			signalProc(p.proc, unix.SIGKILL)
		}
	}
}

// groupMembers returns the live processes in process group pgid.
func groupMembers(t testing.TB, pgid int) []proc {
	t.Helper()
	procs, err := listProcs()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(procs, func(p proc) bool { return p.dead || p.pgid != pgid })
}

// descendants returns the live descendants of pid.
func descendants(t testing.TB, pid int) []proc {
	t.Helper()
	procs, err := listProcs()
	if err != nil {
		t.Fatal(err)
	}
	in := map[int]bool{pid: true}
	for changed := true; changed; {
		changed = false
		for _, p := range procs {
			if in[p.ppid] && !in[p.pid] {
				in[p.pid], changed = true, true
			}
		}
	}
	return slices.DeleteFunc(procs, func(p proc) bool { return p.dead || p.pid == pid || !in[p.pid] })
}
