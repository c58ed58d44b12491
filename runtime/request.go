package runtime

import "strings"

// RunRequest is one run of the agent (CONTRACT §8). Zero values mean
// "absent" and take the documented defaults.
type RunRequest struct {
	RunID     string
	Workspace string // absolute path of an existing directory
	Model     string // catalog id, or the model name of an inline Route
	Prompt    string

	// SessionID resumes (or creates) that session; "" starts a new one
	// with a generated ID.
	SessionID string
	// SessionDir holds the session files; "" means ~/.octet/sessions.
	SessionDir   string
	SystemPrompt string
	// Tools selects the registered tools: nil means all, an empty non-nil
	// slice means none.
	Tools []string
	// AllowFileMutation pre-authorizes edit and write (source host_request).
	AllowFileMutation bool
	// DisplayText is presentation metadata for the prompt, stored in the
	// session; the model never sees it.
	DisplayText string
	// Route defines an inline provider route instead of a catalog model.
	Route *InlineRoute
	// History seeds a new session with prior messages.
	History []HistoryMessage
	// MaxSteps bounds model calls: nil means DefaultMaxSteps, a value must
	// be 1..MaxMaxSteps.
	MaxSteps *int
	// ReasoningEffort is the reasoning the run asks for: nil asks for none
	// (the session's or the agent's selection applies), a value must be
	// "low", "medium" or "high".
	ReasoningEffort *string
	// Media are typed inputs (images, audio) read from the workspace and
	// sent with the prompt, in order (CONTRACT §16).
	Media []MediaRef
	// ResourceRoots are decoded by the protocol but not served by this
	// build: a run that sets them is refused as unsupported.
	ResourceRoots []string
}

// MediaRef is a typed media input.
type MediaRef struct {
	Type, Path string
}

// HistoryMessage is a seeded prior message; Role is "user" or "assistant".
type HistoryMessage struct {
	Role, Content string
}

// InlineRoute is a provider route defined in the request (CONTRACT §8).
type InlineRoute struct {
	Provider            string
	BaseURL             string
	APIKey              string
	Headers             map[string]string
	Mode                string // "" means openai-compatible
	ContextWindowTokens *int   // nil means the inline default; a value must be positive
	MaxOutputTokens     *int   // nil means the inline default; a value must be positive
	InputModalities     []string
	Vision              *bool
	SupportsReasoning   *bool
}

// Limits of CONTRACT §8.
const (
	MaxPromptBytes      = 512 << 10
	MaxDisplayTextBytes = 256 << 10
	MaxHeaderEntries    = 64
	MaxHeaderBytes      = 64 << 10
	DefaultMaxSteps     = 50
	MaxMaxSteps         = 1000
)

// Run error codes (final_result.error.code). They equal the protocol's
// codes of the same names; runtime does not import wire.
const (
	CodeUnsupported        = "unsupported"
	CodeToolSchemaTooLarge = "tool_schema_too_large"
	CodeMediaInvalid       = "media_invalid"
	CodeMediaTooLarge      = "media_too_large"
	CodeMediaUnsupported   = "media_unsupported"
	CodeInternal           = "internal_error"
	CodePromptTooLarge     = "prompt_too_large"
	CodeDisplayTextInvalid = "display_text_invalid"
	CodeWorkspaceInvalid   = "workspace_invalid"
	CodeModelNotFound      = "model_not_found"
	CodeCredentialsMissing = "credentials_missing"
	CodeRouteInvalid       = "route_invalid"
	CodeHeadersRejected    = "headers_rejected"
	CodeToolsInvalid       = "tools_invalid"
	CodeHistoryInvalid     = "history_invalid"
	CodeSessionLocked      = "session_locked"
	CodeSessionCorrupt     = "session_corrupt"
	CodeSessionDirInvalid  = "session_dir_invalid"
	CodeInvalidValue       = "invalid_value"
	CodeReasoningUnsupport = "reasoning_unsupported"
	CodeMaxStepsReached    = "max_steps_reached"
	CodeProviderError      = "provider_error"
	CodeCanceled           = "canceled"
	CodeSessionFailed      = "session_write_failed"
	CodeOutputCut          = "output_incomplete"
	CodeConfigInvalid      = "config_invalid"
)

// RunError is a run refused before it was accepted: no event was emitted,
// and the caller reports a single error final result (CONTRACT §8).
type RunError struct {
	Code    string
	Message string
}

func (e *RunError) Error() string { return e.Code + ": " + e.Message }

func refuse(code, format string, args ...string) *RunError {
	msg := format
	for _, a := range args {
		msg = strings.Replace(msg, "%s", a, 1)
	}
	return &RunError{Code: code, Message: bound(msg)}
}

// bound cuts a message to 1 KiB at a rune boundary.
func bound(s string) string { return trunc(s, 1024-len("…")) }
