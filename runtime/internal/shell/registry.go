package shell

import (
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTerminated is returned by Run when its Registry has been shut down by
// TerminateAll: the host is exiting and starts nothing new.
var ErrTerminated = errors.New("shell: registry terminated")

// Registry is the host-wide set of live process groups started by tools
// (CONTRACT §14). On shutdown the host calls TerminateAll, which runs the
// kill ladder over every registered group and over the descendants that
// left it. The zero value is ready to use; a Registry must not be copied
// after first use. It is safe for concurrent use.
type Registry struct {
	// gate is held for reading while Run starts and registers a command,
	// and for writing while TerminateAll closes the registry, so that no
	// command can be started between TerminateAll's snapshot and the end
	// of the process.
	gate sync.RWMutex

	mu      sync.Mutex // guards entries and closed
	entries map[*entry]struct{}
	closed  bool
}

// entry is one registered command: a process group and what identifies
// the descendants that left it.
type entry struct {
	pgid int
	// roots are the processes started by the host for this entry (the
	// shell, its guard). Their descendants belong to the entry while the
	// parent chain still leads to them.
	roots []proc
	// guard is the pid of a namespace-mode guard (0 in the fallback),
	// which the ladder leaves alone: as its namespace's init it ignores
	// SIGTERM, and its end ends the namespace. A SIGKILL to the group
	// still reaches it.
	guard int
	// token is a random string placed in the command's environment; every
	// process whose environment carries it belongs to the entry, wherever
	// it has moved in the process tree. Empty for Register'ed groups.
	token string
	// start is the earliest start time of the roots: processes started
	// before it cannot be descendants, so their environment is not read.
	start uint64
	// refs counts TerminateAll calls working on the entry; unregistering
	// waits for them, so a group id is never signalled after the caller
	// reaped its leader and the id could have been reused.
	refs sync.WaitGroup
}

// Register records process group pgid as live, for a caller that starts a
// process group itself (Run registers its own). Its descendants that leave
// the group are tracked while their parent chain leads to the group leader
// (pid pgid); Run's commands are tracked more thoroughly (see the package
// documentation). The caller must call unregister once the group is gone,
// and before it reaps the group leader. A group registered after
// TerminateAll has begun is killed at once. Register panics when pgid is
// below 2 or the host's own group: signalling those would hit the host
// itself or every process it may signal.
func (r *Registry) Register(pgid int) (unregister func()) {
	if pgid <= 1 || pgid == unix.Getpgrp() {
		panic("shell: Registry.Register: invalid process group id")
	}
	e := &entry{pgid: pgid}
	var buf [statBufBytes]byte
	if p, ok := readStat(pgid, buf[:]); ok && p.pgid == pgid {
		e.roots, e.start = []proc{p}, p.start
	}
	return r.add(e)
}

// add registers e and returns its unregister function. On a closed
// registry it kills e's processes and registers nothing.
func (r *Registry) add(e *entry) func() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		terminate([]*entry{e}, 0)
		return func() {}
	}
	if r.entries == nil {
		r.entries = map[*entry]struct{}{}
	}
	r.entries[e] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.entries, e)
			r.mu.Unlock()
			e.refs.Wait()
		})
	}
}

// beginStart holds the gate for a Run that is about to start a command.
// It reports false (and holds nothing) when the registry is closed.
func (r *Registry) beginStart() bool {
	r.gate.RLock()
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		r.gate.RUnlock()
		return false
	}
	return true
}

func (r *Registry) endStart() { r.gate.RUnlock() }

// TerminateAll runs the kill ladder over every registered group: SIGTERM
// (and SIGCONT, so stopped processes see it) to each group and to every
// descendant that left it, then waits up to grace for all of them to be
// gone, then SIGKILLs the survivors until none is left. It returns when
// they are gone (zombies awaiting their parent count as gone).
//
// TerminateAll closes the registry: later Runs fail with ErrTerminated and
// later Register calls kill their group at once. It may be called more
// than once and concurrently with Run; each Run still reaps its own shell
// and returns its Result.
func (r *Registry) TerminateAll(grace time.Duration) {
	r.gate.Lock()
	r.mu.Lock()
	r.closed = true
	snap := make([]*entry, 0, len(r.entries))
	for e := range r.entries {
		e.refs.Add(1)
		snap = append(snap, e)
	}
	r.mu.Unlock()
	r.gate.Unlock()
	defer func() {
		for _, e := range snap {
			e.refs.Done()
		}
	}()
	terminate(snap, grace)
}

