// Package octethost is the root of the octet-host module: a headless
// coding-agent host that applications launch as a subprocess and drive with
// native-host protocol 1 (UTF-8 NDJSON on stdin/stdout), and the Go runtime
// it shares with Go applications that embed it directly.
//
// The packages, and the direction of their imports (checked by
// deps_test.go):
//
//	cmd/octet-host   flags, logging, stdout guard, signals → internal/host
//	internal/host    NDJSON adapter: the only place wire meets runtime
//	runtime          the Go embedding API (never imports wire)
//	fsm/...          pure state machines (no I/O, no clock, no wire/runtime)
//	protocol         the protocol-1 vocabulary: event types and payloads,
//	                 requests, codes, statuses (a leaf: imports nothing here;
//	                 every package above may import it)
//	wire             strict codec, bounded framing
//	wire/client      Go client for applications (imports wire and protocol)
//	spec             executable invariants shared by tests
package octethost
