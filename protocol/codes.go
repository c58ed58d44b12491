package protocol

import "slices"

// Error codes are stable snake_case strings (CONTRACT §5). Each constant's
// name is Code followed by the CamelCase of its value; a code shared by
// several places (canceled, not_found, …) is defined once and listed in
// each place's table below. docs/protocol.md documents every code in the table
// of each place it appears (protocol_test.go checks both rules).

// Protocol error codes: protocol_error.data.code (CONTRACT §3–§5).
const (
	CodeInvalidJSON                = "invalid_json"                 // not valid JSON, trailing data, empty line
	CodeInvalidUTF8                = "invalid_utf8"                 // the line is not valid UTF-8
	CodeFrameTooLarge              = "frame_too_large"              // the line exceeds 1 MiB including the newline
	CodeNotAnObject                = "not_an_object"                // the JSON value is not an object
	CodeUnknownField               = "unknown_field"                // a member the command does not define (case differs too)
	CodeDuplicateField             = "duplicate_field"              // the same member name twice
	CodeInvalidField               = "invalid_field"                // wrong JSON type (null included) or malformed value
	CodeMissingField               = "missing_field"                // a required member is absent
	CodeUnsupportedProtocolVersion = "unsupported_protocol_version" // protocol_version is a number other than 1
	CodeUnknownCommand             = "unknown_command"              // command names no protocol-1 command
	CodeInvalidID                  = "invalid_id"                   // an ID breaks the rules of CONTRACT §4
	CodeDuplicateRequestID         = "duplicate_request_id"         // request_id already used by this host process
	CodeOutputTooLarge             = "output_too_large"             // an outbound event would exceed 1 MiB
)

// Run error codes: final_result.data.error.code. A run refused before
// acceptance carries one of the validation codes; an accepted run that
// fails carries one of the others or a recovery code below.
const (
	CodeInvalidValue         = "invalid_value"         // run_id, prompt, max_steps, reasoning effort or session_id invalid
	CodePromptTooLarge       = "prompt_too_large"      // prompt over 512 KiB
	CodeDisplayTextInvalid   = "display_text_invalid"  // display_text too large, not UTF-8, or with control characters
	CodeWorkspaceInvalid     = "workspace_invalid"     // workspace relative, missing, not a directory or not openable
	CodeToolsInvalid         = "tools_invalid"         // tools names an unknown tool or one twice
	CodeHistoryInvalid       = "history_invalid"       // a bad history role or content, or history for a session with messages
	CodeModelNotFound        = "model_not_found"       // no catalog entry and no base_url
	CodeCredentialsMissing   = "credentials_missing"   // a catalog route without a key
	CodeRouteInvalid         = "route_invalid"         // inline route fields break the route rules
	CodeHeadersRejected      = "headers_rejected"      // custom_headers too many, too large, forbidden or malformed
	CodeReasoningUnsupported = "reasoning_unsupported" // reasoning on a route without reasoning support
	CodeConfigInvalid        = "config_invalid"        // a settings or models file is malformed
	CodeSessionDirInvalid    = "session_dir_invalid"   // session_dir relative or unusable
	CodeSessionLocked        = "session_locked"        // another run or process holds the session
	CodeSessionCorrupt       = "session_corrupt"       // the session file is invalid before its last line
	CodeSessionWriteFailed   = "session_write_failed"  // appending to the session failed during the run
	CodeMediaInvalid         = "media_invalid"         // a media entry of a bad type, path or format
	CodeMediaTooLarge        = "media_too_large"       // a media file or the media together over their caps
	CodeMediaUnsupported     = "media_unsupported"     // the route does not take the medium or its format
	CodeToolSchemaTooLarge   = "tool_schema_too_large" // (Go API) the tool array is over the agent's budget
	CodeUnsupported          = "unsupported"           // a wire mode this build does not serve
	CodeOutputIncomplete     = "output_incomplete"     // the output hit max_output_tokens
	CodeMaxStepsReached      = "max_steps_reached"     // with status blocked: the step limit came first
	CodeInternalError        = "internal_error"        // a broken invariant or a panic inside the run
	CodeCanceled             = "canceled"              // the run, or a tool call, was canceled
	CodeOutputFailed         = "output_failed"         // session records only: writing the run's events to the client failed
	CodeProviderError        = "provider_error"        // any other non-retryable provider failure
	CodeRetriesExhausted     = "retries_exhausted"     // a retryable failure with the retry budget spent
	CodeNetworkWaitExceeded  = "network_wait_exceeded" // an outage outlasted the maximum network wait
	CodeRetryAfterTooLong    = "retry_after_too_long"  // the provider asked to wait more than 60 s
	CodeBadRequest           = "bad_request"           // 400, 422, or an invalid-request error event
	CodeAuthFailed           = "auth_failed"           // 401, 403, or an authentication or permission error event
	CodeNotFound             = "not_found"             // 404 from the provider; for a tool, a missing path or old_text
	CodeRequestTooLarge      = "request_too_large"     // 413
	CodeQuotaExhausted       = "quota_exhausted"       // insufficient_quota and kin, 402
	CodeContextOverflow      = "context_overflow"      // context_length_exceeded and kin
	// The terminal gate: with status blocked, the gate
	// rejected MaxGateRejections candidates in a row, or stopped the run;
	// with status error, the gate itself failed (fail closed).
	CodeTerminalGateExhausted = "terminal_gate_exhausted"
	CodeTerminalGateStopped   = "terminal_gate_stopped"
	CodeTerminalGateFailed    = "terminal_gate_failed"
	// Native steering: with status blocked, the outcome of
	// a native steering input became unknown during the run, or, before
	// any provider I/O, the session holds such an intent from an earlier
	// run; the application must start a new session.
	CodeUnsettledNativeSteering = "unsettled_native_steering"
)

