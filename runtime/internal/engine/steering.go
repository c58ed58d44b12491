package engine

import (
	"errors"
	"unicode/utf8"

	"octet.dev/host/fsm/steering"
	"octet.dev/host/runtime/internal/engine/steer"
	"octet.dev/host/runtime/provider"
)

// Queued steering (CONTRACT §15): the application adds user messages to a
// running run. fsm/steering decides when each is delivered or dropped;
// package steer keeps the texts (steer.Queue, under RunControl.mu) and
// performs its effects; this file is RunControl's side. The NDJSON host
// has no command for it: these are Go API controls.

// Kinds of queued messages (QueuedMessage.Kind, and the origin of the
// session's message record).
const (
	KindSteering = steer.KindSteering
	KindFollowUp = steer.KindFollowUp
)

// ErrMessageInvalid reports an empty, oversized or non-UTF-8 steering
// message or follow-up.
var ErrMessageInvalid = errors.New("runtime: a steering message or follow-up must be 1..524288 bytes of UTF-8")

// QueuedMessage is a steering message or follow-up the run did not deliver.
type QueuedMessage = steer.QueuedMessage

// Steer queues a steering message. It is delivered at the next safe
// boundary: after the tool call that is running (the turn's remaining calls
// are then skipped, and the model is told so) or after the model's turn;
// an answer the model gives while steering is pending does not end the run.
// It returns ErrRunEnded once the run has completed or is ending, and
// ErrMessageInvalid for an empty, oversized or non-UTF-8 text.
//
// On a route qualified for native steering (see Native steering in
// docs/steering-and-reasoning.md), an input that comes while the model
// streams goes into its live response instead (response.steer), after a
// durable intent record; at any other time (or when that response has just
// ended) it is queued as above. A native input is delivered once
// (steering_delivered with mode "native"), handed back to the queue when
// the provider refuses it, or left unsettled when its outcome cannot be
// known: the run then ends blocked with unsettled_native_steering and the
// input is never replayed.
// When the intent record cannot be written, nothing is sent and the
// session's write error is returned.
func (rc *RunControl) Steer(text string) error {
	if g := rc.native; g != nil {
		if !validMessage(text) {
			return ErrMessageInvalid
		}
		if !rc.open() {
			return ErrRunEnded
		}
		if taken, err := g.Take(text); taken {
			return err
		}
	}
	return rc.submit(steering.TrSteer, text)
}

// validMessage reports whether text may be a steering message or
// follow-up.
func validMessage(text string) bool {
	return text != "" && len(text) <= MaxPromptBytes && utf8.ValidString(text)
}

// open reports whether the run still takes messages.
func (rc *RunControl) open() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.queue.Open()
}

// FollowUp queues a follow-up: it is delivered when the run would otherwise
// complete, and the run goes on with it. Errors as for Steer.
func (rc *RunControl) FollowUp(text string) error { return rc.submit(steering.TrFollowUp, text) }

// Undelivered returns the queued messages the run dropped because it ended
// first (steering first, then follow-ups, each in submission order). It is
// complete once Wait has returned.
func (rc *RunControl) Undelivered() []QueuedMessage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.queue.Dropped()
}

func (rc *RunControl) submit(tr steering.Trigger, text string) error {
	if !validMessage(text) {
		return ErrMessageInvalid
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := rc.queue.Submit(tr, text); err != nil {
		return ErrRunEnded
	}
	return nil
}

// requeue hands text, a steering input native steering did not deliver,
// to the ordinary queue, or to Undelivered when the run takes no more
// messages.
func (rc *RunControl) requeue(text string) {
	if rc.submit(steering.TrSteer, text) != nil {
		rc.mu.Lock()
		rc.queue.Drop(text)
		rc.mu.Unlock()
	}
}

// boundaryOutcome is what a steering boundary asks of the driver.
type boundaryOutcome struct {
	skipTools bool
	deliver   []QueuedMessage // in order
	complete  bool            // the answered turn ends the run
}

// boundary fires one boundary of the run and takes the messages to deliver
// off the queue. Dropped messages move to Undelivered.
func (rc *RunControl) boundary(in steering.Input) boundaryOutcome {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.queue.Boundary(in)
	return boundaryOutcome{skipTools: out.SkipTools, deliver: out.Deliver, complete: out.Complete}
}

// closeSteering settles the queue when the run ends other than by an
// answered turn: what is pending is dropped.
func (rc *RunControl) closeSteering() {
	rc.mu.Lock()
	open := rc.queue.Open()
	rc.mu.Unlock()
	if open {
		rc.boundary(steering.Input{Trigger: steering.TrClose})
	}
}

// deliver appends queued messages to the conversation, durably, and emits
// their events; step is the model step that will see them.
func (d *driver) deliver(step int, msgs *[]provider.Message, queued []QueuedMessage) error {
	return steer.Deliver(d, step, msgs, queued)
}

// skipTools answers the calls steering cut short, durably, so that every
// tool call of the turn has its result.
func (d *driver) skipTools(msgs *[]provider.Message, calls []provider.ToolCall) error {
	return steer.SkipTools(d, msgs, calls)
}
