package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fallbackEnv, when set in a test process, makes every command of that
// process use the fallback (TestFallbackMode runs the package's process
// tests so).
const fallbackEnv = "SHELLTEST_FALLBACK"

func init() {
	if os.Getenv(fallbackEnv) != "" {
		nsRefused.Store(true)
	}
}

// requireNamespaces skips t where commands run in the fallback: the attacks
// below are closed by the namespaces (and, for a host that is not root,
// by non-dumpability alone; see the package documentation).
func requireNamespaces(t *testing.T) {
	t.Helper()
	if Isolation() != IsolationNamespaces {
		t.Skipf("commands run with %s here (the kernel refused the namespaces: %s)", Isolation(), FallbackReason())
	}
}

// The host is out of sight: the command's /proc is its own PID
// namespace's, so no environment or descriptor it can read there is the
// host's. The host's environment has a variable the command's lacks, and
// the host holds a file open whose name the command looks for.
func TestHostUnreachableThroughProc(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	marker := filepath.Join(t.TempDir(), "host-only-"+newMark())
	f, err := os.Create(marker)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hostVar := strings.SplitN(os.Environ()[0], "=", 2)[0]
	s := testSpec(t, newMark(), `
echo "pids: $(ls -d /proc/[0-9]* | wc -l)"
for p in /proc/[0-9]*; do
  { tr '\000' '\n' < $p/environ; } 2>/dev/null | grep -q "^`+hostVar+`=" && echo "host environ in $p"
  for l in $p/fd/*; do
    readlink "$l" 2>/dev/null | grep -q host-only- && echo "host fd in $l"
  done
done
true`)
	s.Env = []string{"PATH=" + os.Getenv("PATH"), markEnv + "=x"}
	if hostVar == "PATH" || hostVar == markEnv {
		t.Skipf("the host's first variable is %s", hostVar)
	}
	res := run(t, context.Background(), s)
	var pids int
	if _, err := fmt.Sscanf(res.Output, "pids: %d\n", &pids); err != nil || pids > 8 || strings.Count(res.Output, "\n") != 1 {
		t.Errorf("the command saw more than its guard, its shell and its own processes, or the host:\n%s", res.Output)
	}
}

