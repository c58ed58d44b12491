//go:build !invariants

package machine

// Invariants reports whether the build checks the machines' internal
// invariants (go test -tags invariants); it is false in production builds,
// where the checks compile away.
const Invariants = false

func checkFast[P ~string, T ~string, I any, E any](*Machine[P, T, I, E], T) {}
