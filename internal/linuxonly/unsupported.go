//go:build !linux

package linuxonly

// The string below is the compiler's error message on systems other than
// Linux: "cannot use "octet.dev/host requires Linux…" (untyped string
// constant) as bool value". It is deliberate; see the package comment.
var _ bool = "octet.dev/host requires Linux (see README, Requirements); wire/client alone builds on any Unix"
