package steering

import (
	"context"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/internal/machine"
)

// Native steering: on a qualified route — Responses
// over WebSocket, a model whose route metadata says it supports steering,
// no provider-side compaction, no hard cumulative ceilings —
// RunControl.Steer hands the input to the provider with response.steer
// instead of queueing it. NativeMachine settles one such intent;
// tla/NativeSteering.tla is its spec.
//
// The intent is recorded durably before the steer is sent. The server
// accepts it (it owns the input, nothing is committed yet), asks for the
// client-owned tool outputs first (pending: the driver runs its tools and
// sends exactly one response.create with their outputs, never the input
// again), or fails it (the returned input goes to the ordinary queue). The
// successor's response.created after the completed prefix is the commit
// point: the intent is linked and steering_delivered (mode native) is
// emitted; it is settled once the successor's usage is accounted. A
// disconnect, a crash or a missing acknowledgement leaves the outcome
// unknown for good: the intent stays unsettled, usage is uncertain, and
// every later run on the session is blocked before any provider I/O. The
// input is never replayed.

// NativePhase is where an intent stands.
type NativePhase string

// Native phases. Delivered, Failed and Unknown are final.
const (
	NIdle       NativePhase = "idle"       // nothing recorded yet
	NRecorded   NativePhase = "recorded"   // the intent record is synced
	NDispatched NativePhase = "dispatched" // response.steer was sent
	NAccepted   NativePhase = "accepted"   // response.steer.accepted: the steer id is recorded
	NPending    NativePhase = "pending"    // response.steer.pending: the tools run
	NCreated    NativePhase = "created"    // the one response.create with the tool outputs was sent
	NLinked     NativePhase = "linked"     // the successor was created: delivered, usage not yet accounted
	NDelivered  NativePhase = "delivered"  // settled: delivered and accounted
	NFailed     NativePhase = "failed"     // settled: failed, the input went to the queue
	NUnknown    NativePhase = "unknown"    // the outcome is unknown: unsettled for good
)

// NativePhases lists every phase in the spec's order.
var NativePhases = []NativePhase{NIdle, NRecorded, NDispatched, NAccepted, NPending, NCreated, NLinked, NDelivered, NFailed, NUnknown}

// Settled says whether the intent is settled (delivered or failed).
func (p NativePhase) Settled() bool { return p == NDelivered || p == NFailed }

// Final says whether the intent's phase can no longer change.
func (p NativePhase) Final() bool { return p.Settled() || p == NUnknown }

// NativeTrigger is an input of the native machine.
type NativeTrigger string

// Native triggers, one per action of tla/NativeSteering.tla.
const (
	NTrRecord     NativeTrigger = "record"      // RunControl.Steer on a qualified route
	NTrDispatch   NativeTrigger = "dispatch"    // the intent is synced: send response.steer
	NTrAccepted   NativeTrigger = "accepted"    // response.steer.accepted
	NTrPending    NativeTrigger = "pending"     // response.steer.pending
	NTrSendCreate NativeTrigger = "send_create" // the tools of the stopped response are done
	NTrSuccessor  NativeTrigger = "successor"   // the successor's response.created after the completed prefix
	NTrUsage      NativeTrigger = "usage"       // the successor's usage is accounted
	NTrFailed     NativeTrigger = "failed"      // response.steer.failed
	NTrLost       NativeTrigger = "lost"        // disconnect, crash or missing acknowledgement
	NTrLaterRun   NativeTrigger = "later_run"   // a later run on the session asks whether it may start
)

// NativeTriggers lists every native trigger in a fixed order.
var NativeTriggers = []NativeTrigger{NTrRecord, NTrDispatch, NTrAccepted, NTrPending, NTrSendCreate, NTrSuccessor, NTrUsage, NTrFailed, NTrLost, NTrLaterRun}

// NativeEffect names what the driver must do.
type NativeEffect string

// Native effects; each trigger returns at most two, in this order.
const (
	NEffAppendIntent  NativeEffect = "append_intent"   // append and sync the intent record
	NEffSendSteer     NativeEffect = "send_steer"      // send response.steer with the input
	NEffRecordSteerID NativeEffect = "record_steer_id" // record the server's steer id
	NEffSendCreate    NativeEffect = "send_create"     // one response.create: tool outputs, same previous_response_id, no input
	NEffLink          NativeEffect = "link"            // record the link, emit steering_delivered (mode native)
	NEffSettle        NativeEffect = "settle"          // record the settlement (delivered or failed)
	NEffRequeue       NativeEffect = "requeue"         // hand the returned input to the ordinary queue
	NEffUnsettled     NativeEffect = "unsettled"       // usage uncertain; the run ends blocked
	NEffBlock         NativeEffect = "block"           // the later run ends blocked before provider I/O
)

