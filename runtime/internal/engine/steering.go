package engine

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"octet.dev/host/fsm/steering"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Queued steering (CONTRACT §15): the application adds user messages to a
// running run. fsm/steering decides when each is delivered or dropped;
// this file keeps the texts and performs its effects. The NDJSON host has
// no command for it: these are Go API controls.

// Kinds of queued messages (QueuedMessage.Kind, and the origin of the
// session's message record).
const (
	KindSteering = "steering"
	KindFollowUp = "follow_up"
)

// ErrMessageInvalid reports an empty, oversized or non-UTF-8 steering
// message or follow-up.
var ErrMessageInvalid = errors.New("runtime: a steering message or follow-up must be 1..524288 bytes of UTF-8")

// QueuedMessage is a steering message or follow-up the run did not deliver.
type QueuedMessage struct {
	Kind string // KindSteering or KindFollowUp
	Text string
}

// skippedResult is what the model is told about a tool call of its turn that
// steering cut short.
const skippedResult = "Not run: the user sent a message before this call started; it comes next."

// steeringQueue is the run's pending messages under RunControl.mu.
type steeringQueue struct {
	m         *steering.Machine
	steering  []string
	followUps []string
	dropped   []QueuedMessage
}

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
		if taken, err := g.take(text); taken {
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
	return rc.queue.m.State().Phase == steering.Open
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
	return append([]QueuedMessage(nil), rc.queue.dropped...)
}

func (rc *RunControl) submit(tr steering.Trigger, text string) error {
	if !validMessage(text) {
		return ErrMessageInvalid
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, err := rc.queue.m.Fire(steering.Input{Trigger: tr}); err != nil {
		return ErrRunEnded
	}
	if tr == steering.TrSteer {
		rc.queue.steering = append(rc.queue.steering, text)
	} else {
		rc.queue.followUps = append(rc.queue.followUps, text)
	}
	return nil
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
	q := &rc.queue
	effects, err := q.m.Fire(in)
	if err != nil {
		panic(err) // the driver fires boundaries only while the run is open
	}
	var out boundaryOutcome
	for _, e := range effects {
		switch e.Kind {
		case steering.EffSkipTools:
			out.skipTools = true
		case steering.EffDeliverSteering:
			for _, t := range q.steering[:e.N] {
				out.deliver = append(out.deliver, QueuedMessage{KindSteering, t})
			}
			q.steering = q.steering[e.N:]
		case steering.EffDeliverFollowUps:
			for _, t := range q.followUps[:e.N] {
				out.deliver = append(out.deliver, QueuedMessage{KindFollowUp, t})
			}
			q.followUps = q.followUps[e.N:]
		case steering.EffComplete:
			out.complete = true
		case steering.EffDrop:
			for _, t := range q.steering {
				q.dropped = append(q.dropped, QueuedMessage{KindSteering, t})
			}
			for _, t := range q.followUps {
				q.dropped = append(q.dropped, QueuedMessage{KindFollowUp, t})
			}
			if len(q.dropped) != e.N {
				panic(fmt.Sprintf("runtime: steering dropped %d messages, the machine says %d", len(q.dropped), e.N))
			}
			q.steering, q.followUps = nil, nil
		}
	}
	return out
}

// closeSteering settles the queue when the run ends other than by an
// answered turn: what is pending is dropped.
func (rc *RunControl) closeSteering() {
	rc.mu.Lock()
	open := rc.queue.m.State().Phase == steering.Open
	rc.mu.Unlock()
	if open {
		rc.boundary(steering.Input{Trigger: steering.TrClose})
	}
}

// deliver appends queued messages to the conversation, durably, and emits
// their events; step is the model step that will see them.
func (d *driver) deliver(step int, msgs *[]provider.Message, queued []QueuedMessage) error {
	if len(queued) == 0 {
		return nil
	}
	recs := make([]store.Record, len(queued))
	for i, q := range queued {
		recs[i] = store.Record{Body: store.Message{RunID: d.p.req.RunID, Origin: q.Kind, Message: store.NewMessageV1(provider.Message{Role: provider.RoleUser, Text: q.Text})}}
	}
	if err := d.p.sess.Append(recs...); err != nil {
		return err
	}
	for _, q := range queued {
		*msgs = append(*msgs, provider.Message{Role: provider.RoleUser, Text: q.Text})
		if q.Kind == KindFollowUp {
			d.stream(protocol.TypeFollowUpDelivered, &protocol.FollowUpDelivered{Step: step, Text: q.Text})
		} else {
			d.stream(protocol.TypeSteeringDelivered, &protocol.SteeringDelivered{Step: step, Text: q.Text, Mode: protocol.SteeringModeQueued})
		}
	}
	return nil
}

// skipTools answers the calls steering cut short, durably, so that every
// tool call of the turn has its result.
func (d *driver) skipTools(msgs *[]provider.Message, calls []provider.ToolCall) error {
	if len(calls) == 0 {
		return nil
	}
	recs := make([]store.Record, len(calls))
	results := make([]provider.Message, len(calls))
	for i, c := range calls {
		results[i] = provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: skippedResult, IsError: true}
		recs[i] = store.Record{Body: store.Message{RunID: d.p.req.RunID, Message: store.NewMessageV1(results[i])}}
	}
	if err := d.p.sess.Append(recs...); err != nil {
		return err
	}
	*msgs = append(*msgs, results...)
	return nil
}
