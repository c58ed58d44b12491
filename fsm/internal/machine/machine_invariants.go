//go:build invariants

package machine

import (
	"context"
	"fmt"
)

// Invariants reports whether the build checks the machines' internal
// invariants (go test -tags invariants); it is false in production builds,
// where the checks compile away.
const Invariants = true

// checkFast panics unless stateless also permits t in the current phase:
// the fast step and the configured transition must agree.
func checkFast[P ~string, T ~string, I any, E any](m *Machine[P, T, I, E], t T) {
	if ok, err := m.sm.CanFireCtx(context.Background(), m.spec.Trigger(t)); err != nil || !ok {
		panic(fmt.Sprintf("fsm/%s: fast step %q in %q is not permitted by stateless (%v)", m.spec.name, t, *m.phase, err))
	}
}
