package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/provider"
	"octet.dev/host/runtime/internal/store"
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

// nativeSend is the live response a native steer goes into: it sends
// {"type":"response.steer","previous_response_id":respID,"input":text} on
// the call's connection. An error means the frame may or may not have
// left: the outcome is unknown.
type nativeSend func(respID, text string) error

// nativeIntent is one native steering intent of the run.
type nativeIntent struct {
	id      string
	respID  string // the response it steers
	text    string
	sum     string // hex SHA-256 of text
	steerID string
	step    int // the model step its successor serves, once linked
	m       *steering.NativeMachine
}

// nativeSteering is a run's native steering: every intent, each settled
// by its own NativeMachine. Its methods run on the run's goroutine, the
// one that reads the provider's stream and appends to the session, which
// the store requires to be serialized.
type nativeSteering struct {
	d       *driver
	send    nativeSend
	intents []*nativeIntent
	seq     int
	// blocked is set once an intent's outcome became unknown: the run
	// ends blocked with unsettled_native_steering at its next boundary.
	blocked bool
}

// errNativeUnknown reports an intent whose outcome became unknown.
var errNativeUnknown = errors.New("runtime: native steering outcome unknown")

// fire applies in to the intent's machine and performs its effects.
// A write failure of a durable effect is returned: the intent's record
// may be missing, and the caller fails the run as for any session write.
func (n *nativeSteering) fire(it *nativeIntent, tr steering.NativeTrigger, respID string) error {
	effs, err := it.m.Fire(steering.NativeInput{Trigger: tr})
	if err != nil {
		return err
	}
	d := n.d
	runID := d.p.req.RunID
	app := func(recs ...store.Record) error { return d.p.sess.Append(recs...) }
	for _, e := range slices.Clone(effs) {
		switch e {
		case steering.NEffAppendIntent:
			if err := app(store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeIntent, RunID: runID,
				PreviousResponseID: it.respID, InputSHA256: it.sum}}); err != nil {
				return err
			}
		case steering.NEffSendSteer:
			if err := n.send(it.respID, it.text); err != nil {
				return n.fire(it, steering.NTrLost, "")
			}
		case steering.NEffRecordSteerID:
			if err := app(store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeAccepted, SteerID: it.steerID}}); err != nil {
				return err
			}
		case steering.NEffSendCreate:
			// The driver's next request is the one response.create: the
			// tool outputs, continuing the same previous_response_id, and
			// never the steer input (the server prepends it).
		case steering.NEffLink:
			if err := app(
				store.Record{Body: store.Message{RunID: runID, Origin: KindSteering, Message: provider.Message{Role: provider.RoleUser, Text: it.text}}},
				store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeLinked, ResponseID: respID, Step: it.step}},
			); err != nil {
				return err
			}
			d.stream(protocol.TypeSteeringDelivered, &protocol.SteeringDelivered{Step: it.step, Text: it.text, Mode: protocol.SteeringModeNative})
		case steering.NEffSettle:
			outcome := store.NativeOutcomeDelivered
			if it.m.State().Phase == steering.NFailed {
				outcome = store.NativeOutcomeFailed
			}
			if err := app(store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeSettled, Outcome: outcome}}); err != nil {
				return err
			}
		case steering.NEffRequeue:
			// Delivered once by the ordinary queue; if the run no longer
			// takes messages it is reported undelivered, never lost.
			if d.rc.submit(steering.TrSteer, it.text) != nil {
				d.rc.mu.Lock()
				d.rc.queue.dropped = append(d.rc.queue.dropped, QueuedMessage{KindSteering, it.text})
				d.rc.mu.Unlock()
			}
		case steering.NEffUnsettled:
			// Best effort: the intent is unsettled whether or not this
			// record is written (an open intent is unknown at the next
			// load). Usage is uncertain from here on.
			_ = app(store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeUnknown}})
			d.markUncertain()
			n.blocked = true
			return errNativeUnknown
		}
	}
	return nil
}

// steer records an intent durably, then sends it into the response respID.
// It returns the intent's id, and errNativeUnknown when the send failed.
func (n *nativeSteering) steer(respID, text string) (string, error) {
	n.seq++
	sum := sha256.Sum256([]byte(text))
	it := &nativeIntent{id: n.d.p.req.RunID + "-ns" + strconv.Itoa(n.seq), respID: respID, text: text,
		sum: hex.EncodeToString(sum[:]), m: steering.NewNative()}
	n.intents = append(n.intents, it)
	if err := n.fire(it, steering.NTrRecord, ""); err != nil {
		return it.id, err
	}
	return it.id, n.fire(it, steering.NTrDispatch, "")
}

func (n *nativeSteering) find(id string) *nativeIntent {
	for _, it := range n.intents {
		if it.id == id {
			return it
		}
	}
	return nil
}

// on applies a server outcome to the intent id: accepted (steerID),
// pending, the tools done (send_create), successor (respID, step), usage,
// failed, lost.
func (n *nativeSteering) on(id string, tr steering.NativeTrigger, arg string, step int) error {
	it := n.find(id)
	if it == nil {
		return fmt.Errorf("runtime: no native steering intent %q", id)
	}
	switch tr {
	case steering.NTrAccepted:
		it.steerID = arg
	case steering.NTrSuccessor:
		it.step = step
	}
	return n.fire(it, tr, arg)
}

// close ends the run's native steering: an intent not in a final phase
// has an unknown outcome (the connection goes with the run).
func (n *nativeSteering) close() {
	for _, it := range n.intents {
		if p := it.m.State().Phase; p != steering.NIdle && !p.Final() {
			_ = n.fire(it, steering.NTrLost, "")
		}
	}
}
