package engine

import (
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/engine/steer"
)

// Steering's environment (package steer) and the driver's thin adapters
// over it: the loop, the recovery machine and the run's end call these.

// MarkUncertain sets the run's sticky usage uncertainty and emits its
// event once per run.
func (d *driver) MarkUncertain() { d.markUncertain() }

// Requeue hands text, a native steering input the provider refused, to
// the ordinary queue (or to Undelivered when the run takes no more).
func (d *driver) Requeue(text string) { d.rc.requeue(text) }

var _ steer.Env = (*driver)(nil)

// rcQueue is RunControl's ordinary queue as the native steering gate sees
// it.
type rcQueue struct{ rc *RunControl }

func (q rcQueue) Requeue(text string) { q.rc.requeue(text) }

// errNativeUnknown reports an intent whose outcome became unknown.
var errNativeUnknown = steer.ErrUnknown

// unknownNativeMessage is the final_result message of the run during which
// a native steering outcome became unknown.
const unknownNativeMessage = steer.UnknownMessage

// unsettledNativeSteering returns the blocked result of a run on a session
// that holds an unsettled native steering intent, or nil (steer.Unsettled).
// It runs before any provider I/O.
func (d *driver) unsettledNativeSteering() *protocol.ErrorData { return steer.Unsettled(d.p.sess) }

// blockedByNativeSteering is the run's outcome when unsettledNativeSteering
// says so.
func blockedByNativeSteering(e *protocol.ErrorData) (status, output string, errInfo *protocol.ErrorData) {
	return fsmrun.StatusBlocked, "", e
}

// startNative sets up the run's native steering when its route is
// qualified (the loop's start).
func (d *driver) startNative() {
	g := d.rc.native
	if g == nil {
		return
	}
	d.native = steer.NewNative(d, nil)
	d.native.SetTracer(d.trace)
	g.Attach(d.native)
}

// endNative ends the run's native steering (after the loop, before the
// queue drops what it holds). An intent still in flight has an unknown
// outcome: a run that would have completed ends blocked.
func (d *driver) endNative(status string, errInfo *protocol.ErrorData) (string, *protocol.ErrorData) {
	g, n := d.rc.native, d.native
	if g == nil {
		return status, errInfo
	}
	return steer.End(g, n, status, errInfo)
}

// nativeAbort decides a failed model call while native steering is in
// flight (steer.Native.Abort): no retry, the run ends blocked.
func (d *driver) nativeAbort(err error) (*modelcall.Failed, bool) {
	n := d.native
	if n == nil {
		return nil, false
	}
	return n.Abort(err)
}

// nativeBusy reports a step that may not be re-issued: it reads a
// successor or continues a steered response, a steer it took is in
// flight, or one's outcome became unknown (a new request could deliver
// that input a second time; the run ends blocked at its boundary).
func (d *driver) nativeBusy() bool {
	return d.nativeStep || d.native != nil && (d.native.InFlight() || d.native.Blocked)
}

// awaitNative reads the outcome of the steers the step's call left
// outstanding (steer.Native.Await).
func (d *driver) awaitNative(step int, withCalls bool) (bool, error) {
	return d.native.Await(step, withCalls)
}
