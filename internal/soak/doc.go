// Package soak drives one octet-host process through many runs against the
// fake provider (runtime/fakeprovider) with random faults, and checks every
// frame the host writes against the protocol while it watches the host's
// memory, file descriptors, threads and goroutines. The octet-soak command
// and scripts/soak run it at length; its test runs a short version.
//
// The host serves one request at a time (CONTRACT §2), so concurrency here
// is pipelining: the driver keeps up to Config.Concurrency requests written
// to the host's stdin ahead of the terminal event of the oldest one, and
// the host reads each after the previous one has ended.
package soak
