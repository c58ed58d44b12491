// Package procgroup starts a host as the leader of its own process group
// and reaps it so that what it left in the group can still be killed: the
// process hygiene that wire/client (an application's client) and the
// conformance kit share.
//
// On Linux the started process also gets a parent-death signal (SIGKILL):
// the kernel ends it when the thread that started it dies, so a dying
// application does not orphan it. Pdeathsig is tied to the starting OS
// thread, not the process: the process must not be started from a
// goroutine that locked its OS thread and then exits. WaitAndReap waits
// with waitid(WNOWAIT), so that beforeReap runs while the exited leader is
// still a zombie and the group's ID cannot have been reused.
//
// Elsewhere (other Unix systems) there is no parent-death signal, and
// WaitAndReap reaps first and skips beforeReap: without WNOWAIT the group
// cannot be signalled safely once its leader is gone, so its stragglers are
// only killed while the leader lives.
package procgroup
