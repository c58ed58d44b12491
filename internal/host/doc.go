// Package host is the NDJSON adapter of octet-host: it reads request frames,
// drives the protocol session machine (fsm/session), maps the runtime's
// results to protocol-1 events and owns the one stdout writer. It is the
// only package where wire meets runtime.
//
// Serve runs on one goroutine, which owns the session machine; requests are
// served one at a time, and the next line is read only after the current
// request's terminal event (CONTRACT §2).
package host