// The namespaces are there: the command's shell lives in user, PID and
// mount namespaces other than the host's, its parent is the guard (pid 1,
// the init of its PID namespace), $$ is small, and the command runs as the
// host's user.
func TestCommandNamespaces(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	self := func(ns string) string {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	res := run(t, context.Background(), testSpec(t, newMark(), `readlink /proc/$$/ns/user; readlink /proc/$$/ns/pid; readlink /proc/$$/ns/mnt; echo $$; echo $PPID; tr '\000' ' ' < /proc/1/cmdline; echo; id -u`))
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != 7 {
		t.Fatalf("output %q", res.Output)
	}
	for i, ns := range []string{"user", "pid", "mnt"} {
		if lines[i] == self(ns) {
			t.Errorf("the command's shell shares the host's %s namespace %s", ns, lines[i])
		}
	}
	if pid, err := strconv.Atoi(lines[3]); err != nil || pid <= 1 || pid > 100 {
		t.Errorf("$$ = %s, want a small pid other than 1", lines[3])
	}
	if lines[4] != "1" || !strings.HasPrefix(lines[5], nsInitName+" ") {
		t.Errorf("the shell's parent is %s (%q), want the guard as pid 1", lines[4], lines[5])
	}
	if lines[6] != strconv.Itoa(os.Geteuid()) {
		t.Errorf("the command runs as uid %s, want the host's %d", lines[6], os.Geteuid())
	}
}

// A command cannot unmount its /proc to look at the host's, even a root
// host's command (root in its own namespace only).
func TestProcCannotBeUnmounted(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	res := run(t, context.Background(), testSpec(t, newMark(), `umount /proc 2>/dev/null || umount -l /proc 2>/dev/null || echo refused; ls -d /proc/[0-9]* 2>/dev/null | wc -l`))
	var n int
	if _, err := fmt.Sscanf(res.Output, "refused\n%d\n", &n); err != nil || n > 8 {
		t.Errorf("after umount /proc the command saw %q", res.Output)
	}
}

// A process that leaves the group, scrubs its environment and is orphaned
// (the token cannot find it) still ends with the command.
func TestScrubbedEscapeeEnded(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	n := 4245000 + os.Getpid()%1000
	res := run(t, context.Background(), testSpec(t, newMark(), fmt.Sprintf(`(setsid env -i sleep %d >/dev/null 2>&1 &); (setsid env -i sleep %d &); echo started`, n, n+1)))
	if res.Output != "started\n" || res.ExitCode != 0 {
		t.Errorf("result %+v", res)
	}
	if left := sleepsWithArg(strconv.Itoa(n), strconv.Itoa(n+1)); len(left) > 0 {
		t.Errorf("scrubbed escapees outlived the command: %v", left)
		for _, pid := range left {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// A command cannot end its guard (the init of its PID namespace ignores
// every signal from inside), and a host SIGKILLed while the command runs
// leaves nothing: the guard dies of Pdeathsig and the namespace with it.
func TestGuardKilledThenHostKilled(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	n := 4246000 + os.Getpid()%1000
	a, b := strconv.Itoa(n), strconv.Itoa(n+1)
	cmd := `sleep ` + a + ` & setsid sleep ` + b + ` &
for s in KILL STOP TERM INT HUP SEGV; do kill -s $s 1; done
sleep ` + a + `; wait`
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperEnv+"="+cmd)
	host.Stdout, host.Stderr = os.Stderr, os.Stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		host.Process.Kill()
		host.Wait()
		for _, pid := range sleepsWithArg(a, b) {
			unix.Kill(pid, unix.SIGKILL)
		}
	}()
	// Wait until the command has had its go at the guard: once it has, its
	// first sleeps are gone (or, in a broken build, still running).
	eventually(t, "the command to start", func() bool {
		return len(descendants(t, host.Process.Pid)) > 0
	})
	eventually(t, "the command's sleeps", func() bool { return len(sleepsWithArg(a, b)) == 3 })
	// The command's guard is the one with children (a spare guard, started
	// for the next command, may be there too, childless).
	desc := descendants(t, host.Process.Pid)
	guards := 0
	for _, p := range desc {
		if isGuard(p.pid) && slices.ContainsFunc(desc, func(c proc) bool { return c.ppid == p.pid }) {
			guards++
		}
	}
	if guards != 1 {
		t.Errorf("%d guards of the command alive after its signals, want 1", guards)
	}
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	eventually(t, "every sleep of the command to be gone", func() bool { return len(sleepsWithArg(a, b)) == 0 })
}

// sleepsWithArg returns the live (not zombie) sleep processes whose only
// argument is one of args.
func sleepsWithArg(args ...string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var buf [statBufBytes]byte
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(d + "/cmdline")
		if err != nil {
			continue
		}
		f := strings.Split(strings.TrimSuffix(string(cl), "\x00"), "\x00")
		if len(f) != 2 || filepath.Base(f[0]) != "sleep" {
			continue
		}
		for _, a := range args {
			if f[1] == a {
				if p, ok := readStat(pid, buf[:]); ok && !p.dead {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// The fallback keeps working: the package's process tests run again in a
// child test process whose commands all use process groups.
func TestFallbackMode(t *testing.T) {
	if os.Getenv(fallbackEnv) != "" {
		t.Skip("already in the fallback")
	}
	if testing.Short() {
		t.Skip("short")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.count=1",
		"-test.run=^(TestExitCode|TestKilledBySignal|TestShellLeadsGroup|TestTimeoutKillsGroup|TestCancelWithTrapGetsOnlyTerm|TestIgnoredTermGetsKill|TestLeftoversEnded|TestEscapeesEndedByLadder|TestPdeathsig|TestOnlyStdioInherited|TestHostStdoutNotInherited|TestFallbackReported|TestSignalExitStatus|TestGrandchildrenEnded)$")
	cmd.Env = append(os.Environ(), fallbackEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fallback run: %v\n%s", err, out)
	}
}

func TestFallbackReported(t *testing.T) {
	if os.Getenv(fallbackEnv) == "" {
		t.Skip("only in the fallback run")
	}
	if Isolation() != IsolationGroups {
		t.Errorf("Isolation() = %q in the fallback", Isolation())
	}
}
