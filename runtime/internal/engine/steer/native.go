package steer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Native steering: on a qualified route RunControl.Steer sends the input
// into the provider's live response (response.steer) after a durable
// intent record; fsm/steering's NativeMachine settles each intent (spec
// tla/NativeSteering.tla). An intent whose outcome became unknown stays
// unsettled for good, and Unsettled keeps every later run on the session
// away from the provider.
//
// Threading. RunControl.Steer runs on the application's goroutine while the
// run's goroutine reads the model's stream; the session (store.Session) is
// safe for one goroutine at a time, and so is the run's Native. Gate
// hands them over: the run goroutine opens its window just before each
// Next of a steerable call and shuts it right after, under the gate's
// mutex. While the window is open the run goroutine only waits for the
// next server message, so Steer, holding the mutex, may append the intent
// record and send the steer itself: a steer is never held back by a model
// that is thinking silently. While the window is shut (the run goroutine
// handles an event) Steer leaves the input in the gate's mailbox and
// returns at once; the run goroutine dispatches the mailbox, in order,
// when it opens the window next, and hands what is left when the call ends
// to the ordinary queue. Steer never waits for the run goroutine, which
// may itself be waiting for the application to read an event; and nothing
// done under the mutex emits an event (a usage uncertainty found there is
// announced by the run goroutine after the window shuts).

// UnsettledMessage is the final_result message of a run blocked by an
// unsettled native steering intent.
const UnsettledMessage = "the session holds native steering whose outcome is unknown (the connection or process was lost after the steer was sent); " +
	"its input may or may not have reached the model and is never replayed: start a new session to continue"

// UnknownMessage is the final_result message of the run during which a
// native steering outcome became unknown.
const UnknownMessage = "the outcome of a native steering input became unknown (the connection was lost, or the server did not answer, after response.steer was sent); " +
	"its input may or may not have reached the model and is never replayed: start a new session to continue"

// Env is what native steering needs of its run: Recorder, the run's
// sticky usage uncertainty (MarkUncertain emits its event once), and the
// ordinary queue for an input the provider refused (Requeue: queued, or
// reported undelivered when the run takes no more messages).
type Env interface {
	Recorder
	MarkUncertain()
	Requeuer
}

// Send sends {"type":"response.steer","previous_response_id":respID,
// "input":text} on the live call's connection, after record (the intent
// record) succeeded, as provider.Steerer.Steer does: provider.ErrNotSteerable
// or record's error mean nothing was sent; any other error means the
// outcome is unknown.
type Send func(respID, text string, record func() error) error

// intent is one native steering intent of the run.
type intent struct {
	id      string
	respID  string // the response it steers
	text    string
	sum     string // hex SHA-256 of text
	steerID string
	step    int // the model step its successor serves, once linked
	m       *steering.NativeMachine
}

// Native is a run's native steering: every intent, each settled by its
// own NativeMachine, and the stream state native steering needs. The run
// goroutine owns it, except while the gate's window is open (see the
// threading note above).
type Native struct {
	env     Env
	send    Send // nil: the live call's Steerer (tests set one)
	intents []*intent
	seq     int
	trace   fsm.Tracer // the run's tracer; each intent's machine is instance seq
	// Blocked is set once an intent's outcome became unknown: the run
	// ends blocked with unsettled_native_steering at its next boundary.
	Blocked bool

	cur   provider.Steerer // the steerable call streaming now
	Live  string           // its response's id, once response.created came
	Allow bool             // another model step may follow this one (max_steps): a successor fits
	// Follow reads what the connection carries after a call that ended
	// with steers outstanding (Await).
	Follow provider.Steerer
	// Next is a successor response already created: the next step's
	// model call reads it instead of sending a request.
	Next provider.Steerer
	// Cont is the response the next request must continue: the one
	// response.create after response.steer.pending.
	Cont string
	// linked are the steering messages linked since the loop last took
	// them: they enter the request history before the successor's answer.
	linked []provider.Message

	inGate       bool // a dispatch under the gate's mutex: no event may be emitted
	uncertainDue bool // an outcome became unknown under the gate: announce it
}

// NewNative returns a run's native steering. send is nil but in tests:
// the live call's Steerer sends.
func NewNative(env Env, send Send) *Native { return &Native{env: env, send: send} }

// SetTracer traces the machine of every intent recorded from now on, each
// as its own instance (numbered in the order the intents were made, as
// their ids are).
func (n *Native) SetTracer(t fsm.Tracer) { n.trace = t }

// ErrUnknown reports an intent whose outcome became unknown.
var ErrUnknown = errors.New("runtime: native steering outcome unknown")

