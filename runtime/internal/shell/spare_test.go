package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The spare guard's tests are not parallel: the spare is the process's
// one, and a parallel test's command would take it.

// readySpare waits for a spare guard and returns its pid.
func readySpare(t *testing.T) int {
	t.Helper()
	pid := 0
	eventually(t, "a spare guard", func() bool {
		spares.mu.Lock()
		defer spares.mu.Unlock()
		if spares.ready != nil {
			pid = spares.ready.p.Pid
		}
		return pid != 0
	})
	return pid
}

// gone reports whether no process pid exists (a reaped guard).
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return errors.Is(err, os.ErrNotExist)
}

// A command that comes once a spare guard is ready runs in the spare's
// namespaces: its PID namespace is the one the spare made before the
// command was known.
func TestSpareServesNextCommand(t *testing.T) {
	requireNamespaces(t)
	defer ReleaseSpare()
	run(t, context.Background(), testSpec(t, newMark(), "true"))
	pid := readySpare(t)
	ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, context.Background(), testSpec(t, newMark(), `readlink /proc/self/ns/pid; pwd; echo "$`+markEnv+`"`))
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != 3 || lines[0] != ns {
		t.Fatalf("the command ran in %q, want the spare's PID namespace %s", res.Output, ns)
	}
	// What the spare could not know at its start is the command's.
	if lines[1] == "/" || lines[2] == "" {
		t.Errorf("the command's folder or environment is not its own: %q", res.Output)
	}
}

// ReleaseSpare ends the spare and reaps it; so does a spare's idle time.
func TestSpareEnds(t *testing.T) {
	requireNamespaces(t)
	run(t, context.Background(), testSpec(t, newMark(), "true"))
	pid := readySpare(t)
	ReleaseSpare()
	if !gone(pid) {
		t.Errorf("the spare guard %d is still there after ReleaseSpare", pid)
	}

	old := spareIdle
	spareIdle = 200 * time.Millisecond
	defer func() { spareIdle = old }()
	run(t, context.Background(), testSpec(t, newMark(), "true"))
	pid = readySpare(t)
	eventually(t, "the idle spare to be ended and reaped", func() bool {
		spares.mu.Lock()
		defer spares.mu.Unlock()
		return spares.ready == nil && gone(pid)
	})
}

// An environment entry with a NUL byte cannot reach execve(2): the
// command fails as it would in the fallback, and namespace mode stays in
// force.
func TestSpecWithNULRefused(t *testing.T) {
	requireNamespaces(t)
	s := testSpec(t, newMark(), "true")
	s.Env = append(s.Env, "BAD=a\x00b")
	_, err := Run(context.Background(), s)
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Run = %v, want EINVAL", err)
	}
	if Isolation() != IsolationNamespaces {
		t.Errorf("a NUL byte switched the process to %s", Isolation())
	}
}

// The guard's spec decodes to what was encoded.
func TestGuardSpecRoundTrip(t *testing.T) {
	want := guardSpec{dir: "/w", shell: "/bin/bash", command: "echo 'x y'\nls", env: []string{"A=1", "B=", "C=x=y"}}
	b, err := want.encode()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	w.Close()
	raw, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got guardSpec
	var ok bool
	raw.Read(func(fd uintptr) bool {
		unix.SetNonblock(int(fd), false)
		got, ok = readGuardSpec(int(fd))
		return true
	})
	if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %+v (%v), want %+v", got, ok, want)
	}
}

// spareMountEnv, when set, turns the test binary into a host in a mount
// namespace of its own that mounts a tmpfs on the folder it names while a
// spare guard waits, then runs a command that reports that folder's file
// system type (see TestSpareSeesNewMount).
const spareMountEnv = "SHELLTEST_SPARE_MOUNT"

func spareMountMain(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail(err)
	}
	s := Spec{Shell: bashPath(nil), Dir: "/", Command: "true"}
	if _, err := Run(context.Background(), s); err != nil {
		fail(err)
	}
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(time.Millisecond) {
		spares.mu.Lock()
		ready := spares.ready != nil
		spares.mu.Unlock()
		if ready {
			break
		}
		if time.Now().After(deadline) {
			fail(errors.New("no spare guard"))
		}
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		fail(err)
	}
	s.Command = "stat -f -c %T " + dir
	res, err := Run(context.Background(), s)
	if err != nil {
		fail(err)
	}
	fmt.Print(res.Output)
	ReleaseSpare()
	os.Exit(0)
}

// A mount made after the spare guard started is seen by the next command:
// the host notices that its mount tree changed and starts a new guard.
func TestSpareSeesNewMount(t *testing.T) {
	requireNamespaces(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir := t.TempDir()
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), spareMountEnv+"="+dir)
	host.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	host.Stderr = os.Stderr
	out, err := host.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	if strings.TrimSpace(string(out)) != "tmpfs" {
		t.Errorf("the command saw %q on %s, want the tmpfs mounted after the spare started", out, dir)
	}
}