// Tool error codes: tool_finish.data.error.code, returned to the model too
// (CONTRACT §9, §10). A denied call's tool_finish carries its denial code.
const (
	CodeInvalidArguments     = "invalid_arguments"      // arguments not an object, or a member unknown, duplicated, mistyped, out of range or missing
	CodePathOutsideWorkspace = "path_outside_workspace" // the path leaves the workspace
	CodeSymlinkRefused       = "symlink_refused"        // the path goes through a symbolic link
	CodeIsDirectory          = "is_directory"           // a file was needed, the path is a directory
	CodeNotDirectory         = "not_directory"          // a directory was needed, the path (or a parent) is not one
	CodeNotRegularFile       = "not_regular_file"       // a device, FIFO or socket
	CodeBinaryFile           = "binary_file"            // a NUL byte or invalid UTF-8 in the first 8 KiB
	CodeNotUnique            = "not_unique"             // edit's old_text occurs more than once
	CodeNoChange             = "no_change"              // edit's old_text equals new_text
	CodeFileTooLarge         = "file_too_large"         // edit of a file over its size cap
	CodeProtectedPath        = "protected_path"         // edit or write aimed at an operator configuration directory (the workspace's .octet, ~/.octet), found by identity
	CodeIOError              = "io_error"               // the file system failed in another way, or a command could not start
	CodeCommandFailed        = "command_failed"         // bash: non-zero exit status
	CodeTimedOut             = "timed_out"              // bash: killed by the timeout ladder
	CodeKilled               = "killed"                 // bash: ended by a signal
	CodeWorkerLimit          = "worker_limit"           // delegate: the run already started its 16 workers (Go API only)
	CodeWorkerFailed         = "worker_failed"          // delegate: the worker run could not start or did not complete (Go API only)
)

// Policy denial codes: tool_policy.data.decision.denial_code (CONTRACT §10).
const (
	CodeUnknownTool           = "unknown_tool"            // the tool is not registered
	CodeMutationNotAuthorized = "mutation_not_authorized" // edit or write without allow_file_mutation or an operator setting
	CodeProcessNotEnabled     = "process_not_enabled"     // bash without allow_process and allow_shell
	CodeShellUnavailable      = "shell_unavailable"       // bash enabled, but no shell was found
	CodeNetworkNotEnabled     = "network_not_enabled"     // a network effect without allow_remote_read
	CodeUnknownEffect         = "unknown_effect"          // an effect the policy does not know
	CodeConfirmationRequired  = "confirmation_required"   // an effect that needs a confirmation the headless host never gives
	CodeDelegationNotEnabled  = "delegation_not_enabled"  // delegate (starting worker runs) without a delegation manager, which only the Go API's Ultra mode installs
	// The workspace gates deny with the tool error code of the same
	// refusal: CodePathOutsideWorkspace, CodeSymlinkRefused and
	// CodeProtectedPath (decided after the effect policy, before the
	// allowed decision is announced).
)

// Compaction error codes: compaction_finish.data.error.code. A refused or
// failed compaction writes no checkpoint.
const (
	CodeCompactionHandoffEmpty    = "compaction_handoff_empty"     // the summary is empty or whitespace only (evidence alone is refused too)
	CodeCompactionHandoffTooLarge = "compaction_handoff_too_large" // the handoff, evidence included, is over 131072 bytes of UTF-8
	CodeCompactionFailed          = "compaction_failed"            // the summarizer call failed (its recovery gave up) or the checkpoint could not be written
)

// Discovery issue codes: models.data.discovery[].code (CONTRACT §7). A
// malformed ~/.octet/models.json is reported as config_invalid.
const (
	CodeDiscoveryFailed    = "discovery_failed"    // the endpoint failed: connection, status, body too large
	CodeDiscoveryTimeout   = "discovery_timeout"   // no answer within the timeout
	CodeDiscoveryInvalid   = "discovery_invalid"   // the answer is not a model list
	CodeDiscoveryTruncated = "discovery_truncated" // the endpoint listed more models than are kept; the first ones are listed
)

