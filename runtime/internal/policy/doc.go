// Package policy is the Controlled effect policy of octet-host (CONTRACT
// §10): the effective tool policy, resolved from layered sources (default →
// config → environment → CLI → host request), and the decision for each
// tool call. The protocol can pre-authorize file mutation only; process,
// shell and network effects are the operator's to enable.
//
// Values are immutable once resolved and safe for concurrent use.
package policy
