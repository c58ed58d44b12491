//go:build invariants

package host

import (
	"fmt"

	"octet.dev/host/fsm/session"
	"octet.dev/host/wire"
)

// seqCheck cross-checks, in builds with the invariants tag (go test -tags
// invariants), that a request's events go out with the seq and kind the
// session machine gave them, gapless from 1.
type seqCheck struct{ last int }

func (c *seqCheck) written(effects []session.Effect, p wire.Pending) {
	want := session.EffWrite
	if p.Terminal {
		want = session.EffWriteTerminal
	}
	if len(effects) == 0 || effects[0].Kind != want || effects[0].Seq != p.Seq || p.Seq != c.last+1 {
		panic(fmt.Sprintf("host: fsm/session effects %+v disagree with the event encoded (seq %d, terminal %v) after seq %d", effects, p.Seq, p.Terminal, c.last))
	}
	c.last = p.Seq
}
