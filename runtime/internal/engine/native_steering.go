package engine

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
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Native steering: on a qualified route RunControl.Steer sends
// the input into the provider's live response (response.steer) after a
// durable intent record; fsm/steering's NativeMachine settles each intent
// (spec tla/NativeSteering.tla). An intent whose outcome became unknown
// stays unsettled for good, and this file's check keeps every later run on
// the session away from the provider.
//
// Threading. RunControl.Steer runs on the application's goroutine while the
// run's goroutine reads the model's stream; the session (store.Session) is
// safe for one goroutine at a time, and so is the run's nativeSteering.
// nativeGate hands them over: the run goroutine opens its window just
// before each Next of a steerable call and shuts it right after, under the
// gate's mutex. While the window is open the run goroutine only waits for
// the next server message, so Steer, holding the mutex, may append the
// intent record and send the steer itself: a steer is never held back by a
// model that is thinking silently. While the window is shut (the run
// goroutine handles an event) Steer leaves the input in the gate's mailbox
// and returns at once; the run goroutine dispatches the mailbox, in order,
// when it opens the window next, and hands what is left when the call ends
// to the ordinary queue. Steer never waits for the run goroutine, which
// may itself be waiting for the application to read an event; and nothing
// done under the mutex emits an event (a usage uncertainty found there is
// announced by the run goroutine after the window shuts).

// unsettledNativeMessage is the final_result message of a run blocked by an
// unsettled native steering intent.
const unsettledNativeMessage = "the session holds native steering whose outcome is unknown (the connection or process was lost after the steer was sent); " +
	"its input may or may not have reached the model and is never replayed: start a new session to continue"

// unknownNativeMessage is the final_result message of the run during which
// a native steering outcome became unknown.
const unknownNativeMessage = "the outcome of a native steering input became unknown (the connection was lost, or the server did not answer, after response.steer was sent); " +
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

// nativeSend sends {"type":"response.steer","previous_response_id":respID,
// "input":text} on the live call's connection, after record (the intent
// record) succeeded, as provider.Steerer.Steer does: provider.ErrNotSteerable
// or record's error mean nothing was sent; any other error means the
// outcome is unknown.
type nativeSend func(respID, text string, record func() error) error

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
// by its own NativeMachine, and the stream state native steering needs.
// The run goroutine owns it, except while the gate's window is open (see
// the threading note above).
type nativeSteering struct {
	d       *driver
	send    nativeSend // nil: the live call's Steerer (tests set one)
	intents []*nativeIntent
	seq     int
	// blocked is set once an intent's outcome became unknown: the run
	// ends blocked with unsettled_native_steering at its next boundary.
	blocked bool

	cur   provider.Steerer // the steerable call streaming now
	live  string           // its response's id, once response.created came
	allow bool             // another model step may follow this one (max_steps): a successor fits
	// follow reads what the connection carries after a call that ended
	// with steers outstanding (awaitNative).
	follow provider.Steerer
	// next is a successor response already created: the next step's
	// model call reads it instead of sending a request.
	next provider.Steerer
	// cont is the response the next request must continue: the one
	// response.create after response.steer.pending.
	cont string
	// linked are the steering messages linked since the loop last took
	// them: they enter the request history before the successor's answer.
	linked []provider.Message

	inGate       bool // a dispatch under the gate's mutex: no event may be emitted
	uncertainDue bool // an outcome became unknown under the gate: announce it
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
			// The frame leaves right after this effect, once the send's
			// record callback (steer) returns.
		case steering.NEffRecordSteerID:
			if err := app(store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeAccepted, SteerID: it.steerID}}); err != nil {
				return err
			}
		case steering.NEffSendCreate:
			// The driver's next request is the one response.create: the
			// tool outputs, continuing the same previous_response_id, and
			// never the steer input (the server prepends it).
			n.cont = it.respID
		case steering.NEffLink:
			msg := provider.Message{Role: provider.RoleUser, Text: it.text}
			if err := app(
				store.Record{Body: store.Message{RunID: runID, Origin: KindSteering, Message: store.NewMessageV1(msg)}},
				store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeLinked, ResponseID: respID, Step: it.step}},
			); err != nil {
				return err
			}
			n.linked = append(n.linked, msg)
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
			if n.inGate {
				n.uncertainDue = true
			} else {
				d.markUncertain()
			}
			n.blocked = true
			return errNativeUnknown
		}
	}
	return nil
}