// Extension notification codes: extension_notification.data.code (CONTRACT
// §18). Discovery reports findings; the host never starts an extension.
const (
	CodeNotStarted            = "not_started"             // info: a valid extension, found and not started (this host starts none)
	CodeManifestInvalid       = "manifest_invalid"        // error: extension.json missing, unreadable, a link, or breaking a rule
	CodeAPIVersionUnsupported = "api_version_unsupported" // warning: a well-formed api_version of another major or minor than 0.3
	CodeShadowed              = "shadowed"                // info: a later layer's extension of the same name wins
	CodeTruncated             = "truncated"               // warning: more findings than a run reports (64); the rest are counted
)

var (
	protocolCodes = []string{
		CodeInvalidJSON, CodeInvalidUTF8, CodeFrameTooLarge, CodeNotAnObject, CodeUnknownField,
		CodeDuplicateField, CodeInvalidField, CodeMissingField, CodeUnsupportedProtocolVersion,
		CodeUnknownCommand, CodeInvalidID, CodeDuplicateRequestID, CodeOutputTooLarge,
	}
	runCodes = []string{
		CodeInvalidValue, CodePromptTooLarge, CodeDisplayTextInvalid, CodeWorkspaceInvalid, CodeToolsInvalid,
		CodeHistoryInvalid, CodeModelNotFound, CodeCredentialsMissing, CodeRouteInvalid, CodeHeadersRejected,
		CodeReasoningUnsupported, CodeConfigInvalid, CodeSessionDirInvalid, CodeSessionLocked, CodeSessionCorrupt,
		CodeSessionWriteFailed, CodeMediaInvalid, CodeMediaTooLarge, CodeMediaUnsupported, CodeToolSchemaTooLarge,
		CodeUnsupported, CodeRetriesExhausted, CodeNetworkWaitExceeded, CodeRetryAfterTooLong, CodeBadRequest,
		CodeAuthFailed, CodeNotFound, CodeRequestTooLarge, CodeQuotaExhausted, CodeContextOverflow,
		CodeProviderError, CodeOutputIncomplete, CodeMaxStepsReached, CodeCanceled, CodeInternalError, CodeOutputFailed,
		CodeTerminalGateExhausted, CodeTerminalGateStopped, CodeTerminalGateFailed, CodeUnsettledNativeSteering,
	}
	toolCodes = []string{
		CodeInvalidArguments, CodeUnknownTool, CodeMutationNotAuthorized, CodeProcessNotEnabled,
		CodeShellUnavailable, CodeNetworkNotEnabled, CodeUnknownEffect, CodeConfirmationRequired, CodeDelegationNotEnabled,
		CodePathOutsideWorkspace, CodeSymlinkRefused, CodeNotFound, CodeIsDirectory, CodeNotDirectory,
		CodeNotRegularFile, CodeBinaryFile, CodeFileTooLarge, CodeNotUnique, CodeNoChange, CodeProtectedPath, CodeIOError,
		CodeCanceled, CodeCommandFailed, CodeTimedOut, CodeKilled, CodeWorkerLimit, CodeWorkerFailed,
	}
	denialCodes = []string{
		CodeUnknownTool, CodeMutationNotAuthorized, CodeProcessNotEnabled, CodeShellUnavailable,
		CodeNetworkNotEnabled, CodeUnknownEffect, CodeConfirmationRequired, CodeDelegationNotEnabled,
		CodePathOutsideWorkspace, CodeSymlinkRefused, CodeProtectedPath,
	}
	compactionCodes = []string{CodeCompactionHandoffEmpty, CodeCompactionHandoffTooLarge, CodeCompactionFailed}
	discoveryCodes  = []string{CodeDiscoveryFailed, CodeDiscoveryTimeout, CodeDiscoveryInvalid, CodeDiscoveryTruncated, CodeConfigInvalid}
	extensionCodes  = []string{CodeNotStarted, CodeManifestInvalid, CodeAPIVersionUnsupported, CodeShadowed, CodeTruncated}
)

// ProtocolCodes returns the codes of protocol_error.data.code.
func ProtocolCodes() []string { return slices.Clone(protocolCodes) }

// RunCodes returns the codes of final_result.data.error.code.
func RunCodes() []string { return slices.Clone(runCodes) }

// ToolCodes returns the codes of tool_finish.data.error.code: the tools'
// own, bash's, and the policy denials (a denied call finishes with its
// denial code).
func ToolCodes() []string { return slices.Clone(toolCodes) }

// DenialCodes returns the codes of tool_policy.data.decision.denial_code.
func DenialCodes() []string { return slices.Clone(denialCodes) }

// CompactionCodes returns the codes of compaction_finish.data.error.code.
func CompactionCodes() []string { return slices.Clone(compactionCodes) }

// DiscoveryCodes returns the codes of models.data.discovery[].code.
func DiscoveryCodes() []string { return slices.Clone(discoveryCodes) }

// ExtensionCodes returns the codes of extension_notification.data.code.
func ExtensionCodes() []string { return slices.Clone(extensionCodes) }
