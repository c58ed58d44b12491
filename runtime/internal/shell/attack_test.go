package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// attackEnv, when set, turns the test binary into a host that runs the
// command it names, then a second command, and prints both outputs: a
// host the first command stopped or killed prints nothing.
const attackEnv = "SHELLTEST_ATTACK"

func init() {
	if cmd := os.Getenv(attackEnv); cmd != "" {
		attackMain(cmd)
	}
}

func attackMain(cmd string) {
	if os.Getenv(fallbackEnv) != "" {
		nsRefused.Store(true)
	}
	var reg Registry
	s := Spec{Shell: bashPath(nil), Dir: "/", Command: cmd, Timeout: 20 * time.Second, Grace: 300 * time.Millisecond, Registry: &reg}
	first, err := Run(context.Background(), s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "attack host:", err)
		os.Exit(2)
	}
	s.Command = "echo next"
	next, err := Run(context.Background(), s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "attack host:", err)
		os.Exit(2)
	}
	fmt.Printf("first %q\nnext %q\n", first.Output, next.Output)
	os.Exit(0)
}

// attack runs cmd in a host of its own (a child of the test) and returns
// what the host printed and how it ended; a host stopped by cmd is killed
// after a minute.
func attack(t *testing.T, cmd string, fallback bool) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), attackEnv+"="+cmd)
	if fallback {
		host.Env = append(host.Env, fallbackEnv+"=1")
	}
	host.Stderr = os.Stderr
	out, err := host.Output()
	return string(out), err
}

// Commands that try to stop or kill everything they can see reach neither
// their host nor anything outside their namespace: the host finishes the
// command and runs the next one. Before attacking, the test checks that a
// command sees only its own namespace, so a broken build fails here
// rather than stopping every process of the machine.
func TestAttacksOnTheHost(t *testing.T) {
	t.Parallel()
	requireNamespaces(t)
	res := run(t, context.Background(), testSpec(t, newMark(), `echo $PPID $(ls -d /proc/[0-9]* 2>/dev/null | wc -l)`))
	requireNamespaces(t) // the first command may have found them refused
	var ppid, n int
	if _, err := fmt.Sscanf(res.Output, "%d %d", &ppid, &n); err != nil || ppid != 1 || n > 8 {
		t.Fatalf("a command sees more than its namespace (%q): not attacking", res.Output)
	}
	for name, cmd := range map[string]string{
		"kill parent":            `kill -9 $PPID; kill -STOP $PPID; echo done`,
		"stop every visible pid": `for p in /proc/[0-9]*; do p=${p#/proc/}; [ "$p" = $$ ] || kill -STOP $p 2>/dev/null; done; echo done`,
		"kill -1":                `kill -9 -1 2>/dev/null; echo done`,
		"read environ and fd":    `cat /proc/[0-9]*/environ >/dev/null 2>&1; ls -l /proc/[0-9]*/fd/ >/dev/null 2>&1; echo done`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := attack(t, cmd, false)
			if want := "first \"done\\n\"\nnext \"next\\n\"\n"; err != nil || out != want {
				t.Errorf("host after the attack: %v, printed %q; want %q", err, out, want)
			}
		})
	}
}

// In the fallback a command still reaches its host: the mode is what the
// shell package did before namespaces (only this attack is tried there;
// the others would stop or kill every process of the host's user).
func TestFallbackParentReachable(t *testing.T) {
	t.Parallel()
	out, err := attack(t, `kill -9 $PPID; sleep 5; echo done`, true)
	if err == nil || strings.Contains(out, "next") {
		t.Errorf("the fallback's host survived kill -9 $PPID (%v, %q): is it still the fallback?", err, out)
	}
}

// The shell's status is what it is without namespaces: a child's death by
// a signal is status 128+n, and $$ is a pid of the command's namespace.
func TestSignalExitStatus(t *testing.T) {
	t.Parallel()
	res := run(t, context.Background(), testSpec(t, newMark(), `exec 2>/dev/null; sh -c 'kill -9 $$'; echo $?; sleep 1000 & kill -TERM $!; wait $!`))
	if res.Output != "137\n" || res.ExitCode != 143 || res.Signal != "" {
		t.Errorf("result = %+v, want output 137 and exit status 143", res)
	}
	if Isolation() == IsolationNamespaces {
		res = run(t, context.Background(), testSpec(t, newMark(), `echo $$`))
		if pid, err := strconv.Atoi(strings.TrimSpace(res.Output)); err != nil || pid > 100 {
			t.Errorf("$$ = %q, want a small pid", res.Output)
		}
	}
}

// A timeout ends an orphaned background grandchild too, and so does
// cancellation.
func TestGrandchildrenEnded(t *testing.T) {
	t.Parallel()
	for _, timeout := range []bool{true, false} {
		mark := newMark()
		s := testSpec(t, mark, `(sleep 1000 &); bash -c 'sleep 1000 & wait' & echo started; wait`)
		ctx, cancel := context.WithCancel(context.Background())
		if timeout {
			s.Timeout = 300 * time.Millisecond
		} else {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
		res := run(t, ctx, s)
		cancel()
		if res.Output != "started\n" || res.TimedOut != timeout || res.Canceled == timeout || res.Signal != "SIGTERM" {
			t.Errorf("timeout %v: result = %+v", timeout, res)
		}
		requireNoneMarked(t, mark)
	}
}

// The operator's opt-out puts the whole process in the fallback: the
// command's parent is the host itself.
func TestOptOutEnv(t *testing.T) {
	t.Parallel()
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), attackEnv+"=echo $PPID", OptOutEnv+"=off")
	host.Stderr = os.Stderr
	out, err := host.Output()
	if want := fmt.Sprintf("first \"%d\\n\"\n", host.Process.Pid); err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("opted-out host: %v, printed %q; want %q first", err, out, want)
	}
}
