package shell

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// proc is one process as /proc/<pid>/stat describes it.
type proc struct {
	pid, ppid, pgid int
	// start is the process's start time in clock ticks after boot. With pid
	// it identifies a process: a reused pid has a later start time.
	start uint64
	// dead reports a zombie (or a task being torn down): it runs no code
	// and holds no pipe, so it counts as gone.
	dead bool
	// kernel reports a kernel thread, which has no environment.
	kernel bool
}

// pfKthread is the PF_KTHREAD bit of the flags field of stat.
const pfKthread = 0x00200000

// statBufBytes holds a whole /proc/<pid>/stat line: its only variable
// parts are the command name (at most 16 bytes) and about fifty numbers.
const statBufBytes = 1024

// readStat reads /proc/<pid>/stat into buf. It reports false when the
// process does not exist (any more) or the line cannot be parsed.
func readStat(pid int, buf []byte) (proc, bool) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return proc{}, false
	}
	n, err := readFull(fd, buf)
	unix.Close(fd)
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, buf[:n])
}

// readFull reads from fd until buf is full or EOF.
func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// parseStat parses a stat line "pid (comm) state ppid pgrp session … "
// whose 22nd field is the start time (proc(5)). The command name may hold
// spaces and parentheses, so fields are counted after the last ')'.
func parseStat(pid int, line []byte) (proc, bool) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return proc{}, false
	}
	p := proc{pid: pid}
	rest := line[i+1:]
	// field k of proc(5) (1-based) is index k-3 after the command name.
	for f := 0; f <= 19; f++ {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		tok := rest[:end]
		rest = rest[end:]
		if len(tok) == 0 {
			return proc{}, false
		}
		switch f {
		case 0:
			p.dead = tok[0] == 'Z' || tok[0] == 'X' || tok[0] == 'x'
		case 6:
			v, err := strconv.ParseUint(string(tok), 10, 64)
			if err != nil {
				return proc{}, false
			}
			p.kernel = v&pfKthread != 0
		case 1, 2:
			v, err := strconv.Atoi(string(tok))
			if err != nil {
				return proc{}, false
			}
			if f == 1 {
				p.ppid = v
			} else {
				p.pgid = v
			}
		case 19:
			v, err := strconv.ParseUint(string(tok), 10, 64)
			if err != nil {
				return proc{}, false
			}
			p.start = v
		}
	}
	return p, true
}

// listProcs returns every process /proc lists. Processes that exit while
// it reads are left out.
func listProcs() ([]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, statBufBytes)
	procs := make([]proc, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readStat(pid, buf); ok {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// Retries of an empty environment; see environHas.
const (
	environRetries = 8
	environPause   = 2 * time.Millisecond
)

// environHas reports whether the initial environment of process pid (what
// it was exec'd with) contains any of tokens. An unreadable environment
// (another user's process, a set-user-ID program, a zombie) holds none.
//
// A process in the middle of execve(2) shows an empty environment for a
// moment (its new memory has no environment yet, or the old memory is
// gone), and a command may well exec just after leaving its group, as
// "setsid sleep" does. So an empty read is retried for a few
// milliseconds; only a process whose environment really is empty costs
// the whole wait.
func environHas(pid int, tokens []string) bool {
	path := "/proc/" + strconv.Itoa(pid) + "/environ"
	var env []byte
	for try := 0; ; try++ {
		var err error
		env, err = os.ReadFile(path)
		if err != nil {
			return false
		}
		if len(env) > 0 {
			break
		}
		if try == environRetries {
			return false
		}
		time.Sleep(environPause)
	}
	for _, tok := range tokens {
		if bytes.Contains(env, []byte(tok)) {
			return true
		}
	}
	return false
}

// signalProc sends sig to p unless p's pid now names another process. It
// pins the process with a pidfd and then re-reads its start time, so a pid
// reused between the scan and the signal is never hit. Where pidfds are
// unavailable it falls back to kill(2).
func signalProc(p proc, sig unix.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return
		}
		unix.Kill(p.pid, sig)
		return
	}
	defer unix.Close(fd)
	var buf [statBufBytes]byte
	if now, ok := readStat(p.pid, buf[:]); !ok || now.start != p.start {
		return
	}
	unix.PidfdSendSignal(fd, sig, nil, 0)
}

// signalGroup sends sig to process group pgid. Ids 0 and 1 are refused:
// kill(0) would hit the host's own group and kill(-1) every process the
// host may signal.
func signalGroup(pgid int, sig unix.Signal) {
	if pgid <= 1 {
		return
	}
	unix.Kill(-pgid, sig)
}

// inheritedMax returns the highest descriptor above 2 that the host holds
// without close-on-exec, or 2 when there is none. Go opens every
// descriptor close-on-exec, so these are descriptors the host inherited
// from its own parent; os.StartProcess would pass them on to every child.
func inheritedMax() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 2
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	max := 2
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= max {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			max = fd
		}
	}
	return max
}

// childFiles returns the descriptor table for a child: files as fds 0–2
// and nil (closed in the child) for every higher fd up to the host's
// highest inherited one, so the child gets exactly fds 0–2.
func childFiles(stdin, stdout, stderr *os.File) []*os.File {
	files := make([]*os.File, inheritedMax()+1)
	files[0], files[1], files[2] = stdin, stdout, stderr
	return files
}
