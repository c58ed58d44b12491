package shell

import (
	"encoding/binary"
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nsInitName is argv[0] of a namespace-mode guard: the host re-executes
// its own binary (/proc/self/exe) under this name, and the package's init
// function turns that process into the guard before anything else of the
// program runs (see the package documentation, "Isolation").
const nsInitName = "octet-shell-nsinit"

// The guard's descriptors: fd 0 is /dev/null, fds 1 and 2 the command's
// output pipes (passed on to the shell, then closed), fd 3 the pipe only
// the host writes, fd 4 the report pipe to the host.
const (
	nsGuardFd  = 3
	nsReportFd = 4
)

// Reports the guard writes on fd 4, one line each. The first line is
// nsReportStarted and the shell's pid in the host's /proc (0 where the
// guard could not read it), nsReportRefused and an errno (the
// kernel refused the fresh /proc: the host falls back), nsReportChdir and
// an errno (the command's folder could not be entered) or nsReportExec and
// an errno (the shell could not be started). Once the shell has exited
// follows nsReportExit and its status, or nsReportSignal and the signal
// number that killed it.
const (
	nsReportStarted = "started"
	nsReportRefused = "refused"
	nsReportChdir   = "chdir"
	nsReportExec    = "exec"
	nsReportExit    = "exit"
	nsReportSignal  = "signal"
)

func init() {
	if len(os.Args) == 2 && os.Args[0] == nsInitName {
		nsInit(os.Args[1])
	}
}

// nsInit is the guard: pid 1 of the command's PID namespace, in its own
// mount namespace, holding CAP_SYS_ADMIN (ambient, in its own user
// namespace only) for the mounts. It makes the mount tree private, mounts
// a /proc of the new PID namespace and drops its capabilities; then it
// reads its command from the host's pipe (a guard may be started before
// its command is known, see spare.go; one whose pipe ends first exits),
// enters the command's folder and starts the command's shell, with the
// command's environment, as its child in a process group of its own. Then
// it reaps every process of the namespace (it is their init), reports the
// shell's status, and exits when the host's pipe ends; the kernel then
// SIGKILLs whatever is left in the namespace. It never returns.
func nsInit(selfMap string) {
	// The main goroutine runs on the main thread during init; it stays
	// there, so the shell is a child of the thread whose id is the
	// guard's pid (the host finds it in /proc/<pid>/task/<pid>/children).
	runtime.LockOSThread()
	unix.CloseOnExec(nsGuardFd)
	unix.CloseOnExec(nsReportFd)
	report := func(what string, n int) {
		unix.Write(nsReportFd, []byte(what+" "+strconv.Itoa(n)+"\n"))
	}
	// A signal from inside the namespace reaches its init only through a
	// handler, and the Go runtime installs some (SIGTERM would end the
	// program): every signal is caught and dropped instead. (SIG_IGN would
	// be inherited by the shell; caught signals are reset at its exec.)
	signal.Notify(make(chan os.Signal, 1))
	// A host that is not root cannot write the maps of its non-dumpable
	// child; the guard, dumpable again since its exec, maps the host's
	// ids onto themselves itself (the one mapping an unprivileged process
	// may write), then turns non-dumpable.
	if uid, gid, ok := strings.Cut(selfMap, ":"); ok {
		err := os.WriteFile("/proc/self/uid_map", []byte(uid+" "+uid+" 1\n"), 0)
		if err == nil {
			err = os.WriteFile("/proc/self/setgroups", []byte("deny"), 0)
		}
		if err == nil {
			err = os.WriteFile("/proc/self/gid_map", []byte(gid+" "+gid+" 1\n"), 0)
		}
		if err != nil {
			report(nsReportRefused, errnoOf(errors.Unwrap(err)))
			os.Exit(1)
		}
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// The host's /proc stays reachable through hostProc, where the guard
	// finds its shell's pid as the host sees it.
	hostProc, err := unix.Open("/proc", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	}
	if err == nil {
		err = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	if err != nil {
		report(nsReportRefused, errnoOf(err))
		os.Exit(1)
	}
	// The shell gets no capability: the ambient set is cleared on this
	// thread, which forks it, and a non-root user loses the rest at exec.
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	// A root host's commands are root in their namespace; without
	// CAP_SYS_ADMIN they can neither unmount their /proc (which would show
	// the host's) nor mount anything. (A non-root guard may not drop it,
	// and its shell has no capability anyway.)
	unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_ADMIN, 0, 0, 0)
	cmd, ok := readGuardSpec(nsGuardFd)
	if !ok {
		os.Exit(0) // the host ended an unused guard
	}
	if err := unix.Chdir(cmd.dir); err != nil {
		report(nsReportChdir, errnoOf(err))
		os.Exit(1)
	}
	pid, err := syscall.ForkExec(cmd.shell, []string{cmd.shell, "-c", cmd.command}, &syscall.ProcAttr{
		Env:   cmd.env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		report(nsReportExec, errnoOf(err))
		os.Exit(1)
	}
	// The guard keeps no end of the output pipes: they close when the
	// shell and its descendants are done with them.
	if null, err := unix.Open(os.DevNull, unix.O_RDWR, 0); err == nil {
		unix.Dup2(null, 1)
		unix.Dup2(null, 2)
		unix.Close(null)
	}
	// The shell is listed among the guard's children until it is reaped,
	// which only the guard does, below.
	report(nsReportStarted, hostChild(hostProc))
	unix.Close(hostProc)
	// The guard reaps the processes of its namespace (it is their init)
	// until the shell exits; the shell itself stays a zombie, so its pid
	// and process group id stay reserved while the host's ladder uses
	// them. Later orphans stay zombies too: the ladder counts them as gone,
	// and they go with the namespace.
	go func() {
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return
			}
			p, status := childInfo(&info)
			if p != pid {
				var ws unix.WaitStatus
				unix.Wait4(p, &ws, 0, nil)
				continue
			}
			switch info.Code {
			case cldExited:
				report(nsReportExit, status)
			default: // killed or dumped
				report(nsReportSignal, status)
			}
			return
		}
	}()
	var b [64]byte
	for {
		n, err := unix.Read(nsGuardFd, b[:])
		if n == 0 && err != unix.EINTR {
			break
		}
	}
	os.Exit(0)
}

// si_code values of a child's end (CLD_EXITED; CLD_KILLED and CLD_DUMPED
// mean a signal).
const cldExited = 1

// errnoOf returns err's errno, or EINVAL.
func errnoOf(err error) int {
	if e, ok := err.(syscall.Errno); ok {
		return int(e)
	}
	return int(unix.EINVAL)
}

// hostChild returns the pid, in the host's /proc (hostProc), of the one
// child of the calling thread, the guard's main thread; 0 when it cannot
// be read (a kernel without the children file).
func hostChild(hostProc int) int {
	self, err := readlinkat(hostProc, "thread-self")
	if err != nil {
		return 0
	}
	fd, err := unix.Openat(hostProc, self+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var b [64]byte
	n, _ := unix.Read(fd, b[:])
	f := strings.Fields(string(b[:max(n, 0)]))
	if len(f) != 1 {
		return 0
	}
	pid, _ := strconv.Atoi(f[0])
	return pid
}

func readlinkat(dirfd int, path string) (string, error) {
	var b [256]byte
	n, err := unix.Readlinkat(dirfd, path, b[:])
	if err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

// childInfo returns si_pid and si_status of a SIGCHLD siginfo, which
// unix.Siginfo keeps in its padding: the union follows si_signo, si_errno
// and si_code at pointer alignment.
func childInfo(info *unix.Siginfo) (pid, status int) {
	off := (12 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)
	b := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(info))
	pid = int(int32(binary.NativeEndian.Uint32(b[off:])))
	status = int(int32(binary.NativeEndian.Uint32(b[off+8:])))
	return pid, status
}
