package runtime

import (
	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
)

// Native steering (issue 14 §2): on a qualified route RunControl.Steer sends
// the input into the provider's live response (response.steer) after a
// durable intent record; fsm/steering's NativeMachine settles each intent
// (spec tla/NativeSteering.tla). An intent whose outcome became unknown
// stays unsettled for good, and this file's check keeps every later run on
// the session away from the provider.

// unsettledNativeMessage is the final_result message of a run blocked by an
// unsettled native steering intent.
const unsettledNativeMessage = "the session holds native steering whose outcome is unknown (the connection or process was lost after the steer was sent); " +
	"its input may or may not have reached the model and is never replayed: start a new session to continue"

// unsettledNativeSteering returns the blocked result of a run on a session
// that holds an unsettled native steering intent, or nil. It runs before
// any provider I/O. Each unknown intent's machine is restored at its final
// phase and asked (LaterRun) whether the run may start, so the decision is
// the spec's.
func (d *driver) unsettledNativeSteering() *protocol.ErrorData {
	s := d.p.sess
	if !s.HasUnsettledNativeSteering() {
		return nil
	}
	ids := s.UnknownNativeSteering()
	if len(ids) == 0 {
		// Unsettled but not unknown: an intent in flight in this process,
		// which only a concurrent run of the same session could see; the
		// session's lock rules that out, so this is a broken invariant,
		// and it blocks all the same.
		return &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: unsettledNativeMessage}
	}
	for range ids {
		m := steering.NativeFromState(steering.NativeState{Phase: steering.NUnknown})
		effs, err := m.Fire(steering.NativeInput{Trigger: steering.NTrLaterRun})
		if err != nil {
			panic(err)
		}
		for _, e := range effs {
			if e == steering.NEffBlock {
				return &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: unsettledNativeMessage}
			}
		}
	}
	return nil
}

// blockedByNativeSteering is the run's outcome when unsettledNativeSteering
// says so.
func blockedByNativeSteering(e *protocol.ErrorData) (status, output string, errInfo *protocol.ErrorData) {
	return fsmrun.StatusBlocked, "", e
}
