package shell

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A namespace-mode guard is the host's executable started again, and a Go
// program's start (the runtime, the packages' init) is most of what a
// command's start costs. So the guard is started before its command is
// known: once a command has started in namespace mode, the host starts
// one spare guard, which makes its namespaces, maps its ids, mounts its
// /proc and then waits on its pipe. The next command takes it and writes
// its folder, shell, command and environment on that pipe (guardSpec);
// only the shell's own start is left. The end of a command starts the
// next spare, so that its start does not compete with the command's own
// and is over by the time the run's next command comes (a model step
// later); a command that comes while it is still starting waits for it,
// which is never slower than starting another.
//
// What a spare cannot know in advance is in the spec; what it fixed at
// its start is the same for every command: the user namespace's id maps,
// the executable, resource limits and umask (the host changes none of
// them), and the mount tree, which is a copy of the host's as it was when
// the spare started. The host keeps /proc/self/mountinfo open for each
// spare and polls it when the spare is taken: a mount or unmount since
// then (the kernel flags the open file) discards the spare, so a command
// never sees an outdated mount tree. A spare nobody takes within
// spareIdle is ended; ReleaseSpare ends it at once.

// spareIdle is how long a spare guard waits for a command before the host
// ends it (a variable for the tests).
var spareIdle = 20 * time.Second

// guardSpecMax bounds a spec (the guard refuses a larger one): far above
// what execve(2) accepts as a command's arguments and environment.
const guardSpecMax = 64 << 20

// guardProc is a started namespace-mode guard and the host's ends of its
// pipes: guardW (the guard's fd 3: its spec, then the end of the command),
// the command's output (outR, errR) and the guard's reports (reportR).
type guardProc struct {
	p       *os.Process
	exited  <-chan struct{}
	guardW  *os.File
	outR    *os.File
	errR    *os.File
	reportR *os.File
	mounts  int // /proc/self/mountinfo, open since before the guard's clone; -1 if not
	idle    *time.Timer
}

// spares holds at most one spare guard.
var spares struct {
	mu       sync.Mutex
	ready    *guardProc
	starting bool
	started  chan struct{} // closed when the spare being started is ready (or failed)
}

// startGuard starts a namespace-mode guard that waits for its spec.
func startGuard() (*guardProc, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	ps, err := pipes(4)
	if err != nil {
		return nil, err
	}
	outR, outW, errR, errW := ps[0], ps[1], ps[2], ps[3]
	guardR, guardW, reportR, reportW := ps[4], ps[5], ps[6], ps[7]
	mounts, merr := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if merr != nil {
		mounts = -1
	}
	attr := &os.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: childFiles(devnull, outW, errW),
		Sys:   nsAttr(),
	}
	if len(attr.Files) < 5 {
		attr.Files = append(attr.Files, make([]*os.File, 5-len(attr.Files))...)
	}
	attr.Files[nsGuardFd], attr.Files[nsReportFd] = guardR, reportW
	p, exited, err := startLocked(selfExe(), []string{nsInitName, nsSelfMap()}, attr)
	// The guard holds its own copies of the pipes' other ends.
	outW.Close()
	errW.Close()
	guardR.Close()
	reportW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		guardW.Close()
		reportR.Close()
		if mounts >= 0 {
			unix.Close(mounts)
		}
		return nil, err
	}
	return &guardProc{p: p, exited: exited, guardW: guardW, outR: outR, errR: errR, reportR: reportR, mounts: mounts}, nil
}

// pipes opens n pipes and returns their ends, read end first; on failure
// it closes the ones it opened.
func pipes(n int) ([]*os.File, error) {
	files := make([]*os.File, 0, 2*n)
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, err
		}
		files = append(files, r, w)
	}
	return files, nil
}

// mountsChanged reports whether the host's mount tree changed since g's
// clone (or cannot tell: then it did).
func (g *guardProc) mountsChanged() bool {
	if g.mounts < 0 {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(g.mounts), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n != 0
	}
}

// end ends a guard that has no command, or whose command is over, and
// reaps it: the end of its pipe makes it exit (the kernel takes whatever
// is left of its namespace), a guard still there after killWait is
// SIGKILLed. It closes the host's ends of the pipes.
func (g *guardProc) end() {
	g.guardW.Close()
	t := time.NewTimer(killWait)
	select {
	case <-g.exited:
	case <-t.C:
		g.p.Kill()
		<-g.exited
	}
	t.Stop()
	g.p.Wait()
	g.release()
}

