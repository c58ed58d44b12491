package steer

import (
	"errors"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/provider"
)

// OnEvent applies a response.steer.* event. Outcomes are paired with
// intents by steer id, else in submission order (the server answers the
// steers of a connection in order; a failure before acceptance has no
// id). An outcome no intent waits for is ignored.
func (n *Native) OnEvent(ev provider.StreamEvent) error {
	var it *intent
	var tr steering.NativeTrigger
	switch ev.Kind {
	case provider.EventSteerAccepted:
		it, tr = n.first("", steering.NDispatched), steering.NTrAccepted
	case provider.EventSteerPending:
		it, tr = n.first(ev.ID, steering.NAccepted, steering.NDispatched), steering.NTrPending
	case provider.EventSteerFailed:
		if ev.ID != "" {
			it = n.first(ev.ID, steering.NAccepted, steering.NPending, steering.NCreated)
		}
		if it == nil || it.steerID != ev.ID {
			it = n.first("", steering.NDispatched)
		}
		tr = steering.NTrFailed
	default:
		return nil
	}
	if it == nil {
		return nil
	}
	if tr == steering.NTrAccepted {
		it.steerID = ev.ID
	}
	return n.fire(it, tr, "")
}

// Created handles a response.created of the call in progress: it is the
// live response; when intents wait for a successor (the one
// response.create after pending was sent), it is theirs, serving step.
func (n *Native) Created(respID string, step int) error {
	n.Live = respID
	return n.successor(respID, step)
}

// successor links every intent waiting for a successor to respID: it is
// delivered, to the model step step.
func (n *Native) successor(respID string, step int) error {
	for _, it := range n.intents {
		if p := it.m.State().Phase; p == steering.NAccepted || p == steering.NCreated {
			it.step = step
			if err := n.fire(it, steering.NTrSuccessor, respID); err != nil {
				return err
			}
		}
	}
	return nil
}

// Accounted settles the intents whose successor served step, whose usage
// is now recorded.
func (n *Native) Accounted(step int) error {
	for _, it := range n.intents {
		if it.m.State().Phase == steering.NLinked && it.step == step {
			if err := n.fire(it, steering.NTrUsage, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// ToolsDone fires send_create for the pending intents: the step's tools
// have run, and the next request is the one response.create.
func (n *Native) ToolsDone() error {
	for _, it := range n.intents {
		if it.m.State().Phase == steering.NPending {
			if err := n.fire(it, steering.NTrSendCreate, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// Await reads the outcome of the steers the step's call left outstanding,
// on the connection it held (Follow). It reports true when the server
// created a successor response: its intents are linked to step+1, whose
// model call reads it (Next). Otherwise every outcome was read (failed:
// queued; pending: the next request carries the tool outputs). withCalls
// says whether the steered response made tool calls: a successor to one,
// or a pending notice without them, breaks the protocol and leaves the
// outcome unknown. ErrUnknown: an outcome became unknown; any other error
// is a session write failure.
func (n *Native) Await(step int, withCalls bool) (bool, error) {
	f := n.Follow
	n.Follow = nil
	if f != nil {
		broken := false
	read:
		for f.Next() {
			ev := f.Event()
			switch ev.Kind {
			case provider.EventSteerAccepted, provider.EventSteerPending, provider.EventSteerFailed:
				if err := n.OnEvent(ev); err != nil {
					_ = f.Close()
					return false, err
				}
			case provider.EventResponseCreated:
				if withCalls {
					broken = true
					break read
				}
				n.Live = ev.ID
				if err := n.successor(ev.ID, step+1); err != nil {
					_ = f.Close()
					return false, err
				}
				n.Next = f
				return true, nil
			default:
				broken = true // content before any successor: not the protocol
				break read
			}
		}
		broken = broken || f.Err() != nil
		_ = f.Close()
		if broken {
			n.lostAll()
			return false, ErrUnknown
		}
	}
	if n.Unresolved() || !withCalls && n.InPhase(steering.NPending) {
		n.lostAll()
		return false, ErrUnknown
	}
	return false, nil
}

// Abort decides a failed model call while native steering is in flight:
// no retry, since a new request could deliver the input twice or never;
// every intent in flight becomes unknown and the run ends blocked. A
// failure of the host's own (a *modelcall.Failed from the call) is
// returned as it is.
func (n *Native) Abort(err error) (*modelcall.Failed, bool) {
	var tf *modelcall.Failed
	if errors.As(err, &tf) {
		return tf, true
	}
	if !n.InFlight() && !n.Blocked {
		return nil, false
	}
	n.lostAll()
	return &modelcall.Failed{Code: protocol.CodeUnsettledNativeSteering, Msg: UnknownMessage}, true
}

// End ends the run's native steering (after the loop, before the queue
// drops what it holds): the gate g closes, and n (nil when the loop never
// started it) closes. An intent still in flight has an unknown outcome: a
// run that would have completed ends blocked.
func End(g *Gate, n *Native, status string, errInfo *protocol.ErrorData) (string, *protocol.ErrorData) {
	g.Close()
	if n == nil {
		return status, errInfo
	}
	n.Close()
	if n.Blocked && (status == fsmrun.StatusCompleted || errInfo == nil) {
		return fsmrun.StatusBlocked, &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: UnknownMessage}
	}
	return status, errInfo
}

// Intents is what the check before a run needs of its session: whether it
// holds an unsettled native steering intent, and the ids of those whose
// outcome is unknown (store.Session).
type Intents interface {
	HasUnsettledNativeSteering() bool
	UnknownNativeSteering() []string
}

// Unsettled returns the blocked result of a run on a session that holds an
// unsettled native steering intent, or nil. It runs before any provider
// I/O. Each unknown intent's machine is restored at its final phase and
// asked (LaterRun) whether the run may start, so the decision is the
// spec's.
func Unsettled(s Intents) *protocol.ErrorData {
	if !s.HasUnsettledNativeSteering() {
		return nil
	}
	ids := s.UnknownNativeSteering()
	if len(ids) == 0 {
		// Unsettled but not unknown: an intent in flight in this process,
		// which only a concurrent run of the same session could see; the
		// session's lock rules that out, so this is a broken invariant,
		// and it blocks all the same.
		return &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: UnsettledMessage}
	}
	for range ids {
		m := steering.NativeFromState(steering.NativeState{Phase: steering.NUnknown})
		effs, err := m.Fire(steering.NativeInput{Trigger: steering.NTrLaterRun})
		if err != nil {
			panic(err)
		}
		for _, e := range effs {
			if e == steering.NEffBlock {
				return &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: UnsettledMessage}
			}
		}
	}
	return nil
}
