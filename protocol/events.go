package protocol

import (
	"reflect"
	"slices"
	"sync"
)

// EventType names an event: the type member of an event frame. The closed
// set is the Type constants below; Lookup describes each. It marshals as
// its string.
type EventType string

// Event types of protocol 1, in the order of CONTRACT §5–§9. The data of
// each is the payload type Lookup reports (named beside it).
const (
	// Command answers and the protocol error.
	TypeHello         EventType = "hello"          // Hello
	TypeModels        EventType = "models"         // Models
	TypeShutdown      EventType = "shutdown"       // Empty
	TypeProtocolError EventType = "protocol_error" // ErrorData

	// The run lifecycle (CONTRACT §9).
	TypeAccepted    EventType = "accepted"     // Accepted
	TypeStarted     EventType = "started"      // Started
	TypeSettled     EventType = "settled"      // Settled
	TypeFinalResult EventType = "final_result" // FinalResult

	// Streaming events, between started and settled.
	TypeModelDelta                EventType = "model_delta"                  // ModelDelta
	TypeOutputMedia               EventType = "output_media"                 // OutputMedia
	TypeProviderLifecycle         EventType = "provider_lifecycle"           // ProviderLifecycle (opt-in per configured provider)
	TypeProviderRetry             EventType = "provider_retry"               // ProviderRetry
	TypeProviderWaitingForNetwork EventType = "provider_waiting_for_network" // ProviderWaitingForNetwork
	TypeProviderOperationRetry    EventType = "provider_operation_retry"     // ProviderOperationRetry
	TypeProviderUsageUncertain    EventType = "provider_usage_uncertain"     // ProviderUsageUncertain
	TypeCandidateRejected         EventType = "candidate_rejected"           // CandidateRejected (runs with a terminal gate)
	TypeToolStart                 EventType = "tool_start"                   // ToolStart
	TypeToolPolicy                EventType = "tool_policy"                  // ToolPolicy
	TypeToolProgress              EventType = "tool_progress"                // ToolProgress
	TypeToolFinish                EventType = "tool_finish"                  // ToolFinish
	TypeModelStep                 EventType = "model_step"                   // ModelStep
	TypeSteeringDelivered         EventType = "steering_delivered"           // SteeringDelivered (Go API runs only)
	TypeFollowUpDelivered         EventType = "follow_up_delivered"          // FollowUpDelivered (Go API runs only)
	TypeCompactionStart           EventType = "compaction_start"             // CompactionStart
	TypeCompactionFinish          EventType = "compaction_finish"            // CompactionFinish
	TypeExtensionNotification     EventType = "extension_notification"       // ExtensionNotification (right after started: discovery findings)
)

// Kind classifies an event type by where it appears.
type Kind string

// Kinds.
const (
	KindResponse  Kind = "response"  // the terminal answer of hello, models or shutdown
	KindError     Kind = "error"     // protocol_error: terminal, for any request
	KindLifecycle Kind = "lifecycle" // accepted, started, settled, final_result
	KindStreaming Kind = "streaming" // between started and settled
)

// Emission says whether this build emits an event type.
type Emission string

// Emissions.
const (
	// EmittedWire: the NDJSON host writes it.
	EmittedWire Emission = "wire"
	// EmittedGoAPI: only runs driven through the Go API emit it (steering
	// and follow-ups have no protocol-1 command).
	EmittedGoAPI Emission = "go_api"
	// NotEmitted: named by the contract, not produced by this build yet.
	// Its payload follows the contract's description so that a schema
	// and a client can exist before the producer does.
	NotEmitted Emission = "none"
)

// EventInfo describes one event type.
type EventInfo struct {
	Type    EventType
	Kind    Kind
	Emitted Emission
	// Terminal: the event ends its request.
	Terminal bool
	// Payload is the Go type of the event's data (a struct type, not a
	// pointer).
	Payload reflect.Type
}

func info[T any](typ EventType, kind Kind, emitted Emission) EventInfo {
	terminal := kind == KindResponse || kind == KindError || typ == TypeFinalResult
	return EventInfo{Type: typ, Kind: kind, Emitted: emitted, Terminal: terminal, Payload: reflect.TypeFor[T]()}
}

