package shell

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults for the zero values of Spec fields.
const (
	// DefaultGrace is the time between SIGTERM and SIGKILL.
	DefaultGrace = 2 * time.Second
	// DefaultMaxOutputBytes bounds Result.Output, as the workspace tools'
	// output is bounded by default.
	DefaultMaxOutputBytes = 50_000
)

// Bounds on reading the pipes once the shell has exited. They are not
// timeouts of the command: they bound how long Run waits for processes the
// command left behind.
const (
	// exitDrain is how long the pipes may stay open after the shell exits
	// before the processes holding them get the kill ladder, so output a
	// background job writes just after the shell's exit is not lost.
	exitDrain = 200 * time.Millisecond
	// stopDrain is how long Run waits for the pipes' end after the ladder
	// before it stops reading: only a holder the ladder cannot find (one
	// that left the group and scrubbed its environment) keeps them open.
	stopDrain = 200 * time.Millisecond
)

// envKey is the environment variable that carries a command's token (see
// the package documentation). A token inherited from an enclosing host is
// kept, so nested hosts each find their own descendants.
const envKey = "OCTET_SHELL_ID"

// guardScript is run by the guard process: it blocks reading a pipe whose
// only writer is the host, and when the host dies (however it dies) the
// read ends and the guard SIGKILLs its process group, the command's.
//
// Before that, it SIGKILLs every other process whose environment carries the
// command's token ($1): the ones that left the group (setsid, double
// forks), which a SIGKILLed host can no longer reach. Two passes catch a
// process forked during the first. Where grep reads NUL-separated lines
// (-z), one grep scans every environment; elsewhere each is read in turn.
// (This is the fallback's guard; see the package documentation,
// "Isolation".)
const guardScript = `read -r x
tok=$1
if printf 'a\000' | grep -qz a 2>/dev/null; then
  hits() { grep -lsz "^OCTET_SHELL_ID=.*$tok" /proc/[0-9]*/environ 2>/dev/null; }
else
  hits() {
    for p in /proc/[0-9]*; do
      tr '\000' '\n' < "$p/environ" 2>/dev/null | grep -q "^OCTET_SHELL_ID=.*$tok" && echo "$p/environ"
    done
  }
fi
for pass in 1 2; do
  for f in $(hits); do
    pid=${f#/proc/}
    pid=${pid%/environ}
    [ "$pid" = "$$" ] && continue
    kill -s KILL "$pid" 2>/dev/null
  done
done
kill -s KILL 0`

// ErrInvalidSpec is wrapped by the errors Run returns for a Spec it
// refuses before starting anything.
var ErrInvalidSpec = errors.New("shell: invalid spec")

// Spec describes one command for Run.
type Spec struct {
	// Shell is the absolute path of the shell; Run executes
	// `<Shell> -c <Command>`. It must accept POSIX sh syntax, because the
	// guard process runs a short script with it too.
	Shell string
	// Dir is the working directory (the workspace root), absolute.
	Dir string
	// Command is the command text.
	Command string
	// Timeout ends the command with the kill ladder after this long; zero
	// means no timeout.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL; zero means
	// DefaultGrace.
	Grace time.Duration
	// MaxOutputBytes bounds Result.Output; zero means
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// Env is the command's environment; nil means the host's. Run adds
	// the variable OCTET_SHELL_ID to it.
	Env []string
	// OnOutput, when set, receives the output as it arrives, stream being
	// Stdout or Stderr, in chunks of at most ChunkBytes that end at
	// character boundaries (invalid UTF-8 is replaced by U+FFFD). Calls are
	// made from one goroutine at a time, in order within each stream, and
	// all of them happen before Run returns. OnOutput must not block for
	// long: while it runs, the command's writes block once a pipe is full.
	OnOutput func(stream, chunk string)
	// Registry, when set, holds the command's process group while it is
	// alive, so the host's TerminateAll reaches it. The host always sets
	// it; tests and tools may leave it nil.
	Registry *Registry
}

