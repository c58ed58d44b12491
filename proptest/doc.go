// Package proptest holds rapid model-based tests over the state machines
// and over the whole host: random mixes of inputs, with the protocol's
// invariants checked after every step.
package proptest