// NativeInput is a native trigger (no arguments).
type NativeInput struct{ Trigger NativeTrigger }

// NativeState is the native machine's whole state.
type NativeState struct{ Phase NativePhase }

var nativeSpec = machine.NewSpec("native_steering", NativePhases, NativeTriggers,
	func(in NativeInput) NativeTrigger { return in.Trigger })

// NativeMachine settles one native steering intent.
type NativeMachine struct {
	w  *machine.Machine[NativePhase, NativeTrigger, NativeInput, NativeEffect]
	st NativeState
}

// NewNative returns a machine with nothing recorded.
func NewNative() *NativeMachine { return NativeFromState(NativeState{Phase: NIdle}) }

// NativeFromState returns a machine positioned at st: for enumeration in
// tests, and for an intent restored from the session's records.
func NativeFromState(st NativeState) *NativeMachine {
	m := &NativeMachine{st: st}
	w := machine.New[NativePhase, NativeTrigger, NativeInput, NativeEffect](nativeSpec, &m.st.Phase)
	m.w = w
	emit := func(es ...NativeEffect) func(context.Context, ...any) error {
		return func(context.Context, ...any) error {
			for _, e := range es {
				w.Emit(e)
			}
			return nil
		}
	}
	lost := emit(NEffUnsettled)
	failed := emit(NEffSettle, NEffRequeue)

	w.Configure(NIdle).Permit(NTrRecord, NRecorded)
	w.Configure(NRecorded).
		OnEntry(emit(NEffAppendIntent)).
		Permit(NTrDispatch, NDispatched).
		Permit(NTrLost, NUnknown)
	w.Configure(NDispatched).
		OnEntry(emit(NEffSendSteer)).
		Permit(NTrAccepted, NAccepted).
		Permit(NTrPending, NPending).
		Permit(NTrFailed, NFailed).
		Permit(NTrLost, NUnknown)
	w.Configure(NAccepted).
		OnEntry(emit(NEffRecordSteerID)).
		Permit(NTrPending, NPending).
		Permit(NTrSuccessor, NLinked).
		Permit(NTrFailed, NFailed).
		Permit(NTrLost, NUnknown)
	w.Configure(NPending).
		Permit(NTrSendCreate, NCreated).
		Permit(NTrFailed, NFailed).
		Permit(NTrLost, NUnknown)
	w.Configure(NCreated).
		OnEntry(emit(NEffSendCreate)).
		Permit(NTrSuccessor, NLinked).
		Permit(NTrFailed, NFailed).
		Permit(NTrLost, NUnknown)
	w.Configure(NLinked).
		OnEntry(emit(NEffLink)).
		Permit(NTrUsage, NDelivered).
		Permit(NTrLost, NUnknown)
	w.Configure(NDelivered).
		OnEntry(emit(NEffSettle)).
		InternalTransition(NTrLaterRun, func(context.Context, ...any) error { return nil })
	w.Configure(NFailed).
		OnEntry(failed).
		InternalTransition(NTrLaterRun, func(context.Context, ...any) error { return nil })
	w.Configure(NUnknown).
		OnEntry(lost).
		InternalTransition(NTrLaterRun, emit(NEffBlock))
	return m
}

// SetTracer installs a tracer for every transition taken, with the
// machine's state (fsm.Transition).
func (m *NativeMachine) SetTracer(t fsm.Tracer) { m.w.SetTracer(t, func() any { return m.st }) }

// State returns the current state.
func (m *NativeMachine) State() NativeState { return m.st }

// Permitted returns the triggers accepted in the current state, in the
// order of NativeTriggers.
func (m *NativeMachine) Permitted() []NativeTrigger {
	return m.w.Permitted(NativeTriggers, func(t NativeTrigger) NativeInput { return NativeInput{Trigger: t} })
}

// Fire applies one input and returns the effects, in order. An input the
// current phase does not accept is a *fsm.TransitionError and changes
// nothing. The returned slice is reused by the next Fire.
func (m *NativeMachine) Fire(in NativeInput) ([]NativeEffect, error) { return m.w.Fire(in) }
