package shell

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Isolation modes of commands (see the package documentation, "Isolation").
const (
	// IsolationNamespaces: every command runs in its own user and PID
	// namespaces; the namespace's init is the command's guard.
	IsolationNamespaces = "namespaces"
	// IsolationGroups: the kernel refused the namespaces; commands run in
	// their own process group with the token, the guard and the ladder.
	IsolationGroups = "process_groups"
)

// nsRefused records that the kernel refused to create the namespaces (or
// the operator opted out), so later commands go straight to the fallback;
// nsReason says why.
var (
	nsRefused atomic.Bool
	nsReason  atomic.Pointer[string]
)

// OptOutEnv is the environment variable with which an operator turns
// namespace mode off for the whole process: "off", "0" or "false".
const OptOutEnv = "OCTET_SHELL_NAMESPACES"

// optedOut reports whether the operator turned namespace mode off; it is
// read once per process.
var optedOut = sync.OnceValue(func() bool {
	switch os.Getenv(OptOutEnv) {
	case "off", "0", "false":
		return true
	}
	return false
})

// refuseNamespaces switches the process to the fallback for good.
func refuseNamespaces(reason string) {
	nsReason.CompareAndSwap(nil, &reason)
	nsRefused.Store(true)
}

// Isolation reports the mechanism the next command gets: namespaces until
// the kernel has refused them once (or when the operator opted out), then
// process groups.
func Isolation() string {
	if nsRefused.Load() || optedOut() {
		return IsolationGroups
	}
	return IsolationNamespaces
}

// FallbackReason says why commands run in the fallback ("" in namespace
// mode): the kernel's refusal, or the operator's opt-out.
func FallbackReason() string {
	if optedOut() {
		return OptOutEnv + "=" + os.Getenv(OptOutEnv)
	}
	if r := nsReason.Load(); r != nil {
		return *r
	}
	if nsRefused.Load() {
		return "refused"
	}
	return ""
}

// undumpable makes the host process non-dumpable, once. Its /proc entries
// (environ, fd, mem, maps) then open only for a process with
// CAP_SYS_PTRACE in the host's user namespace, which a command in its own
// user namespace never has, and which a command of a non-root host has
// not to begin with.
var undumpable = sync.OnceValue(func() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
})

// MakeUndumpable makes the calling process non-dumpable (idempotent). Run
// calls it before starting a command; a host calls it at start-up, so
// that its environment is closed to every child from the beginning.
func MakeUndumpable() error { return undumpable() }

// selfExe is the path of the host's executable, which the guard runs
// again: /proc/self/exe is not usable in a non-dumpable process's child
// that entered a user namespace (EACCES); the path resolved at first use is.
var selfExe = sync.OnceValue(func() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return "/proc/self/exe"
})

// selfExeIsGo reports whether the executable is this Go program, whose
// init runs the guard: not so when the runtime was built into a C library
// (c-shared, c-archive) or a plugin, where the executable is another
// program that must not be run as a guard.
var selfExeIsGo = sync.OnceValue(func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "-buildmode" && st.Value != "exe" && st.Value != "pie" && st.Value != "default" {
				return false
			}
		}
	}
	return true
})

// nsSelfMap is the guard's argument that tells it which ids to map onto
// themselves ("uid:gid"), or "" (a root host wrote the maps).
func nsSelfMap() string {
	if uid := os.Geteuid(); uid != 0 {
		return strconv.Itoa(uid) + ":" + strconv.Itoa(os.Getegid())
	}
	return ""
}

// guardReportWait bounds the wait for the guard's first report.
const guardReportWait = 10 * time.Second

// nsAttr returns the clone attributes of a namespace-mode guard: new
// user, PID and mount namespaces, the user namespace mapping the host's
// ids onto themselves (the whole range for a root host, which keeps every
// file's ownership; its own ids for another user, which the guard maps
// itself, see nsSelfMap). A guard that is not root in its namespace keeps
// CAP_SYS_ADMIN there (ambient) through its exec, for its mounts; it
// clears it before it starts the shell.
func nsAttr() *syscall.SysProcAttr {
	uid := os.Geteuid()
	attr := &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
	}
	if uid == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.UidMappings, attr.GidMappings = all, all
		attr.GidMappingsEnableSetgroups = true
	} else {
		// The guard writes its own maps (nsSelfMap): a non-dumpable host
		// cannot write its child's, whose /proc files are then root's.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	return attr
}

// nsUnavailable reports whether err from starting a namespace-mode shell
// says the kernel (or a seccomp filter, or a limit) refuses the
// namespaces, as opposed to a failure the fallback would meet too.
func nsUnavailable(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) ||
		errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EUSERS) ||
		errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOSYS)
}

// nsStatus is how a namespace-mode shell ended, as its guard reported it.
type nsStatus struct {
	exitCode int
	signal   syscall.Signal // 0 unless a signal killed the shell
}

// readLine reads one line from r, byte by byte (nothing past the newline
// is consumed), within deadline.
func readLine(r *os.File, deadline time.Time) (string, error) {
	r.SetReadDeadline(deadline)
	var line []byte
	var b [1]byte
	for len(line) < 64 {
		n, err := r.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				return string(line), nil
			}
			line = append(line, b[0])
			continue
		}
		if err != nil {
			return string(line), err
		}
	}
	return string(line), fmt.Errorf("%w: %q", errReportTooLong, line)
}

// errReportTooLong is readLine's error for a line past 64 bytes.
var errReportTooLong = errors.New("shell: guard report too long")

