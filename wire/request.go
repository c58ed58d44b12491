package wire

import "octet.dev/host/protocol"

// Request is one decoded, strictly validated request line. Exactly one of
// Models and Run is set for those commands; hello and shutdown carry no
// fields beyond the envelope. Command is one of protocol.Command*; the
// bodies are the protocol's types.
type Request struct {
	RequestID string
	Command   string
	Models    *protocol.ModelsRequest
	Run       *protocol.RunRequest
}
