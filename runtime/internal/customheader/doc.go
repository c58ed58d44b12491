// Package customheader holds the rules for the custom headers a run may send to
// its provider (CONTRACT §8): the syntax of a field name and of a value,
// and the names the transport keeps for itself. It is a leaf, so the
// catalog, the run's validator (Check) and the provider edge check headers
// the same way.
package customheader
