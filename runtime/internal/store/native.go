package store

import "slices"

// TypeNativeSteering is the record type of native steering.
const TypeNativeSteering = "native_steering"

// Native steering record events (NativeSteering.Event), in the order an
// intent writes them. Only intent is required; a settled record ends it.
const (
	// NativeIntent is written and synced before response.steer is sent:
	// IntentID, RunID, PreviousResponseID (the response it steers) and
	// InputSHA256 (hex SHA-256 of the input text). The input itself is
	// not stored here: it enters the conversation as a message record when
	// the intent is linked, or through the queue when it fails.
	NativeIntent = "intent"
	// NativeAccepted records the server's steer id (SteerID).
	NativeAccepted = "accepted"
	// NativeLinked is written with the steering message record when the
	// successor's response.created arrived after the completed prefix:
	// ResponseID is the successor, Step the model step it serves.
	NativeLinked = "linked"
	// NativeSettled ends the intent: Outcome delivered (the successor's
	// usage is accounted) or failed (response.steer.failed; the input went
	// to the ordinary queue).
	NativeSettled = "settled"
	// NativeUnknown says the host saw the outcome become unknown (a
	// disconnect or a missing acknowledgement). It settles nothing: the
	// intent stays unsettled for good, as one found unsettled at load.
	NativeUnknown = "unknown"
)

// Native steering outcomes (NativeSteering.Outcome of a settled record).
const (
	NativeOutcomeDelivered = "delivered"
	NativeOutcomeFailed    = "failed"
)

// NativeSteering is one step of a native steering intent:
//
//	{"type":"native_steering","ts":…,"intent_id":"ns-…","event":"intent","run_id":"r1","previous_response_id":"resp_1","input_sha256":"…"}
type NativeSteering struct {
	IntentID           string `json:"intent_id"`
	Event              string `json:"event"`
	RunID              string `json:"run_id,omitempty"`
	PreviousResponseID string `json:"previous_response_id,omitempty"`
	InputSHA256        string `json:"input_sha256,omitempty"`
	SteerID            string `json:"steer_id,omitempty"`
	ResponseID         string `json:"response_id,omitempty"`
	Step               int    `json:"step,omitempty"`
	Outcome            string `json:"outcome,omitempty"`
}

// RecordType implements Body.
func (NativeSteering) RecordType() string { return TypeNativeSteering }

func (NativeSteering) isBody() {}

// nativeState is the derived state of the session's native steering.
type nativeState struct {
	open    []string // intents recorded and not settled, in file order
	unknown []string // of those, the ones whose outcome is unknown
}

func (n *nativeState) observe(b NativeSteering) {
	switch b.Event {
	case NativeIntent:
		if !slices.Contains(n.open, b.IntentID) {
			n.open = append(n.open, b.IntentID)
		}
	case NativeUnknown:
		if slices.Contains(n.open, b.IntentID) && !slices.Contains(n.unknown, b.IntentID) {
			n.unknown = append(n.unknown, b.IntentID)
		}
	case NativeSettled:
		n.open = slices.DeleteFunc(n.open, func(id string) bool { return id == b.IntentID })
		n.unknown = slices.DeleteFunc(n.unknown, func(id string) bool { return id == b.IntentID })
	}
}

// loaded marks every intent still open when the file was loaded as
// unknown: the process that recorded it is gone, and with it any chance to
// learn what the server did.
func (n *nativeState) loaded() {
	for _, id := range n.open {
		if !slices.Contains(n.unknown, id) {
			n.unknown = append(n.unknown, id)
		}
	}
}

// HasUnsettledNativeSteering reports whether the session holds a native
// steering intent that is not settled: one in flight in this process, or
// one whose outcome is unknown (see UnknownNativeSteering).
func (s *Session) HasUnsettledNativeSteering() bool { return len(s.native.open) > 0 }

// UnknownNativeSteering returns the intents whose outcome is unknown, in
// file order: unsettled when the file was loaded, or marked unknown since.
// Such an intent never settles; its usage is uncertain and no later run
// may continue the session.
func (s *Session) UnknownNativeSteering() []string { return slices.Clone(s.native.unknown) }
