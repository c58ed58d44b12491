package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
		t.Skipf("commands run with %s here (the kernel refused the namespaces)", Isolation())
	}
}

// The host cannot be read or written through /proc/$PPID: a command can
// neither read its environment (where the host keeps its API keys) nor
// open its descriptors (where the protocol pipes are), even as root. (It
// can list the descriptors' numbers, which the directory's owner may.)
func TestHostUnreachableThroughProc(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	res := run(t, context.Background(), testSpec(t, newMark(), `
test "$PPID" = "`+strconv.Itoa(os.Getpid())+`" && echo parent-ok
cat /proc/$PPID/environ >/dev/null 2>&1 && echo environ-read
for l in /proc/$PPID/fd/*; do readlink "$l" >/dev/null 2>&1 && echo fd-link-read; done
for fd in 0 1 2 3 4 5 6 7 8 9; do
  (echo '{"forged":true}' > /proc/$PPID/fd/$fd) 2>/dev/null && echo "fd-$fd-written"
done
cat /proc/$PPID/mem >/dev/null 2>&1 && echo mem-read
true`))
	if res.Output != "parent-ok\n" {
		t.Errorf("a command reached the host through /proc (want only parent-ok):\n%s", res.Output)
	}
}

// The namespaces are there: the command's shell lives in a user namespace
// other than the host's, its children in a PID namespace of their own, and
// it has no capability in the host's user namespace.
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
	res := run(t, context.Background(), testSpec(t, newMark(), `readlink /proc/$$/ns/user; readlink /proc/$$/ns/pid; sh -c 'readlink /proc/self/ns/pid; echo $$'; id -u`))
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != 5 {
		t.Fatalf("output %q", res.Output)
	}
	if lines[0] == self("user") {
		t.Errorf("the command's shell shares the host's user namespace %s", lines[0])
	}
	if lines[1] != self("pid") {
		t.Errorf("the command's shell itself should stay in the host's PID namespace: %s", lines[1])
	}
	if lines[2] == self("pid") || lines[3] == "1" {
		t.Errorf("a child of the shell: pid namespace %s, pid %s; want a new namespace where it is not init", lines[2], lines[3])
	}
	if lines[4] != strconv.Itoa(os.Geteuid()) {
		t.Errorf("the command runs as uid %s, want the host's %d", lines[4], os.Geteuid())
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

// A command that kills its guard and then has its host SIGKILLed leaves
// nothing: killing the guard ends the namespace at once. The command looks
// for its guard among its shell's children only: the guards of the tests
// running beside it are none of its business (killing them would end
// their namespaces and their commands with them).
func TestGuardKilledThenHostKilled(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	n := 4246000 + os.Getpid()%1000
	a, b := strconv.Itoa(n), strconv.Itoa(n+1)
	cmd := `sleep ` + a + ` & setsid sleep ` + b + ` &
for p in $(ps -o pid= --ppid $$); do
  if tr '\000' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q octet-shell-guard; then kill -9 $p 2>/dev/null; fi
done
echo guards-killed
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
	eventually(t, "the guard to be gone", func() bool {
		for _, p := range descendants(t, host.Process.Pid) {
			if isGuard(p.pid) {
				return false
			}
		}
		return true
	})
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
		"-test.run=^(TestExitCode|TestKilledBySignal|TestShellLeadsGroup|TestTimeoutKillsGroup|TestCancelWithTrapGetsOnlyTerm|TestIgnoredTermGetsKill|TestLeftoversEnded|TestEscapeesEndedByLadder|TestPdeathsig|TestOnlyStdioInherited|TestHostStdoutNotInherited|TestFallbackReported)$")
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
