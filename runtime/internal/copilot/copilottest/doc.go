// Package copilottest has the loopback stand-ins of GitHub for tests: one
// TLS server answering for github.com, api.github.com, every allowlisted
// Copilot origin and an off-list name, reached through a client whose
// dialer maps those names to it and which trusts only an in-test CA, so
// that the production URLs and allowlist run unchanged; and a fake clock.
package copilottest