// release closes the host's ends of the pipes other than guardW, and the
// mount table's descriptor.
func (g *guardProc) release() {
	g.outR.Close()
	g.errR.Close()
	g.reportR.Close()
	if g.mounts >= 0 {
		unix.Close(g.mounts)
		g.mounts = -1
	}
}

// takeGuard returns a guard for a command: the spare when there is one
// and the mount tree has not changed since it started, else a new one.
func takeGuard() (*guardProc, error) {
	spares.mu.Lock()
	if spares.ready == nil && spares.starting {
		// A spare being started is nearer to ready than a new guard.
		started := spares.started
		spares.mu.Unlock()
		<-started
		spares.mu.Lock()
	}
	g := spares.ready
	spares.ready = nil
	if g != nil && !g.idle.Stop() {
		g = nil // its idle timer fired: the timer's function ends it
	}
	spares.mu.Unlock()
	if g != nil {
		if g.mountsChanged() {
			endInBackground(g.end)
			g = nil
		} else {
			unix.Close(g.mounts)
			g.mounts = -1
		}
	}
	if g != nil {
		return g, nil
	}
	g, err := startGuard()
	if err == nil && g.mounts >= 0 {
		unix.Close(g.mounts)
		g.mounts = -1
	}
	return g, err
}

// refillSpare starts a spare guard in the background unless there is one
// or one is being started.
func refillSpare() {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	if spares.ready != nil || spares.starting {
		return
	}
	spares.starting = true
	spares.started = make(chan struct{})
	go func() {
		g, err := startGuard()
		spares.mu.Lock()
		defer spares.mu.Unlock()
		spares.starting = false
		defer close(spares.started)
		if err != nil || Isolation() != IsolationNamespaces {
			if g != nil {
				endInBackground(g.end)
			}
			return // the next command's own start meets and reports the error
		}
		g.idle = time.AfterFunc(spareIdle, func() {
			spares.mu.Lock()
			if spares.ready == g {
				spares.ready = nil
			}
			spares.mu.Unlock()
			g.end()
		})
		spares.ready = g
	}()
}

// ending counts the guards being ended in the background.
var ending sync.WaitGroup

// endInBackground runs end (a guard's end) on a goroutine of its own;
// ReleaseSpare waits for it.
func endInBackground(end func()) {
	ending.Add(1)
	go func() {
		defer ending.Done()
		end()
	}()
}

// ReleaseSpare ends the spare guard, if any, and waits until it is reaped
// (and until a spare being started has started and ended), and until
// every guard being ended in the background is reaped. A host calls it
// before it exits; tests call it before they look for leftovers.
func ReleaseSpare() {
	defer ending.Wait()
	for {
		spares.mu.Lock()
		g, starting := spares.ready, spares.starting
		spares.ready = nil
		if g != nil && !g.idle.Stop() {
			g = nil // the idle timer ends it
		}
		spares.mu.Unlock()
		if g != nil {
			g.end()
		}
		if !starting {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// guardSpec is what a guard needs to know of its command.
type guardSpec struct {
	dir, shell, command string
	env                 []string
}

// encode returns the spec as the guard reads it: a 4-byte little-endian
// length, then the folder, the shell, the command and each environment
// entry, separated by NUL bytes. A field holding a NUL byte cannot be
// passed to execve(2) (nor encoded): EINVAL, as the fallback's start
// would fail.
func (s guardSpec) encode() ([]byte, error) {
	n := len(s.dir) + len(s.shell) + len(s.command) + 2
	for _, e := range s.env {
		n += 1 + len(e)
	}
	if n > guardSpecMax {
		return nil, syscall.E2BIG
	}
	b := make([]byte, 4, 4+n)
	binary.LittleEndian.PutUint32(b, uint32(n))
	for i, f := range append([]string{s.dir, s.shell, s.command}, s.env...) {
		if strings.IndexByte(f, 0) >= 0 {
			return nil, syscall.EINVAL
		}
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, f...)
	}
	return b, nil
}

// readGuardSpec reads a spec from fd (the guard's side); false when the
// pipe ends first, or the spec is malformed.
func readGuardSpec(fd int) (guardSpec, bool) {
	var head [4]byte
	if n, err := readFull(fd, head[:]); err != nil || n < len(head) {
		return guardSpec{}, false
	}
	n := binary.LittleEndian.Uint32(head[:])
	if n > guardSpecMax {
		return guardSpec{}, false
	}
	b := make([]byte, n)
	if m, err := readFull(fd, b); err != nil || m < len(b) {
		return guardSpec{}, false
	}
	f := strings.Split(string(b), "\x00")
	if len(f) < 3 {
		return guardSpec{}, false
	}
	return guardSpec{dir: f[0], shell: f[1], command: f[2], env: f[3:]}, true
}
