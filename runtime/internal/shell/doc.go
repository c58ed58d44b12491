// Package shell runs the bash tool's commands and makes sure that nothing
// they start outlives them (CONTRACT §10, §14; DESIGN §2 "Process groups
// with a ladder"). It is Linux-only.
//
// It owns the child processes of a command: how they are started (own
// process group, stdin /dev/null, stdout and stderr to pipes, no other
// descriptor: never the host's fd 1, nor a descriptor the host inherited
// without close-on-exec), how their output is read, streamed and bounded,
// how they are stopped, and the host-wide Registry of live process groups
// that the host's signal handling terminates on exit. It does not decide whether a
// command may run (the policy does) nor decode tool arguments (the bash
// tool does).
//
// Usage:
//
//	var reg shell.Registry // one per host
//	res, err := shell.Run(ctx, shell.Spec{
//		Shell: "/usr/bin/bash", Dir: root, Command: cmd,
//		Timeout: timeout, OnOutput: progress, Registry: &reg,
//	})
//	// err: not started; res.ExitCode, res.Signal, res.TimedOut: how it ended
//	...
//	reg.TerminateAll(2 * time.Second) // on HUP, INT, QUIT or TERM
//
// # The kill ladder
//
// When the context ends or the timeout expires, Run sends SIGTERM (then
// SIGCONT, so a stopped process sees it) to the command's process group
// and to every descendant that left it, waits up to Spec.Grace for all of
// them to be gone, then sends SIGKILL to the survivors, sweeping until
// none is left. A command that handles SIGTERM and exits within the grace
// gets nothing more. A process found once stays a target until the kernel
// has ended it, even after its parent died and nothing links it to the
// command any more. The sweeps stop after 10 s only for a process stuck in
// the kernel. The same ladder ends whatever a command leaves behind
// when its shell exits (background jobs, daemons): Run waits a short
// drain (200 ms) for the output pipes to close, then runs the ladder over
// what remains. So no process of a command that the ladder can find (see
// below) runs after Run returns, and Run cannot hang on a grandchild that
// keeps a pipe open: if the pipes stay open even after the ladder, Run
// stops reading them. A process counts as gone once it is a zombie;
// reaping orphans is init's job (or the nearest subreaper's).
// Registry.TerminateAll runs the same ladder over every registered
// command at once.
//
// # Finding descendants that left the group
//
// A process can leave the group with setsid(2) or setpgid(2), and a
// double fork then reparents it away from the shell, so neither the group
// nor the parent chain finds it. Run therefore puts a random token in the
// command's environment (variable OCTET_SHELL_ID), which every descendant
// inherits through fork and exec, whatever its group, session or parent.
// The ladder reads /proc and takes, for each command: the members of its
// group, the processes whose initial environment (/proc/<pid>/environ)
// carries its token (only processes started after the command are read),
// and every descendant of either by parent chain (which also covers a
// child that was exec'd with a scrubbed environment, while its parent
// lives). Each signal goes through a pidfd after re-checking the process's
// start time, so a reused pid is never hit.
//
// The alternative, PR_SET_CHILD_SUBREAPER on the host, was rejected: it is
// a property of the whole process, and the runtime is also embedded in
// applications as a Go library, where every orphan of any of their
// children would become theirs to reap; reaping them needs wait(2) on any
// child, which would steal exit statuses from os/exec callers elsewhere in
// the process; and a zombie's environment cannot be read, so orphans that
// died could not be told apart from other children. The token costs one
// environment variable and a /proc scan when a command ends.
//
// What the token does not find: a process that left the group, scrubbed
// its environment (env -i, some daemons) and was orphaned, or one whose
// environment the host may not read (a set-user-ID program). Registry's
// Register tracks its groups by group and parent chain only.
//
// # Isolation
//
// Run first tries namespace mode. The guard is started in new user, PID
// and mount namespaces (the host's ids mapped onto themselves), so it is
// the init (pid 1) of the command's PID namespace. It is the host's own
// executable run again under the name octet-shell-nsinit, which the
// package's init function recognizes before anything else of the program
// runs: it makes the mount tree private, mounts a /proc of the new PID
// namespace over /proc, drops its capabilities for the shell and starts
// the command's shell as its child, in a process group of its own. The
// shell's $$ is its pid in the namespace (a small number), $PPID is the
// guard's 1, and the command's /proc lists only its own namespace, so a
// command can neither see nor signal the host, the application that
// launched it, or any other command: kill -9 $PPID, kill -STOP of every
// pid it sees and kill -9 -1 reach its own processes only (the init
// receives no signal from inside its namespace that it does not handle,
// and the guard handles every signal by dropping it). The guard reports
// on a pipe that the shell started (with the shell's pid as the host
// sees it, which the ladder uses), then how the shell ended; it reaps
// every other process of the namespace and leaves the shell a zombie, so
// its pid and group id stay reserved until the command is over. The guard
// reads a pipe only the host writes; the host closes it once the command
// is over (after the ladder had its go at the leftovers, so they get
// SIGTERM first), and the kernel closes it when the host dies. When the
// guard exits, the kernel SIGKILLs every process of the namespace: that
// is how namespace mode ends what the token cannot find (a process that
// scrubbed its environment and was orphaned). The token is given to the
// shell only, so the ladder never finds the guard; Registry.TerminateAll
// SIGKILLs it after its ladder, which ends the namespace.
//
// A guard's start is a Go program's start, most of what a command's start
// costs, so the host keeps one spare guard ready (spare.go): started when
// a command ends, with its namespaces made and its /proc mounted, it
// waits for the next command's folder, shell, command and environment on
// its pipe. A spare whose mount tree is outdated (the host's changed since
// it started: the host polls its open /proc/self/mountinfo) is discarded;
// one left unused for 20 seconds is ended, and ReleaseSpare ends it at
// once (the host's TerminateShells does). When a command is over and the
// ladder found nothing left of it, Run returns without waiting for the
// namespace's teardown; its guard is reaped in the background.
//
// In a user namespace of its own a command has no capability over the
// host: it can neither read the host's environment nor open its
// descriptors through /proc (which it cannot name anyway). A root host's
// commands are root inside their namespace only, and could unmount their
// /proc to list the host's processes, but not read or signal them. A
// non-root host cannot write the id maps of its non-dumpable child, so its
// guard keeps CAP_SYS_ADMIN of its own namespace through its exec
// (ambient), writes the one mapping an unprivileged process may write
// (its ids onto themselves), mounts, and clears the ambient set before it
// starts the shell, which then has no capability at all.
//
// Where the kernel refuses the namespaces (EPERM, EINVAL, ENOSPC, EUSERS,
// EACCES, ENOSYS from clone, the /proc mount refused, or the host's
// executable gone; and from the start where the runtime was built into a
// C library or a plugin, whose executable is not this program), Run remembers it
// and uses the fallback from then on: the process group, the token and the
// group guard described below, with the shell in the host's PID namespace
// (so a command can signal the host, as any program of the host's user
// can). The environment variable OCTET_SHELL_NAMESPACES=off (or 0, false)
// chooses the fallback for the whole process. Isolation reports the mode
// in force and FallbackReason why; the host logs the fallback once.
//
// # When the host itself dies
//
// A host killed by SIGKILL runs no cleanup. Two backstops remain. The
// host's child (the shell; in namespace mode the guard) has Pdeathsig
// SIGKILL; Pdeathsig fires when the forking OS thread
// exits, so the child is started from a goroutine locked to its thread
// that stays blocked in waitid(2) until the child exits. And each command
// has a guard whose pipe's end ends the command. In namespace mode it is
// the namespace's init (above), started before the shell. In the
// fallback it is a second, idle `<shell> -c` process in the command's
// group; when the host dies it SIGKILLs the whole group and every process
// carrying the command's token. That guard starts right after the shell
// (the shell must lead its group, so that commands can signal "-$$"): a
// host killed in that instant leaves what the shell forked meanwhile
// unguarded, and descendants that left the group and scrubbed their
// environment are reached by neither.
//
// # Output
//
// Both pipes are read concurrently until they close. Spec.OnOutput gets
// chunks of at most 4 KiB, valid UTF-8, in order per stream, from one
// goroutine at a time. Result.Output interleaves the streams in arrival
// order and is bounded by Spec.MaxOutputBytes in memory as well as in the
// result: a cut output keeps the first 40% and the last 60% (the end of a
// build log matters most) around "[output truncated: N of M bytes shown]",
// where M counts the output after invalid UTF-8 was replaced.
//
// # Concurrency
//
// Run may be called from many goroutines at once, with the same Registry
// or different ones. All goroutines Run starts have returned when it
// returns; it does not return while its shell is stuck in the kernel
// (uninterruptible sleep), which not even SIGKILL ends. Registry methods
// are safe for concurrent use; TerminateAll closes the registry for good,
// so a host calls it only when it is about to exit.
package shell
