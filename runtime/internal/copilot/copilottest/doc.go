// Package copilottest has the loopback stand-ins of GitHub for tests: one
// TLS server answering for github.com, api.github.com, every allowlisted
// Copilot origin and an off-list name, reached through a client whose
// dialer maps those names to it and which trusts only an in-test CA, so
// that the production URLs and allowlist run unchanged; a fake clock; and
// an embedder's fixed endpoint on loopback TLS for the tests of the
// generic seam (Endpoint), whose client reaches nothing else.
package copilottest
