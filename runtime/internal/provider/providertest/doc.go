// Package providertest is the harness the wire suites (chat, responses,
// messages) share: what each of them checks the same way against its own
// provider, request builder and decoder — the stream collector with its
// ordering rules, the loopback-server cases (HTTP error statuses, failures
// mid-stream, a refused connection, a server echoing the key), the event
// sequence of recorded fixtures, the hostile-shape runner and fuzz seeds,
// the tool-array size and the tool-call id checks.
//
// The suites keep their own tables (wire shapes, fixture expectations)
// and this package runs them; it builds on edge/edgetest, which holds the
// lower-level pieces (Drain, NewServer, CheckHostile, ...).
//
// Only tests import this package (deps_test.go keeps it so).
package providertest