// check validates s, reporting every problem.
func (s Spec) check() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSpec}, a...)...))
	}
	if !filepath.IsAbs(s.Shell) {
		bad("Shell %q is not an absolute path", s.Shell)
	}
	if !filepath.IsAbs(s.Dir) {
		bad("Dir %q is not an absolute path", s.Dir)
	}
	if strings.IndexByte(s.Command, 0) >= 0 {
		bad("Command contains a NUL byte")
	}
	if s.Timeout < 0 {
		bad("Timeout %v is negative", s.Timeout)
	}
	if s.Grace < 0 {
		bad("Grace %v is negative", s.Grace)
	}
	if s.MaxOutputBytes < 0 {
		bad("MaxOutputBytes %d is negative", s.MaxOutputBytes)
	}
	return errors.Join(errs...)
}

// Result is the outcome of a command that was started.
type Result struct {
	// Output is stdout and stderr interleaved in the order they arrived:
	// valid UTF-8, at most MaxOutputBytes long. When the output was longer
	// it keeps the first and the last bytes (about 40% and 60% of the
	// bound) around the line "[output truncated: N of M bytes shown]".
	Output string
	// Truncated reports that Output was cut.
	Truncated bool
	// ExitCode is the shell's exit status, or -1 when a signal killed it.
	ExitCode int
	// Signal names the signal that killed the shell ("SIGKILL"), or is
	// empty.
	Signal string
	// TimedOut reports that Spec.Timeout ended the command.
	TimedOut bool
	// Canceled reports that the context ended the command.
	Canceled bool
	// Duration is the time from the start to Run's return.
	Duration time.Duration
}

// Run executes s.Command with s.Shell and returns when the shell and
// every process it left behind are gone and the output is read.
//
// A command that exits with a non-zero status or dies by a signal is a
// Result, not an error. Errors are for a command that was not started: an
// invalid Spec (ErrInvalidSpec), a context that had already ended, a
// terminated Registry (ErrTerminated) or a failure to start the shell
// (wrapping the *os.PathError or errno). When ctx ends or Timeout expires
// the command gets the kill ladder (see the package documentation), and
// Run returns once it is gone.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("shell: not started: %w", err)
	}
	grace := cmp.Or(s.Grace, DefaultGrace)
	if s.Registry != nil && !s.Registry.beginStart() {
		return Result{}, ErrTerminated
	}
	c, err := start(s)
	if s.Registry != nil {
		if err == nil {
			c.unregister = s.Registry.add(c.entry)
		}
		s.Registry.endStart()
	}
	if err != nil {
		return Result{}, err
	}
	return c.wait(ctx, s.Timeout, grace)
}

// command is a started command.
type command struct {
	began  time.Time
	shell  *os.Process
	exited <-chan struct{} // closed when the shell has exited (it is not reaped yet)
	guard  *os.Process     // the fallback's guard, the host's child
	// In namespace mode shell is nil: the shell is the child of nsGuard
	// (the host's child, exited when nsGuardExited is closed), which
	// reports its status into nsStatus before exited is closed.
	nsGuard       *os.Process
	nsGuardExited <-chan struct{}
	nsStatus      nsStatus
	nsEntry       *entry // the entry without the guard, for Run's own ladder
	// guardW is the host's end of the guard's pipe; it stays open until
	// the guard is reaped.
	guardW     *os.File
	outR, errR *os.File
	coll       *collector
	readers    chan struct{} // closed when both pipes are read to the end
	entry      *entry
	unregister func()
}

// start starts the shell and its guard and begins reading the pipes: in
// namespace mode unless the kernel has refused the namespaces, then in
// the fallback (see the package documentation, "Isolation").
func start(s Spec) (*command, error) {
	// A missing Dir would otherwise be reported as a missing shell: the
	// child's chdir fails between fork and exec.
	fi, err := os.Stat(s.Dir)
	if err == nil && !fi.IsDir() {
		err = &os.PathError{Op: "stat", Path: s.Dir, Err: syscall.ENOTDIR}
	}
	if err != nil {
		return nil, fmt.Errorf("shell: start: Dir: %w", err)
	}
	if err := MakeUndumpable(); err != nil {
		return nil, fmt.Errorf("shell: start: making the host non-dumpable: %w", err)
	}
	if !nsRefused.Load() && !optedOut() && !selfExeIsGo() {
		refuseNamespaces("the executable is not a Go program (the runtime is built into a library)")
	}
	if !nsRefused.Load() && !optedOut() {
		c, err := startMode(s, true)
		if !errors.Is(err, errNamespacesRefused) {
			return c, err
		}
		refuseNamespaces(err.Error())
	}
	return startMode(s, false)
}

