package client

import (
	"fmt"

	"github.com/go-json-experiment/json"

	"octet.dev/host/protocol"
	"octet.dev/host/wire"
)

// envelope is the part every request line shares.
type envelope struct {
	ProtocolVersion int    `json:"protocol_version"`
	RequestID       string `json:"request_id"`
	Command         string `json:"command"`
}

type modelsLine struct {
	envelope
	Offline bool `json:"offline"`
}

type runLine struct {
	envelope
	Body protocol.RunRequest `json:",embed"`
}

func newEnvelope(id, command string) envelope {
	return envelope{ProtocolVersion: protocol.Version, RequestID: id, Command: command}
}

// marshalLine encodes one request line, newline included, and enforces the
// frame bound so that the host never has to answer an oversized line with a
// protocol_error it cannot attribute (its request_id would be null).
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	if len(b)+1 > protocol.MaxFrameBytes {
		return nil, fmt.Errorf("%w: the request line would be %d bytes", ErrRequestTooLarge, len(b)+1)
	}
	return append(b, '\n'), nil
}

// marshalRun encodes a run request line.
func marshalRun(id string, req *protocol.RunRequest) ([]byte, error) {
	return marshalLine(runLine{envelope: newEnvelope(id, protocol.CommandRun), Body: *req})
}

// checkRun rejects run requests the host would answer with protocol_error
// invalid_id.
func checkRun(req *protocol.RunRequest) error {
	if !wire.ValidID(req.RunID) {
		return fmt.Errorf("%w: run_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'", ErrInvalidRequest)
	}
	if req.SessionID != nil && !wire.ValidID(*req.SessionID) {
		return fmt.Errorf("%w: session_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'", ErrInvalidRequest)
	}
	return nil
}
