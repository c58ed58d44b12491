package steer

import (
	"errors"
	"fmt"
	"sync"

	"octet.dev/host/runtime/provider"
)

// Requeuer is the ordinary queue, seen by native steering: Requeue hands
// text, a steering input, to it, or to the run's undelivered messages when
// the run takes no more messages.
type Requeuer interface {
	Requeue(text string)
}

// Gate is RunControl's side of native steering (see the threading note
// at the top of native.go). Its fields are guarded by mu.
type Gate struct {
	mu      sync.Mutex
	n       *Native // the run's, once its loop started
	q       Requeuer
	calling bool     // a steerable model call streams
	window  bool     // the run goroutine waits in that call's Next
	mailbox []string // steers that came while the window was shut
	closed  bool
}

// NewGate returns the gate of a run qualified for native steering; q is
// its ordinary queue.
func NewGate(q Requeuer) *Gate { return &Gate{q: q} }

// Attach gives the gate the run's native steering (the loop's start).
func (g *Gate) Attach(n *Native) {
	g.mu.Lock()
	g.n = n
	g.mu.Unlock()
}

// Take takes a steering input for native delivery. It reports false when
// the input is for the ordinary queue: no steerable call streams, or its
// response has ended.
func (g *Gate) Take(text string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed || !g.calling || g.n == nil:
		return false, nil
	case g.window:
		return g.dispatch(text)
	}
	g.mailbox = append(g.mailbox, text)
	return true, nil
}

// dispatch steers the live response with text, under mu.
func (g *Gate) dispatch(text string) (bool, error) {
	n := g.n
	if n.cur == nil && n.send == nil || n.Live == "" || !n.Allow || n.Blocked {
		return false, nil
	}
	n.inGate = true
	_, err := n.Steer(n.Live, text)
	n.inGate = false
	switch {
	case err == nil, errors.Is(err, ErrUnknown):
		// Taken: delivered, failed (and queued) or unknown (the run ends
		// blocked), as the server and the machine decide.
		return true, nil
	case errors.Is(err, provider.ErrNotSteerable):
		return false, nil
	}
	return true, fmt.Errorf("runtime: the native steering intent could not be recorded: %w", err)
}

// Begin starts a steerable call whose stream is s (the run goroutine).
func (g *Gate) Begin(s provider.Steerer) {
	g.mu.Lock()
	g.n.cur, g.calling = s, true
	g.mu.Unlock()
}

// Open dispatches the mailbox and opens the window, just before Next (the
// run goroutine).
func (g *Gate) Open() {
	g.mu.Lock()
	for len(g.mailbox) > 0 {
		text := g.mailbox[0]
		g.mailbox = g.mailbox[1:]
		if ok, err := g.dispatch(text); !ok || err != nil {
			g.q.Requeue(text)
		}
	}
	g.window = true
	g.mu.Unlock()
}

// Shut closes the window, right after Next (the run goroutine): it waits
// for a steer being dispatched.
func (g *Gate) Shut() {
	g.mu.Lock()
	g.window = false
	g.mu.Unlock()
	g.n.announce()
}

// End ends the steerable call: what the mailbox holds goes to the
// ordinary queue, in order.
func (g *Gate) End() {
	g.mu.Lock()
	g.calling, g.window, g.n.cur = false, false, nil
	for _, text := range g.mailbox {
		g.q.Requeue(text)
	}
	g.mailbox = nil
	g.mu.Unlock()
	g.n.announce()
}

// Close ends native steering for the run: later inputs go to the queue.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if g.n != nil {
		g.End()
	}
}
