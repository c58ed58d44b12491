// Package runtime is the Go embedding API of octet-host: the one agent
// runtime that both the octet-host binary and Go applications use
// (CONTRACT §1, §15). It knows nothing of NDJSON; internal/host maps its
// events to protocol frames.
//
// An Agent is built once from Options and is safe for concurrent use; each
// run is driven by its own goroutine and observed through a RunControl.
//
// This package is the façade: it owns the public types and hands the work
// to the engine (runtime/internal/engine), converting at its edge.
package runtime
