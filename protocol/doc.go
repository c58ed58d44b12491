// Package protocol is the vocabulary of native-host protocol 1, in one
// place: the command names and request bodies, every event type and the Go
// type of its data, every error code, the statuses and the enumerated
// values the events carry (CONTRACT §4–§10).
//
// It is a leaf: it imports nothing of this module, so the runtime, the
// wire codec, the Go client, the invariant checkers and the state machines
// all share it, and a later schema generator can read every type from it.
//
// Events: Types lists every event type of protocol 1 and Lookup describes
// one (its kind, whether this build emits it, the Go type of its data).
// PayloadFor returns a new zero pointer of that type, ready to unmarshal
// an event's data into:
//
//	v := protocol.PayloadFor(ev.Type) // *protocol.ModelDelta for "model_delta"
//
// Codes: every code constant's name is Code plus the CamelCase of its
// value, and ProtocolCodes, RunCodes, ToolCodes, DenialCodes and
// DiscoveryCodes list the codes of each place a code appears. A code is
// part of the contract: never rename one.
package protocol
