package runtime

import "octet.dev/host/protocol"

// TypeRecoveredOutput is an event type of the Go embedding API only
// (RunControl.Events), not of protocol 1: its data, a *RecoveredOutput,
// carries an interrupted or discarded attempt's partial text. The NDJSON
// host and the RPC mode never write it, and protocol.Lookup does not know
// it.
const TypeRecoveredOutput protocol.EventType = "recovered_output"

// RecoveredOutput is an interrupted attempt's partial text or reasoning.
// It is history, kept apart from current output, the answer, replay and
// usage. Channel is protocol.ChannelText or protocol.ChannelReasoning.
type RecoveredOutput struct {
	protocol.GoAPIEvent `json:"-"`

	Step    int    `json:"step"`
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

// recoveredOutput is the engine's Options.RecoveredOutput.
func recoveredOutput(step int, channel, text string) protocol.RunEvent {
	return protocol.RunEvent{Type: TypeRecoveredOutput, Data: &RecoveredOutput{Step: step, Channel: channel, Text: text}}
}