// members returns the live processes that belong to entries, except the
// host itself and the pids in skip: members of an entry's group, its roots,
// processes whose environment carries an entry's token, and every
// descendant of any of those. It returns an error only when /proc cannot
// be read.
func members(entries []*entry, skip ...int) ([]proc, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	minStart := entries[0].start
	var tokens []string
	for _, e := range entries {
		minStart = min(minStart, e.start)
		if e.token != "" {
			tokens = append(tokens, e.token)
		}
	}
	matched := make([]bool, len(procs))
	children := make(map[int][]int, len(procs))
	var queue []int
	for i, p := range procs {
		if p.pid == self {
			continue
		}
		children[p.ppid] = append(children[p.ppid], i)
		// The host's own children are the commands' roots (which belong)
		// and guards, never a process that left a command: their
		// environments are not read (a spare guard's is empty, which
		// environHas would wait on).
		if belongs(p, entries) || (!p.dead && !p.kernel && p.ppid != self && p.start >= minStart && len(tokens) > 0 && environHas(p.pid, tokens)) {
			matched[i] = true
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, c := range children[procs[i].pid] {
			if !matched[c] {
				matched[c] = true
				queue = append(queue, c)
			}
		}
	}
	var out []proc
	for i, p := range procs {
		if matched[i] && !p.dead && !slices.Contains(skip, p.pid) && !isGuardOf(p, entries) {
			out = append(out, p)
		}
	}
	return out, nil
}

// isGuardOf reports whether p is the namespace guard of one of entries.
func isGuardOf(p proc, entries []*entry) bool {
	for _, e := range entries {
		if e.guard == p.pid {
			for _, r := range e.roots {
				if r.pid == p.pid && r.start == p.start {
					return true
				}
			}
		}
	}
	return false
}

// belongs reports whether p is in the group of one of entries or is one of
// their roots.
func belongs(p proc, entries []*entry) bool {
	for _, e := range entries {
		if p.pgid == e.pgid {
			return true
		}
		for _, r := range e.roots {
			if p.pid == r.pid && p.start == r.start {
				return true
			}
		}
	}
	return false
}

// groupsAlive reports whether any of the entries' groups still has a
// process (a zombie counts). It is the fallback when /proc is unreadable.
func groupsAlive(entries []*entry) bool {
	for _, e := range entries {
		if e.pgid > 1 && unix.Kill(-e.pgid, 0) == nil {
			return true
		}
	}
	return false
}

// Timing of the ladder's polls. They bound how often /proc is read while
// waiting; they are not promises about how fast processes die.
const (
	pollMin = time.Millisecond
	pollMax = 20 * time.Millisecond
	// killWait bounds the SIGKILL sweeps. A killed process is gone as soon
	// as the kernel schedules it, so only a process stuck in the kernel
	// (uninterruptible sleep) or one that forks faster than the sweeps
	// kill can reach it; terminate then returns without waiting longer.
	killWait = 10 * time.Second
)

// terminate is the kill ladder over entries (see TerminateAll). It
// signals each group as a whole, which reaches members that /proc listed
// too late, and each member /proc shows, which reaches the ones that left.
// A process found once stays a target until it is dead, even when later
// scans could no longer link it to an entry (its parent died and it had
// left the group), and until the kernel has actually ended it: a SIGKILLed
// process on a busy machine may wait to be scheduled before it dies.
func terminate(entries []*entry, grace time.Duration) {
	if len(entries) == 0 {
		return
	}
	type key struct {
		pid   int
		start uint64
	}
	known := map[key]proc{}
	var buf [statBufBytes]byte
	// The namespace guards are left out of the ladder (they ignore
	// SIGTERM); once the ladder is over they are SIGKILLed, which ends
	// their namespaces, and awaited like any survivor.
	defer func() {
		var guards []proc
		for _, e := range entries {
			for _, r := range e.roots {
				if e.guard != 0 && r.pid == e.guard {
					signalProc(r, unix.SIGKILL)
					guards = append(guards, r)
				}
			}
		}
		deadline := time.Now().Add(killWait)
		for wait := pollMin; len(guards) > 0 && time.Now().Before(deadline); wait = min(2*wait, pollMax) {
			guards = slices.DeleteFunc(guards, func(g proc) bool {
				now, live := readStat(g.pid, buf[:])
				return !live || now.start != g.start || now.dead
			})
			time.Sleep(wait)
		}
	}()
	// survivors scans once and returns the live processes of entries and
	// the ones found before that still live. ok is false when /proc could
	// not be read; the groups are then all it knows about.
	survivors := func() (ps []proc, ok bool) {
		found, err := members(entries)
		for _, p := range found {
			known[key{p.pid, p.start}] = p
		}
		for k, p := range known {
			if now, live := readStat(p.pid, buf[:]); live && now.start == p.start && !now.dead {
				ps = append(ps, p)
			} else {
				delete(known, k)
			}
		}
		return ps, err == nil
	}
	done := func(ps []proc, ok bool) bool {
		return len(ps) == 0 && (ok || !groupsAlive(entries))
	}
	// send signals the groups, and the processes outside them. all also
	// signals the group members one by one (a member may have left its
	// group since the scan): right for SIGKILL, but a second SIGTERM would
	// run a command's TERM handler twice.
	send := func(ps []proc, sig unix.Signal, all bool) {
		for _, e := range entries {
			signalGroup(e.pgid, sig)
		}
		for _, p := range ps {
			if all || !slices.ContainsFunc(entries, func(e *entry) bool { return e.pgid == p.pgid }) {
				signalProc(p, sig)
			}
		}
	}

	ps, ok := survivors()
	if done(ps, ok) {
		return
	}
	send(ps, unix.SIGTERM, false)
	send(ps, unix.SIGCONT, false)
	deadline := time.Now().Add(grace)
	for wait := pollMin; time.Now().Before(deadline); wait = min(2*wait, pollMax) {
		time.Sleep(min(wait, time.Until(deadline)))
		if ps, ok = survivors(); done(ps, ok) {
			return
		}
	}
	deadline = time.Now().Add(killWait)
	for wait := pollMin; ; wait = min(2*wait, pollMax) {
		if ps, ok = survivors(); done(ps, ok) || time.Now().After(deadline) {
			return
		}
		send(ps, unix.SIGKILL, true)
		time.Sleep(wait)
	}
}
