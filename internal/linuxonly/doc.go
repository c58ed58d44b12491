// Package linuxonly stops a build for a system the host does not support
// with one readable compiler error instead of dozens of undefined Linux
// system calls.
//
// The host confines tools with openat2(2) and descriptor walks, reaps
// shell commands with waitid(2) and pidfds, and locks sessions and
// credentials with flock(2): it is built for Linux only (see the README,
// "Requirements"). Every package that uses those calls imports this one
// for its side effect:
//
//	import _ "octet.dev/host/internal/linuxonly"
//
// On Linux the package is empty. Elsewhere it holds a declaration that
// does not compile, and the compiler's message names the requirement, so
// `GOOS=darwin go build ./...` reports it once and compiles nothing that
// depends on it. wire/client imports it only outside Unix: the client
// itself runs on any Unix system (it may launch a host inside a Linux
// container or VM).
package linuxonly
