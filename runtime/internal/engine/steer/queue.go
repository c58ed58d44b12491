package steer

import (
	"fmt"

	"octet.dev/host/fsm"
	"octet.dev/host/fsm/steering"
)

// Kinds of queued messages (QueuedMessage.Kind, and the origin of the
// session's message record).
const (
	KindSteering = "steering"
	KindFollowUp = "follow_up"
)

// QueuedMessage is a steering message or follow-up the run did not deliver.
type QueuedMessage struct {
	Kind string // KindSteering or KindFollowUp
	Text string
}

// Queue is the run's pending messages. It does no locking: its owner
// (RunControl) holds its mutex around every call.
type Queue struct {
	m         *steering.Machine
	steering  []string
	followUps []string
	dropped   []QueuedMessage
}

// NewQueue returns an open queue.
func NewQueue() Queue { return Queue{m: steering.New()} }

// SetTracer traces the queue's machine.
func (q *Queue) SetTracer(t fsm.Tracer) { q.m.SetTracer(t) }

// Open reports whether the run still takes messages.
func (q *Queue) Open() bool { return q.m.State().Phase == steering.Open }

// Submit queues text as a steering message (steering.TrSteer) or a
// follow-up (steering.TrFollowUp); it fails when the run takes no more
// messages.
func (q *Queue) Submit(tr steering.Trigger, text string) error {
	if _, err := q.m.Fire(steering.Input{Trigger: tr}); err != nil {
		return err
	}
	if tr == steering.TrSteer {
		q.steering = append(q.steering, text)
	} else {
		q.followUps = append(q.followUps, text)
	}
	return nil
}

// Drop reports text, a steering message, undelivered.
func (q *Queue) Drop(text string) {
	q.dropped = append(q.dropped, QueuedMessage{KindSteering, text})
}

// Dropped returns a copy of the messages the run dropped.
func (q *Queue) Dropped() []QueuedMessage { return append([]QueuedMessage(nil), q.dropped...) }

// SteeringPending reports whether steering waits to be delivered.
func (q *Queue) SteeringPending() bool { return len(q.steering) > 0 }

// Outcome is what a steering boundary asks of the driver.
type Outcome struct {
	SkipTools bool
	Deliver   []QueuedMessage // in order
	Complete  bool            // the answered turn ends the run
}

// Boundary fires one boundary of the run and takes the messages to deliver
// off the queue. Dropped messages move to Dropped.
func (q *Queue) Boundary(in steering.Input) Outcome {
	effects, err := q.m.Fire(in)
	if err != nil {
		panic(err) // the driver fires boundaries only while the run is open
	}
	var out Outcome
	for _, e := range effects {
		switch e.Kind {
		case steering.EffSkipTools:
			out.SkipTools = true
		case steering.EffDeliverSteering:
			for _, t := range q.steering[:e.N] {
				out.Deliver = append(out.Deliver, QueuedMessage{KindSteering, t})
			}
			q.steering = q.steering[e.N:]
		case steering.EffDeliverFollowUps:
			for _, t := range q.followUps[:e.N] {
				out.Deliver = append(out.Deliver, QueuedMessage{KindFollowUp, t})
			}
			q.followUps = q.followUps[e.N:]
		case steering.EffComplete:
			out.Complete = true
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
