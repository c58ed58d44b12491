//go:build !invariants

package recovery

// checkStep checks a step against the package's documented rules in builds
// with the invariants tag (recovery_invariants.go); here it does nothing.
func checkStep(Config, State, Input, State, []Effect) {}
