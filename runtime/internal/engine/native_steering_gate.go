package engine

import (
	"errors"
	"fmt"
	"sync"

	"octet.dev/host/fsm/steering"
	"octet.dev/host/runtime/provider"
)

// nativeGate is RunControl's side of native steering (see the threading
// note at the top of native_steering.go). Its fields are guarded by mu.
type nativeGate struct {
	mu      sync.Mutex
	n       *nativeSteering // the run's, once its loop started
	rc      *RunControl
	calling bool     // a steerable model call streams
	window  bool     // the run goroutine waits in that call's Next
	mailbox []string // steers that came while the window was shut
	closed  bool
}

// take takes a steering input for native delivery. It reports false when
// the input is for the ordinary queue: no steerable call streams, or its
// response has ended.
func (g *nativeGate) take(text string) (bool, error) {
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
func (g *nativeGate) dispatch(text string) (bool, error) {
	n := g.n
	if n.cur == nil && n.send == nil || n.live == "" || !n.allow || n.blocked {
		return false, nil
	}
	n.inGate = true
	_, err := n.steer(n.live, text)
	n.inGate = false
	switch {
	case err == nil, errors.Is(err, errNativeUnknown):
		// Taken: delivered, failed (and queued) or unknown (the run ends
		// blocked), as the server and the machine decide.
		return true, nil
	case errors.Is(err, provider.ErrNotSteerable):
		return false, nil
	}
	return true, fmt.Errorf("runtime: the native steering intent could not be recorded: %w", err)
}

// requeue hands text to the ordinary queue, or to Undelivered when the
// run takes no more messages.
func (g *nativeGate) requeue(text string) {
	if g.rc.submit(steering.TrSteer, text) != nil {
		g.rc.mu.Lock()
		g.rc.queue.dropped = append(g.rc.queue.dropped, QueuedMessage{KindSteering, text})
		g.rc.mu.Unlock()
	}
}

// begin starts a steerable call whose stream is s (the run goroutine).
func (g *nativeGate) begin(s provider.Steerer) {
	g.mu.Lock()
	g.n.cur, g.calling = s, true
	g.mu.Unlock()
}

// open dispatches the mailbox and opens the window, just before Next (the
// run goroutine).
func (g *nativeGate) open() {
	g.mu.Lock()
	for len(g.mailbox) > 0 {
		text := g.mailbox[0]
		g.mailbox = g.mailbox[1:]
		if ok, err := g.dispatch(text); !ok || err != nil {
			g.requeue(text)
		}
	}
	g.window = true
	g.mu.Unlock()
}

// shut closes the window, right after Next (the run goroutine): it waits
// for a steer being dispatched.
func (g *nativeGate) shut() {
	g.mu.Lock()
	g.window = false
	g.mu.Unlock()
	g.n.announce()
}

// end ends the steerable call: what the mailbox holds goes to the
// ordinary queue, in order.
func (g *nativeGate) end() {
	g.mu.Lock()
	g.calling, g.window, g.n.cur = false, false, nil
	for _, text := range g.mailbox {
		g.requeue(text)
	}
	g.mailbox = nil
	g.mu.Unlock()
	g.n.announce()
}

// close ends native steering for the run: later inputs go to the queue.
func (g *nativeGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if g.n != nil {
		g.end()
	}
}
