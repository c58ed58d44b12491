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

// runBody mirrors protocol.RunRequest field for field, so that a RunRequest
// converts to it (a struct conversion ignores tags and fails to compile if
// the two drift apart). Its tags add omitzero: protocol.RunRequest's plain tags
// would write a nil pointer as null, a nil slice as [] and a nil map as {},
// all of which the host reads as present (null is even rejected). Here an
// absent optional field stays absent, while a non-nil empty value (tools:
// []) is still written.
type runBody struct {
	RunID     string `json:"run_id"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	Prompt    string `json:"prompt"`

	SessionID         *string          `json:"session_id,omitzero"`
	SessionDir        *string          `json:"session_dir,omitzero"`
	SystemPrompt      *string          `json:"system_prompt,omitzero"`
	Tools             *[]string        `json:"tools,omitzero"`
	AllowFileMutation *bool            `json:"allow_file_mutation,omitzero"`
	DisplayText       *string          `json:"display_text,omitzero"`
	Media             []protocol.Media `json:"media,omitzero"`

	Provider            *string           `json:"provider,omitzero"`
	BaseURL             *string           `json:"base_url,omitzero"`
	APIKey              *string           `json:"api_key,omitzero"`
	CustomHeaders       map[string]string `json:"custom_headers,omitzero"`
	ProviderMode        *string           `json:"provider_mode,omitzero"`
	ContextWindowTokens *int64            `json:"context_window_tokens,omitzero"`
	MaxOutputTokens     *int64            `json:"max_output_tokens,omitzero"`
	InputModalities     *[]string         `json:"input_modalities,omitzero"`
	Vision              *bool             `json:"vision,omitzero"`
	SupportsReasoning   *bool             `json:"supports_reasoning,omitzero"`

	History       []protocol.HistoryMessage `json:"history,omitzero"`
	ResourceRoots []string                  `json:"resource_roots,omitzero"`
	MaxSteps      *int64                    `json:"max_steps,omitzero"`
	Reasoning     *protocol.Reasoning       `json:"reasoning,omitzero"`
}

type runLine struct {
	envelope
	Body runBody `json:",embed"`
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
	return marshalLine(runLine{envelope: newEnvelope(id, protocol.CommandRun), Body: runBody(*req)})
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