// events is the registry: every event type with its payload type. A new
// event type needs a constant, a payload struct, a row here and a row in
// the event table of docs/protocol.md (protocol_test.go checks the last two).
var events = []EventInfo{
	info[Hello](TypeHello, KindResponse, EmittedWire),
	info[Models](TypeModels, KindResponse, EmittedWire),
	info[Empty](TypeShutdown, KindResponse, EmittedWire),
	info[ErrorData](TypeProtocolError, KindError, EmittedWire),

	info[Accepted](TypeAccepted, KindLifecycle, EmittedWire),
	info[Started](TypeStarted, KindLifecycle, EmittedWire),
	info[Settled](TypeSettled, KindLifecycle, EmittedWire),
	info[FinalResult](TypeFinalResult, KindLifecycle, EmittedWire),

	info[ModelDelta](TypeModelDelta, KindStreaming, EmittedWire),
	info[OutputMedia](TypeOutputMedia, KindStreaming, EmittedWire),
	info[ProviderLifecycle](TypeProviderLifecycle, KindStreaming, EmittedWire),
	info[ProviderRetry](TypeProviderRetry, KindStreaming, EmittedWire),
	info[ProviderWaitingForNetwork](TypeProviderWaitingForNetwork, KindStreaming, EmittedWire),
	info[ProviderOperationRetry](TypeProviderOperationRetry, KindStreaming, EmittedWire),
	info[ProviderUsageUncertain](TypeProviderUsageUncertain, KindStreaming, EmittedWire),
	info[CandidateRejected](TypeCandidateRejected, KindStreaming, EmittedWire),
	info[ToolStart](TypeToolStart, KindStreaming, EmittedWire),
	info[ToolPolicy](TypeToolPolicy, KindStreaming, EmittedWire),
	info[ToolProgress](TypeToolProgress, KindStreaming, EmittedWire),
	info[ToolFinish](TypeToolFinish, KindStreaming, EmittedWire),
	info[ModelStep](TypeModelStep, KindStreaming, EmittedWire),
	info[SteeringDelivered](TypeSteeringDelivered, KindStreaming, EmittedGoAPI),
	info[FollowUpDelivered](TypeFollowUpDelivered, KindStreaming, EmittedGoAPI),
	info[CompactionStart](TypeCompactionStart, KindStreaming, EmittedWire),
	info[CompactionFinish](TypeCompactionFinish, KindStreaming, EmittedWire),
	info[ExtensionNotification](TypeExtensionNotification, KindStreaming, EmittedWire),
}

// byType indexes the registry by type, built on first use rather than at
// package init.
var byType = sync.OnceValue(func() map[EventType]EventInfo {
	m := make(map[EventType]EventInfo, len(events))
	for _, e := range events {
		m[e.Type] = e
	}
	return m
})

// Events returns the registry: every event type of protocol 1, in contract
// order.
func Events() []EventInfo { return slices.Clone(events) }

// Types returns the event types of protocol 1 in contract order.
func Types() []EventType {
	out := make([]EventType, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// StreamingTypes returns the streaming event types of CONTRACT §9 in the
// contract's order: the types a run writes between started and settled.
func StreamingTypes() []EventType {
	var out []EventType
	for _, e := range events {
		if e.Kind == KindStreaming {
			out = append(out, e.Type)
		}
	}
	return out
}

// Lookup describes the event type typ; ok is false for a type the registry
// does not know.
func Lookup(typ EventType) (EventInfo, bool) {
	e, ok := byType()[typ]
	return e, ok
}

// PayloadFor returns a new zero value of typ's payload type, as a pointer
// (*ModelDelta for "model_delta"), or nil for a type the registry does not
// know.
func PayloadFor(typ EventType) Payload {
	e, ok := byType()[typ]
	if !ok {
		return nil
	}
	return reflect.New(e.Payload).Interface().(Payload)
}

// RunEvent is one event of a run's ordered stream as the Go embedding API
// delivers it, before any framing: Type is a run event type (TypeAccepted …
// TypeFinalResult, or a Go-API-only type such as the runtime's
// TypeRecoveredOutput) and Data a pointer to its payload, the type
// PayloadFor(Type) returns (*ModelDelta for model_delta) or a type embedding
// GoAPIEvent, whose JSON encoding is the event's data object. Payload is
// sealed: no other type can be a run event's data. The
// runtime's Event is this type; the NDJSON host adds the envelope (seq,
// request id) when it writes one.
type RunEvent struct {
	Type EventType
	Data Payload
}