// parseReport splits a report line into its word and number.
func parseReport(line string) (what string, n int, ok bool) {
	what, num, _ := strings.Cut(line, " ")
	n, err := strconv.Atoi(num)
	return what, n, err == nil
}

// startNS starts a namespace-mode command: it takes a guard (the spare,
// or a new one), writes it the command, and reads its report that it
// started the shell or why it could not. (The next spare is started when
// the command ends, see endNS.)
func startNS(s Spec) (*command, error) {
	token := rand.Text()
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	// The guard execs the command's shell: one that cannot be executed
	// must fail here, as it does in the fallback.
	if err := unix.Access(s.Shell, unix.X_OK); err != nil {
		return nil, fmt.Errorf("shell: start: %w", &os.PathError{Op: "fork/exec", Path: s.Shell, Err: err})
	}
	// The token reaches the shell only, so the ladder never finds the
	// guard.
	spec, err := guardSpec{dir: s.Dir, shell: s.Shell, command: s.Command, env: withToken(env, token)}.encode()
	if err != nil {
		return nil, fmt.Errorf("shell: start: %w", &os.PathError{Op: "fork/exec", Path: s.Shell, Err: err})
	}
	began := time.Now()
	g, err := takeGuard()
	if err != nil {
		// Namespaces refused, or the executable gone or replaced by one
		// that cannot run: the fallback does without the guard. A
		// transient failure (EAGAIN, ENOMEM) is the command's only.
		if nsUnavailable(err) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOEXEC) {
			return nil, fmt.Errorf("%w: %w", errNamespacesRefused, err)
		}
		return nil, fmt.Errorf("shell: start: %w", err)
	}
	fail := func(err error) (*command, error) {
		g.p.Kill()
		<-g.exited
		g.p.Wait()
		g.guardW.Close()
		g.release()
		return nil, err
	}
	// A guard that died before it read its spec (its namespaces refused)
	// has reported why: the write's error is the report's to tell.
	g.guardW.SetWriteDeadline(time.Now().Add(guardReportWait))
	g.guardW.Write(spec)
	line, err := readLine(g.reportR, time.Now().Add(guardReportWait))
	what, n, ok := parseReport(line)
	switch {
	case err != nil && line == "":
		return fail(fmt.Errorf("shell: start guard: no report: %w", err))
	case !ok:
		return fail(fmt.Errorf("shell: start guard: report %q", line))
	case what == nsReportRefused:
		return fail(fmt.Errorf("%w: mounting /proc: %w", errNamespacesRefused, syscall.Errno(n)))
	case what == nsReportChdir:
		return fail(fmt.Errorf("shell: start: %w", &os.PathError{Op: "chdir", Path: s.Dir, Err: syscall.Errno(n)}))
	case what == nsReportExec:
		return fail(fmt.Errorf("shell: start: %w", &os.PathError{Op: "fork/exec", Path: s.Shell, Err: syscall.Errno(n)}))
	case what != nsReportStarted:
		return fail(fmt.Errorf("shell: start guard: report %q", line))
	}
	shellPid := n
	if shellPid <= 1 {
		// Without the shell's pid the ladder has no group to signal.
		return fail(fmt.Errorf("%w: the guard could not read its child's pid", errNamespacesRefused))
	}
	// The guard leaves the shell a zombie until the host closes its pipe,
	// so both are there to be read.
	var buf [statBufBytes]byte
	sh, ok1 := readStat(shellPid, buf[:])
	gs, ok2 := readStat(g.p.Pid, buf[:])
	if !ok1 || !ok2 {
		return fail(fmt.Errorf("shell: start guard: shell %d or guard %d gone", shellPid, g.p.Pid))
	}
	e := &entry{pgid: shellPid, token: token, roots: []proc{sh, gs}, guard: g.p.Pid, start: min(sh.start, gs.start)}
	done := make(chan struct{})
	c := &command{began: began, exited: done, guardW: g.guardW, entry: e, unregister: func() {},
		nsGuard: g.p, nsGuardExited: g.exited,
		nsEntry: &entry{pgid: shellPid, token: token, roots: []proc{sh}, start: sh.start}}
	// The second report is the shell's status; a guard that dies first
	// took the shell with it (SIGKILL).
	c.nsStatus = nsStatus{exitCode: -1, signal: syscall.SIGKILL}
	reportR := g.reportR
	go func() {
		defer close(done)
		defer reportR.Close()
		// A command can open its guard's report pipe through /proc/1/fd
		// (it shares the guard's user): a line that is not a report is
		// skipped, so such writes cannot cut the command short.
		for {
			line, err := readLine(reportR, time.Time{})
			switch what, n, ok := parseReport(line); {
			case ok && what == nsReportExit:
				c.nsStatus = nsStatus{exitCode: n}
				return
			case ok && what == nsReportSignal:
				c.nsStatus = nsStatus{exitCode: -1, signal: syscall.Signal(n)}
				return
			}
			if err != nil && !errors.Is(err, errReportTooLong) {
				return
			}
		}
	}()
	c.outR, c.errR = g.outR, g.errR
	c.startReading(s)
	return c, nil
}

// endNS ends a namespace-mode command's guard once Run is done with the
// command: the end of its pipe makes it exit, and the kernel SIGKILLs
// whatever is left in the namespace. A guard still there after killWait
// is SIGKILLed. It reaps the guard.
func (c *command) endNS() {
	// The next command's guard starts now, while the run is busy with
	// other things than commands (the spare's start would only compete
	// with this command's).
	refillSpare()
	c.guardW.Close()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-c.nsGuardExited:
	case <-t.C:
		c.nsGuard.Kill()
		<-c.nsGuardExited
	}
	c.nsGuard.Wait()
}
