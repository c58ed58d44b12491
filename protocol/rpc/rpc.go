package rpc

import (
	"slices"
	"strings"

	"octet.dev/host/protocol"
)

// Commands, the "type" member of a command line.
const (
	CommandPrompt          = "prompt"
	CommandSteer           = "steer"
	CommandFollowUp        = "follow_up"
	CommandAbort           = "abort"
	CommandGetState        = "get_state"
	CommandGetSessionStats = "get_session_stats"
	CommandNewSession      = "new_session"
	// CommandParse is the command of the response to a line that is not a
	// command object at all (or that names no command).
	CommandParse = "parse"
)

var commands = []string{CommandPrompt, CommandSteer, CommandFollowUp, CommandAbort, CommandGetState, CommandGetSessionStats, CommandNewSession}

// Commands returns the commands a line may name, in the documented order.
func Commands() []string { return slices.Clone(commands) }

// TakesMessage reports whether a command needs a "message" member (prompt,
// steer and follow_up); the others take none.
func TakesMessage(command string) bool {
	switch command {
	case CommandPrompt, CommandSteer, CommandFollowUp:
		return true
	}
	return false
}

// Command is one command line, decoded strictly: unknown members,
// duplicate names and invalid UTF-8 are refused.
type Command struct {
	// ID is echoed in the command's response.
	ID *string `json:"id"`
	// Type is one of Commands.
	Type *string `json:"type"`
	// Message is the text of prompt, steer and follow_up.
	Message *string `json:"message"`
}

// TypeResponse is the "type" member of every response line.
const TypeResponse = "response"

// Response answers one command line, exactly once.
type Response struct {
	// Type is always TypeResponse.
	Type string `json:"type"`
	// ID is the command's id, when it had one that could be read.
	ID *string `json:"id,omitzero"`
	// Command is the command answered, or CommandParse.
	Command string `json:"command"`
	// Success reports whether the command was carried out.
	Success bool `json:"success"`
	// Data is State for get_state and Stats for get_session_stats.
	Data any `json:"data,omitzero"`
	// Error says why a command failed.
	Error string `json:"error,omitzero"`
}

// State is the data of get_state's response.
type State struct {
	Model          string `json:"model"`
	SessionID      string `json:"sessionId"`
	IsRunning      bool   `json:"isRunning"`
	UsageUncertain bool   `json:"usageUncertain"`
}

// Tokens are a session's token counts.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Total      int64 `json:"total"`
}

// Stats is the data of get_session_stats's response.
type Stats struct {
	SessionID      string  `json:"sessionId"`
	Tokens         Tokens  `json:"tokens"`
	Cost           float64 `json:"cost"`
	UsageUncertain bool    `json:"usageUncertain"`
}

// EventAutoRetryStart is the RPC name of protocol 1's provider_retry.
const EventAutoRetryStart = "auto_retry_start"

// EventType is the RPC name of a run event type of package protocol.
func EventType(native protocol.EventType) string {
	if native == protocol.TypeProviderRetry {
		return EventAutoRetryStart
	}
	return string(native)
}

// Payloads of the events whose members differ from protocol 1's.

// Retry is the payload of auto_retry_start (protocol 1's provider_retry).
type Retry struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  *int   `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// OutputMedia is the payload of output_media: the media's type is
// mediaType, since "type" is the line's own.
type OutputMedia struct {
	Step      int    `json:"step"`
	MediaType string `json:"mediaType"`
	MimeType  string `json:"mimeType"`
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
}

// NetworkWait is the payload of provider_waiting_for_network.
type NetworkWait struct {
	Attempt      int    `json:"attempt"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// OperationRetry is the payload of provider_operation_retry.
type OperationRetry struct {
	Operation    string `json:"operation"`
	Attempt      int    `json:"attempt"`
	MaxAttempts  *int   `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// Payload returns a pointer to the zero payload of an RPC event named by
// its protocol 1 type when this package defines it (nil when the event
// carries protocol 1's payload, renamed by Camel).
func Payload(native protocol.EventType) any {
	switch native {
	case protocol.TypeProviderRetry:
		return &Retry{}
	case protocol.TypeOutputMedia:
		return &OutputMedia{}
	case protocol.TypeProviderWaitingForNetwork:
		return &NetworkWait{}
	case protocol.TypeProviderOperationRetry:
		return &OperationRetry{}
	}
	return nil
}

// OpaqueMember is the member of an event whose value keeps its own names
// (the model's JSON arguments of tool_start), "" when none.
func OpaqueMember(native protocol.EventType) string {
	if native == protocol.TypeToolStart {
		return "arguments"
	}
	return ""
}

// Camel turns a snake_case member name into camelCase (snake_case →
// snakeCase); a name without '_' is kept as it is.
func Camel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	b := make([]byte, 0, len(s))
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' && len(b) > 0:
			up = true
		case up && 'a' <= c && c <= 'z':
			b = append(b, c-'a'+'A')
			up = false
		default:
			b = append(b, c)
			up = false
		}
	}
	return string(b)
}