// fire applies in to the intent's machine and performs its effects.
// A write failure of a durable effect is returned: the intent's record
// may be missing, and the caller fails the run as for any session write.
func (n *Native) fire(it *intent, tr steering.NativeTrigger, respID string) error {
	effs, err := it.m.Fire(steering.NativeInput{Trigger: tr})
	if err != nil {
		return err
	}
	env := n.env
	runID := env.RunID()
	app := env.Append
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
			n.Cont = it.respID
		case steering.NEffLink:
			msg := provider.Message{Role: provider.RoleUser, Text: it.text}
			if err := app(
				store.Record{Body: store.Message{RunID: runID, Origin: KindSteering, Message: store.NewMessageV1(msg)}},
				store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeLinked, ResponseID: respID, Step: it.step}},
			); err != nil {
				return err
			}
			n.linked = append(n.linked, msg)
			env.Emit(protocol.TypeSteeringDelivered, &protocol.SteeringDelivered{Step: it.step, Text: it.text, Mode: protocol.SteeringModeNative})
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
			env.Requeue(it.text)
		case steering.NEffUnsettled:
			// Best effort: the intent is unsettled whether or not this
			// record is written (an open intent is unknown at the next
			// load). Usage is uncertain from here on.
			_ = app(store.Record{Body: store.NativeSteering{IntentID: it.id, Event: store.NativeUnknown}})
			if n.inGate {
				n.uncertainDue = true
			} else {
				env.MarkUncertain()
			}
			n.Blocked = true
			return ErrUnknown
		}
	}
	return nil
}

// Steer records an intent durably, then sends it into the response respID.
// It returns the intent's id, and ErrUnknown when the send failed.
// When nothing was recorded (provider.ErrNotSteerable, or the record could
// not be written) the id is "" and nothing was sent.
func (n *Native) Steer(respID, text string) (string, error) {
	n.seq++
	sum := sha256.Sum256([]byte(text))
	it := &intent{id: n.env.RunID() + "-ns" + strconv.Itoa(n.seq), respID: respID, text: text,
		sum: hex.EncodeToString(sum[:]), m: steering.NewNative()}
	if t := n.trace; t != nil {
		seq := int64(n.seq)
		it.m.SetTracer(func(tr fsm.Transition) {
			tr.Instance = seq
			t(tr)
		})
	}
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

func (n *Native) find(id string) *intent {
	for _, it := range n.intents {
		if it.id == id {
			return it
		}
	}
	return nil
}

// On applies a server outcome to the intent id: accepted (steerID),
// pending, the tools done (send_create), successor (respID, step), usage,
// failed, lost.
func (n *Native) On(id string, tr steering.NativeTrigger, arg string, step int) error {
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
func (n *Native) first(id string, phases ...steering.NativePhase) *intent {
	var first *intent
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

// InPhase reports whether an intent is in one of phases.
func (n *Native) InPhase(phases ...steering.NativePhase) bool {
	for _, it := range n.intents {
		if slices.Contains(phases, it.m.State().Phase) {
			return true
		}
	}
	return false
}

// Unresolved reports an intent whose outcome the server has yet to give.
func (n *Native) Unresolved() bool {
	return n.InPhase(steering.NDispatched, steering.NAccepted)
}

// InFlight reports an intent that is neither settled nor unknown.
func (n *Native) InFlight() bool {
	for _, it := range n.intents {
		if p := it.m.State().Phase; p != steering.NIdle && !p.Final() {
			return true
		}
	}
	return false
}

// TakeLinked returns the linked messages and forgets them.
func (n *Native) TakeLinked() []provider.Message {
	out := n.linked
	n.linked = nil
	return out
}

// lostAll makes the outcome of every intent in flight unknown.
func (n *Native) lostAll() {
	for _, it := range n.intents {
		if p := it.m.State().Phase; p != steering.NIdle && !p.Final() {
			_ = n.fire(it, steering.NTrLost, "")
		}
	}
}

// announce emits what a dispatch under the gate could not.
func (n *Native) announce() {
	if n.uncertainDue {
		n.uncertainDue = false
		n.env.MarkUncertain()
	}
}

// Close ends the run's native steering: an intent not in a final phase
// has an unknown outcome (the connection goes with the run), and the
// streams it kept are closed.
func (n *Native) Close() {
	for _, s := range []provider.Steerer{n.Follow, n.Next} {
		if s != nil {
			_ = s.Close()
		}
	}
	n.Follow, n.Next = nil, nil
	n.lostAll()
	n.announce()
}
