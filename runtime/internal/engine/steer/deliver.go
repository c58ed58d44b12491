package steer

import (
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Recorder is what delivering a message needs of the run: its session
// (durable records), its event stream, its id.
type Recorder interface {
	Append(recs ...store.Record) error
	Emit(typ protocol.EventType, data protocol.Payload)
	RunID() string
}

// skippedResult is what the model is told about a tool call of its turn that
// steering cut short.
const skippedResult = "Not run: the user sent a message before this call started; it comes next."

// Deliver appends queued messages to the conversation, durably, and emits
// their events; step is the model step that will see them.
func Deliver(r Recorder, step int, msgs *[]provider.Message, queued []QueuedMessage) error {
	if len(queued) == 0 {
		return nil
	}
	recs := make([]store.Record, len(queued))
	for i, q := range queued {
		recs[i] = store.Record{Body: store.Message{RunID: r.RunID(), Origin: q.Kind, Message: store.NewMessageV1(provider.Message{Role: provider.RoleUser, Text: q.Text})}}
	}
	if err := r.Append(recs...); err != nil {
		return err
	}
	for _, q := range queued {
		*msgs = append(*msgs, provider.Message{Role: provider.RoleUser, Text: q.Text})
		if q.Kind == KindFollowUp {
			r.Emit(protocol.TypeFollowUpDelivered, &protocol.FollowUpDelivered{Step: step, Text: q.Text})
		} else {
			r.Emit(protocol.TypeSteeringDelivered, &protocol.SteeringDelivered{Step: step, Text: q.Text, Mode: protocol.SteeringModeQueued})
		}
	}
	return nil
}

// SkipTools answers the calls steering cut short, durably, so that every
// tool call of the turn has its result.
func SkipTools(r Recorder, msgs *[]provider.Message, calls []provider.ToolCall) error {
	if len(calls) == 0 {
		return nil
	}
	recs := make([]store.Record, len(calls))
	results := make([]provider.Message, len(calls))
	for i, c := range calls {
		results[i] = provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: skippedResult, IsError: true}
		recs[i] = store.Record{Body: store.Message{RunID: r.RunID(), Message: store.NewMessageV1(results[i])}}
	}
	if err := r.Append(recs...); err != nil {
		return err
	}
	*msgs = append(*msgs, results...)
	return nil
}
