package shell

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
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

// nsRefused records that the kernel refused to create the namespaces, so
// later commands go straight to the fallback.
var nsRefused atomic.Bool

// Isolation reports the mechanism the next command gets: namespaces until
// the kernel has refused them once, then process groups.
func Isolation() string {
	if nsRefused.Load() {
		return IsolationGroups
	}
	return IsolationNamespaces
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

// nsPrologue is what the prologue interpreter (posixShell) runs first in
// namespace mode, with $0 the command's shell, $1 the guard script, $2 the
// command, $3 the token and $4 the interpreter itself. Its first fork
// becomes the init of the new PID namespace (the process unshared it for
// its children only, so it keeps its own pid, process group and ordinary
// signal handling): that is the guard, which reads the host's pipe on
// fd 3. The prologue reports the guard's pid on fd 4, closes both
// descriptors and execs the command's shell, so the command never runs
// without its guard and never holds fd 3 or 4. The prologue and the guard
// run with a POSIX sh, whatever shell the operator configured for the
// command.
const nsPrologue = `"$4" -c "$1" octet-shell-guard "$3" <&3 >/dev/null 2>&1 3<&- 4>&- &
echo $! >&4
exec 3<&- 4>&-
exec "$0" -c "$2"`

// posixShell returns the interpreter of the prologue and the guard:
// /bin/sh where it exists, else the command's shell (which must then
// accept POSIX sh syntax, as Spec.Shell documents).
func posixShell(commandShell string) string {
	if fi, err := os.Stat("/bin/sh"); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return "/bin/sh"
	}
	return commandShell
}

// nsGuardScript is the guard of a namespace-mode command: the init of the
// command's PID namespace. It waits for the end of the host's pipe (the
// host closes it when the command is over, or the kernel does when the
// host dies) and exits; the kernel then SIGKILLs every process left in the
// namespace, wherever it moved in the process tree and whatever it did to
// its environment. As init it receives only the signals it handles (none)
// from inside the namespace, so a command cannot kill it; a SIGKILL from
// outside (the shell itself, the ladder) ends the namespace the same way.
const nsGuardScript = `read -r x
exit 0`

// guardReportWait bounds the wait for the shell to report its guard.
const guardReportWait = 10 * time.Second

// nsAttr returns the clone attributes of a namespace-mode shell: a new
// user namespace mapping the host's ids onto themselves (the whole range
// for a root host, which keeps every file's ownership; its own ids for
// another user), and a PID namespace for the shell's children.
func nsAttr() *syscall.SysProcAttr {
	uid, gid := os.Geteuid(), os.Getegid()
	attr := &syscall.SysProcAttr{
		Setpgid:      true,
		Pdeathsig:    syscall.SIGKILL,
		Cloneflags:   syscall.CLONE_NEWUSER,
		Unshareflags: syscall.CLONE_NEWPID,
	}
	if uid == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.UidMappings, attr.GidMappings = all, all
		attr.GidMappingsEnableSetgroups = true
	} else {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
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

// nsGuard is the guard of a namespace-mode command, which is not the
// host's child (the shell forked it), so the host holds it by pidfd.
type nsGuard struct {
	pid   int
	pidfd int
}

// readGuardPid reads the guard's pid that the shell writes on r, and
// opens a pidfd on it after checking it is the init of a PID namespace
// (pid 1 there). The guard cannot exit before the host closes its pipe, so
// its pid cannot be reused in between.
func readGuardPid(r *os.File) (nsGuard, error) {
	r.SetReadDeadline(time.Now().Add(guardReportWait))
	var buf [32]byte
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil || bytes.IndexByte(buf[:n], '\n') >= 0 {
			break
		}
	}
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	pid, err := strconv.Atoi(string(line))
	if err != nil || pid <= 1 {
		return nsGuard{}, fmt.Errorf("shell: the shell did not report its guard (read %q)", buf[:n])
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nsGuard{}, fmt.Errorf("shell: guard %d: %w", pid, err)
	}
	if !isNamespaceInit(pid) {
		unix.Close(fd)
		return nsGuard{}, fmt.Errorf("shell: guard %d is not the init of the command's PID namespace", pid)
	}
	return nsGuard{pid: pid, pidfd: fd}, nil
}

// isNamespaceInit reports whether pid is pid 1 of its innermost PID
// namespace, from the NSpid line of /proc/<pid>/status.
func isNamespaceInit(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
			f := bytes.Fields(rest)
			return len(f) >= 2 && string(f[len(f)-1]) == "1"
		}
	}
	return false
}

// end waits for the guard to be gone after the host closed its pipe, and
// with it every process of the namespace; a guard still there after
// killWait is SIGKILLed. It reaps the guard when the guard has become the
// host's child (a host that is a subreaper or pid 1), and closes the pidfd.
func (g nsGuard) end() {
	fds := []unix.PollFd{{Fd: int32(g.pidfd), Events: unix.POLLIN}}
	gone := func() bool {
		deadline := time.Now().Add(killWait)
		for {
			n, err := unix.Poll(fds, int(max(min(time.Until(deadline), time.Second), 0).Milliseconds()))
			if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
				return true
			}
			if !time.Now().Before(deadline) {
				return false
			}
		}
	}
	if !gone() {
		unix.PidfdSendSignal(g.pidfd, unix.SIGKILL, nil, 0)
		gone()
	}
	var info unix.Siginfo
	unix.Waitid(unix.P_PIDFD, g.pidfd, &info, unix.WEXITED|unix.WNOHANG, nil)
	unix.Close(g.pidfd)
}