// steer records an intent durably, then sends it into the response respID.
// It returns the intent's id, and errNativeUnknown when the send failed.
// When nothing was recorded (provider.ErrNotSteerable, or the record could
// not be written) the id is "" and nothing was sent.
func (n *nativeSteering) steer(respID, text string) (string, error) {
	n.seq++
	sum := sha256.Sum256([]byte(text))
	it := &nativeIntent{id: n.d.p.req.RunID + "-ns" + strconv.Itoa(n.seq), respID: respID, text: text,
		sum: hex.EncodeToString(sum[:]), m: steering.NewNative()}
	recorded := false
	record := func() error {
		if err := n.fire(it, steering.NTrRecord, ""); err != nil {
			return err
		}
		recorded = true
		n.intents = append(n.intents, it)
		return n.fire(it, steering.NTrDispatch, "")
	}
	var err error
	if n.send != nil {
		err = n.send(respID, text, record)
	} else {
		err = n.cur.Steer(respID, text, record)
	}
	switch {
	case err == nil:
		return it.id, nil
	case !recorded:
		return "", err
	}
	return it.id, n.fire(it, steering.NTrLost, "")
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

// first returns the first intent in one of phases, preferring the one
// with steer id id when id is not empty.
func (n *nativeSteering) first(id string, phases ...steering.NativePhase) *nativeIntent {
	var first *nativeIntent
	for _, it := range n.intents {
		if !slices.Contains(phases, it.m.State().Phase) {
			continue
		}
		if id != "" && it.steerID == id {
			return it
		}
		if first == nil {
			first = it
		}
	}
	return first
}

// inPhase reports whether an intent is in one of phases.
func (n *nativeSteering) inPhase(phases ...steering.NativePhase) bool {
	for _, it := range n.intents {
		if slices.Contains(phases, it.m.State().Phase) {
			return true
		}
	}
	return false
}

// unresolved reports an intent whose outcome the server has yet to give.
func (n *nativeSteering) unresolved() bool {
	return n.inPhase(steering.NDispatched, steering.NAccepted)
}

// inFlight reports an intent that is neither settled nor unknown.
func (n *nativeSteering) inFlight() bool {
	for _, it := range n.intents {
		if p := it.m.State().Phase; p != steering.NIdle && !p.Final() {
			return true
		}
	}
	return false
}

// onEvent applies a response.steer.* event. Outcomes are paired with
// intents by steer id, else in submission order (the server answers the
// steers of a connection in order; a failure before acceptance has no
// id). An outcome no intent waits for is ignored.
func (n *nativeSteering) onEvent(ev provider.StreamEvent) error {
	var it *nativeIntent
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

// created handles a response.created of the call in progress: it is the
// live response; when intents wait for a successor (the one
// response.create after pending was sent), it is theirs, serving step.
func (n *nativeSteering) created(respID string, step int) error {
	n.live = respID
	return n.successor(respID, step)
}

// successor links every intent waiting for a successor to respID: it is
// delivered, to the model step step.
func (n *nativeSteering) successor(respID string, step int) error {
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

// accounted settles the intents whose successor served step, whose usage
// is now recorded.
func (n *nativeSteering) accounted(step int) error {
	for _, it := range n.intents {
		if it.m.State().Phase == steering.NLinked && it.step == step {
			if err := n.fire(it, steering.NTrUsage, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// toolsDone fires send_create for the pending intents: the step's tools
// have run, and the next request is the one response.create.
func (n *nativeSteering) toolsDone() error {
	for _, it := range n.intents {
		if it.m.State().Phase == steering.NPending {
			if err := n.fire(it, steering.NTrSendCreate, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// takeLinked returns the linked messages and forgets them.
func (n *nativeSteering) takeLinked() []provider.Message {
	out := n.linked
	n.linked = nil
	return out
}

// lostAll makes the outcome of every intent in flight unknown.
func (n *nativeSteering) lostAll() {
	for _, it := range n.intents {
		if p := it.m.State().Phase; p != steering.NIdle && !p.Final() {
			_ = n.fire(it, steering.NTrLost, "")
		}
	}
}

// announce emits what a dispatch under the gate could not.
func (n *nativeSteering) announce() {
	if n.uncertainDue {
		n.uncertainDue = false
		n.d.markUncertain()
	}
}

// close ends the run's native steering: an intent not in a final phase
// has an unknown outcome (the connection goes with the run), and the
// streams it kept are closed.
func (n *nativeSteering) close() {
	for _, s := range []provider.Steerer{n.follow, n.next} {
		if s != nil {
			_ = s.Close()
		}
	}
	n.follow, n.next = nil, nil
	n.lostAll()
	n.announce()
}

// startNative sets up the run's native steering when its route is
// qualified (the loop's start).
func (d *driver) startNative() {
	g := d.rc.native
	if g == nil {
		return
	}
	d.native = &nativeSteering{d: d}
	g.mu.Lock()
	g.n = d.native
	g.mu.Unlock()
}

// endNative ends the run's native steering (after the loop, before the
// queue drops what it holds). An intent still in flight has an unknown
// outcome: a run that would have completed ends blocked.
func (d *driver) endNative(status string, errInfo *protocol.ErrorData) (string, *protocol.ErrorData) {
	g, n := d.rc.native, d.native
	if g == nil {
		return status, errInfo
	}
	g.close()
	if n == nil {
		return status, errInfo
	}
	n.close()
	if n.blocked && (status == fsmrun.StatusCompleted || errInfo == nil) {
		return fsmrun.StatusBlocked, &protocol.ErrorData{Code: protocol.CodeUnsettledNativeSteering, Message: unknownNativeMessage}
	}
	return status, errInfo
}

// nativeAbort decides a failed model call while native steering is in
// flight: no retry, since a new request could deliver the input twice or
// never; every intent in flight becomes unknown and the run ends blocked.
// A failure of the host's own (an errTurnFailed from the call) is
// returned as it is.
func (d *driver) nativeAbort(err error) (*modelcall.Failed, bool) {
	n := d.native
	if n == nil {
		return nil, false
	}
	var tf *modelcall.Failed
	if errors.As(err, &tf) {
		return tf, true
	}
	if !n.inFlight() && !n.blocked {
		return nil, false
	}
	n.lostAll()
	return &modelcall.Failed{Code: protocol.CodeUnsettledNativeSteering, Msg: unknownNativeMessage}, true
}

// nativeBusy reports a step that may not be re-issued: it reads a
// successor or continues a steered response, a steer it took is in
// flight, or one's outcome became unknown (a new request could deliver
// that input a second time; the run ends blocked at its boundary).
func (d *driver) nativeBusy() bool {
	return d.nativeStep || d.native != nil && (d.native.inFlight() || d.native.blocked)
}

// awaitNative reads the outcome of the steers the step's call left
// outstanding, on the connection it held (native.follow). It reports true
// when the server created a successor response: its intents are linked to
// step+1, whose model call reads it (native.next). Otherwise every
// outcome was read (failed: queued; pending: the next request carries the
// tool outputs). withCalls says whether the steered response made tool
// calls: a successor to one, or a pending notice without them, breaks the
// protocol and leaves the outcome unknown. errNativeUnknown: an outcome
// became unknown; any other error is a session write failure.
func (d *driver) awaitNative(step int, withCalls bool) (bool, error) {
	n := d.native
	f := n.follow
	n.follow = nil
	if f != nil {
		broken := false
	read:
		for f.Next() {
			ev := f.Event()
			switch ev.Kind {
			case provider.EventSteerAccepted, provider.EventSteerPending, provider.EventSteerFailed:
				if err := n.onEvent(ev); err != nil {
					_ = f.Close()
					return false, err
				}
			case provider.EventResponseCreated:
				if withCalls {
					broken = true
					break read
				}
				n.live = ev.ID
				if err := n.successor(ev.ID, step+1); err != nil {
					_ = f.Close()
					return false, err
				}
				n.next = f
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
			return false, errNativeUnknown
		}
	}
	if n.unresolved() || !withCalls && n.inPhase(steering.NPending) {
		n.lostAll()
		return false, errNativeUnknown
	}
	return false, nil
}
