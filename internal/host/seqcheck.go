//go:build !invariants

package host

import (
	"octet.dev/host/fsm/session"
	"octet.dev/host/wire"
)

// seqCheck is the invariants build's cross-check of seq
// (seqcheck_invariants.go); here it is empty and does nothing.
type seqCheck struct{}

func (seqCheck) written([]session.Effect, wire.Pending) {}