// errNamespacesRefused is returned by startMode when the kernel refuses
// to create a namespace-mode shell.
var errNamespacesRefused = errors.New("shell: namespaces refused")

// startMode starts the shell and its guard in namespace mode (ns, see
// startNS) or in the fallback.
func startMode(s Spec, ns bool) (c *command, err error) {
	if ns {
		return startNS(s)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("shell: start: %w", err)
	}
	defer devnull.Close()
	// The children get fds 0–2 and nothing else: the host's descriptors
	// are close-on-exec, and childFiles closes the ones it inherited
	// without. Never the host's fd 1, which carries the protocol.
	files, err := pipes(3)
	if err != nil {
		return nil, fmt.Errorf("shell: start: %w", err)
	}
	outR, outW, errR, errW, guardR, guardW := files[0], files[1], files[2], files[3], files[4], files[5]
	defer func() {
		// The children hold their own copies of the write ends (and of the
		// guard's read end); on failure the host's read ends go too.
		for _, f := range files {
			if err != nil || f == outW || f == errW || f == guardR {
				f.Close()
			}
		}
	}()

	token := rand.Text()
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	path, argv := s.Shell, []string{s.Shell, "-c", s.Command}
	attr := &os.ProcAttr{
		Dir:   s.Dir,
		Env:   withToken(env, token),
		Files: childFiles(devnull, outW, errW),
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	began := time.Now()
	shell, exited, err := startLocked(path, argv, attr)
	if err != nil {
		return nil, fmt.Errorf("shell: start: %w", err)
	}
	var buf [statBufBytes]byte
	e := &entry{pgid: shell.Pid, token: token}
	addRoot := func(pid int) {
		if st, ok := readStat(pid, buf[:]); ok {
			e.roots = append(e.roots, st)
			if e.start == 0 || st.start < e.start {
				e.start = st.start
			}
		}
	}
	addRoot(shell.Pid)
	c = &command{began: began, shell: shell, exited: exited, guardW: guardW, entry: e, unregister: func() {}}
	// The guard joins the shell's group, so the shell stays the group
	// leader ("kill -- -$$" works in commands). It has no Pdeathsig: it
	// must live to see the end of its pipe when the host dies.
	guard, gerr := os.StartProcess(s.Shell, []string{s.Shell, "-c", guardScript, "octet-shell-guard", token}, &os.ProcAttr{
		Dir:   "/",
		Env:   []string{envKey + "=" + token},
		Files: childFiles(guardR, devnull, devnull),
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pgid: shell.Pid},
	})
	if gerr != nil {
		terminate([]*entry{e}, 0)
		<-exited
		shell.Wait()
		err = gerr
		return nil, fmt.Errorf("shell: start guard: %w", err)
	}
	c.guard = guard
	addRoot(guard.Pid)
	c.outR, c.errR = outR, errR
	c.startReading(s)
	return c, nil
}

// startReading begins reading the output pipes.
func (c *command) startReading(s Spec) {
	c.coll = newCollector(cmp.Or(s.MaxOutputBytes, DefaultMaxOutputBytes), s.OnOutput)
	c.readers = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.coll.read(c.outR, Stdout) }()
	go func() { defer wg.Done(); c.coll.read(c.errR, Stderr) }()
	go func() { wg.Wait(); close(c.readers) }()
}

// startLocked starts a process from a goroutine locked to its OS thread
// that stays alive, blocked in waitid(2), until the process exits.
// Pdeathsig fires when the thread that forked the child exits, not the
// process; the Go runtime ends a thread when a goroutine locked to it
// returns, so starting from an unlocked goroutine could kill the child
// whenever some later goroutine on the same thread locked and exited. The
// returned channel is closed when the process has exited; it is left
// unreaped (WNOWAIT), so its pid and process group id stay reserved until
// the caller's Wait.
func startLocked(path string, argv []string, attr *os.ProcAttr) (*os.Process, <-chan struct{}, error) {
	type started struct {
		p   *os.Process
		err error
	}
	ch := make(chan started, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		p, err := os.StartProcess(path, argv, attr)
		ch <- started{p, err}
		if err != nil {
			return
		}
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		close(exited)
	}()
	s := <-ch
	return s.p, exited, s.err
}

// withToken returns env with envKey set to token, appended after any
// token env already carries.
func withToken(env []string, token string) []string {
	out := make([]string, 0, len(env)+1)
	var tokens []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, envKey+"="); ok {
			if v != "" {
				tokens = append(tokens, v)
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, envKey+"="+strings.Join(append(tokens, token), ":"))
}

// wait waits for the command, runs the ladder when ctx ends or the timeout
// expires, cleans up what the shell left behind, and reaps.
func (c *command) wait(ctx context.Context, timeout, grace time.Duration) (Result, error) {
	var res Result
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-c.exited:
	case <-ctx.Done():
		res.Canceled = !isClosed(c.exited)
	case <-timer:
		res.TimedOut = !isClosed(c.exited)
	}
	entries := []*entry{c.entry}
	if c.nsEntry != nil {
		// The guard stays out of Run's ladder: its end is the last step.
		entries = []*entry{c.nsEntry}
	}
	if res.Canceled || res.TimedOut {
		terminate(entries, grace)
		<-c.exited
	}

	// The shell is gone. Whatever it left behind (background jobs, holders
	// of the pipes, processes that left the group) gets the ladder too,
	// after a short drain so that late output is not lost.
	drained := waitClosed(c.readers, exitDrain)
	var skip []int
	if c.guard != nil {
		skip = append(skip, c.guard.Pid)
	}
	left, err := members(entries, skip...)
	if (err == nil && len(left) > 0) || (err != nil && !drained) {
		terminate(entries, grace)
	}
	if c.nsGuard != nil {
		// The end of the guard's pipe ends the namespace: whatever the
		// ladder could not find dies with it, and so do the pipes' holders.
		// When the ladder found nothing left and the pipes are closed, only
		// the guard (and zombies) remain: its end (the namespace's teardown
		// takes the kernel milliseconds) need not hold up the result.
		if err == nil && len(left) == 0 && drained {
			endInBackground(c.endNS)
		} else {
			c.endNS()
		}
		<-c.exited
	}
	if !waitClosed(c.readers, stopDrain) {
		now := time.Now()
		c.outR.SetReadDeadline(now)
		c.errR.SetReadDeadline(now)
		<-c.readers
	}
	if c.guard != nil {
		c.guard.Kill()
		c.guard.Wait()
	}
	c.unregister()
	c.guardW.Close()
	if c.nsGuard != nil {
		c.outR.Close()
		c.errR.Close()
		res.Output, res.Truncated = c.coll.result()
		res.Duration = time.Since(c.began)
		res.ExitCode = c.nsStatus.exitCode
		if c.nsStatus.signal != 0 {
			res.Signal = unix.SignalName(c.nsStatus.signal)
		}
		return res, nil
	}
	st, err := c.shell.Wait()
	c.outR.Close()
	c.errR.Close()

	res.Output, res.Truncated = c.coll.result()
	res.Duration = time.Since(c.began)
	if err != nil {
		res.ExitCode = -1
		return res, fmt.Errorf("shell: wait: %w", err)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode, res.Signal = -1, unix.SignalName(ws.Signal())
	} else {
		res.ExitCode = st.ExitCode()
	}
	return res, nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitClosed waits up to d for ch to be closed and reports whether it was.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	if isClosed(ch) {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
