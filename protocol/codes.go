package protocol

import "slices"

// Code is a stable error code: a snake_case string (CONTRACT §5). The closed
// set is the Code constants below; it marshals as its string.
type Code string

// Error codes are stable snake_case strings (CONTRACT §5). Each constant's
// name is Code followed by the CamelCase of its value; a code shared by
// several places (canceled, not_found, …) is defined once and listed in
// each place's table below. docs/protocol.md documents every code in the table
// of each place it appears (protocol_test.go checks both rules).

// Protocol error codes: protocol_error.data.code (CONTRACT §3–§5).
const (
	CodeInvalidJSON                Code = "invalid_json"                 // not valid JSON, trailing data, empty line
	CodeInvalidUTF8                Code = "invalid_utf8"                 // the line is not valid UTF-8
	CodeFrameTooLarge              Code = "frame_too_large"              // the line exceeds 1 MiB including the newline
	CodeNotAnObject                Code = "not_an_object"                // the JSON value is not an object
	CodeUnknownField               Code = "unknown_field"                // a member the command does not define (case differs too)
	CodeDuplicateField             Code = "duplicate_field"              // the same member name twice
	CodeInvalidField               Code = "invalid_field"                // wrong JSON type (null included) or malformed value
	CodeMissingField               Code = "missing_field"                // a required member is absent
	CodeUnsupportedProtocolVersion Code = "unsupported_protocol_version" // protocol_version is a number other than 1
	CodeUnknownCommand             Code = "unknown_command"              // command names no protocol-1 command
	CodeInvalidID                  Code = "invalid_id"                   // an ID breaks the rules of CONTRACT §4
	CodeDuplicateRequestID         Code = "duplicate_request_id"         // request_id already used by this host process
	CodeOutputTooLarge             Code = "output_too_large"             // an outbound event would exceed 1 MiB
)

// Run error codes: final_result.data.error.code. A run refused before
// acceptance carries one of the validation codes; an accepted run that
// fails carries one of the others or a recovery code below.
const (
	CodeInvalidValue         Code = "invalid_value"         // run_id, prompt, max_steps, reasoning effort or session_id invalid
	CodePromptTooLarge       Code = "prompt_too_large"      // prompt over 512 KiB
	CodeDisplayTextInvalid   Code = "display_text_invalid"  // display_text too large, not UTF-8, or with control characters
	CodeWorkspaceInvalid     Code = "workspace_invalid"     // workspace relative, missing, not a directory or not openable
	CodeToolsInvalid         Code = "tools_invalid"         // tools names an unknown tool or one twice
	CodeHistoryInvalid       Code = "history_invalid"       // a bad history role or content, or history for a session with messages
	CodeModelNotFound        Code = "model_not_found"       // no catalog entry and no base_url
	CodeCredentialsMissing   Code = "credentials_missing"   // a catalog route without a key
	CodeRouteInvalid         Code = "route_invalid"         // inline route fields break the route rules
	CodeHeadersRejected      Code = "headers_rejected"      // custom_headers too many, too large, forbidden or malformed
	CodeReasoningUnsupported Code = "reasoning_unsupported" // reasoning on a route without reasoning support
	CodeConfigInvalid        Code = "config_invalid"        // a settings or models file is malformed
	CodeSessionDirInvalid    Code = "session_dir_invalid"   // session_dir relative or unusable
	CodeSessionLocked        Code = "session_locked"        // another run or process holds the session
	CodeSessionCorrupt       Code = "session_corrupt"       // the session file is invalid before its last line
	CodeSessionWriteFailed   Code = "session_write_failed"  // appending to the session failed during the run
	CodeMediaInvalid         Code = "media_invalid"         // a media entry of a bad type, path or format
	CodeMediaTooLarge        Code = "media_too_large"       // a media file or the media together over their caps
	CodeMediaUnsupported     Code = "media_unsupported"     // the route does not take the medium or its format
	CodeToolSchemaTooLarge   Code = "tool_schema_too_large" // (Go API) the tool array is over the agent's budget
	CodeUnsupported          Code = "unsupported"           // a wire mode this build does not serve
	CodeOutputIncomplete     Code = "output_incomplete"     // the output hit max_output_tokens
	CodeMaxStepsReached      Code = "max_steps_reached"     // with status blocked: the step limit came first
	CodeInternalError        Code = "internal_error"        // a broken invariant or a panic inside the run
	CodeCanceled             Code = "canceled"              // the run, or a tool call, was canceled
	CodeOutputFailed         Code = "output_failed"         // session records only: writing the run's events to the client failed
	CodeProviderError        Code = "provider_error"        // any other non-retryable provider failure
	CodeRetriesExhausted     Code = "retries_exhausted"     // a retryable failure with the retry budget spent
	CodeNetworkWaitExceeded  Code = "network_wait_exceeded" // an outage outlasted the maximum network wait
	CodeRetryAfterTooLong    Code = "retry_after_too_long"  // the provider asked to wait more than 60 s
	CodeBadRequest           Code = "bad_request"           // 400, 422, or an invalid-request error event
	CodeAuthFailed           Code = "auth_failed"           // 401, 403, or an authentication or permission error event
	CodeNotFound             Code = "not_found"             // 404 from the provider; for a tool, a missing path or old_text
	CodeRequestTooLarge      Code = "request_too_large"     // 413
	CodeQuotaExhausted       Code = "quota_exhausted"       // insufficient_quota and kin, 402
	CodeContextOverflow      Code = "context_overflow"      // context_length_exceeded and kin
	// The terminal gate: with status blocked, the gate
	// rejected MaxGateRejections candidates in a row, or stopped the run;
	// with status error, the gate itself failed (fail closed).
	CodeTerminalGateExhausted Code = "terminal_gate_exhausted"
	CodeTerminalGateStopped   Code = "terminal_gate_stopped"
	CodeTerminalGateFailed    Code = "terminal_gate_failed"
	// Native steering: with status blocked, the outcome of
	// a native steering input became unknown during the run, or, before
	// any provider I/O, the session holds such an intent from an earlier
	// run; the application must start a new session.
	CodeUnsettledNativeSteering Code = "unsettled_native_steering"
)

// Tool error codes: tool_finish.data.error.code, returned to the model too
// (CONTRACT §9, §10). A denied call's tool_finish carries its denial code.
const (
	CodeInvalidArguments     Code = "invalid_arguments"      // arguments not an object, or a member unknown, duplicated, mistyped, out of range or missing
	CodePathOutsideWorkspace Code = "path_outside_workspace" // the path leaves the workspace
	CodeSymlinkRefused       Code = "symlink_refused"        // the path goes through a symbolic link
	CodeIsDirectory          Code = "is_directory"           // a file was needed, the path is a directory
	CodeNotDirectory         Code = "not_directory"          // a directory was needed, the path (or a parent) is not one
	CodeNotRegularFile       Code = "not_regular_file"       // a device, FIFO or socket
	CodeBinaryFile           Code = "binary_file"            // a NUL byte or invalid UTF-8 in the first 8 KiB
	CodeNotUnique            Code = "not_unique"             // edit's old_text occurs more than once
	CodeNoChange             Code = "no_change"              // edit's old_text equals new_text
	CodeFileTooLarge         Code = "file_too_large"         // edit of a file over its size cap
	CodeProtectedPath        Code = "protected_path"         // edit or write aimed at an operator configuration directory (the workspace's .octet, ~/.octet), found by identity
	CodeIOError              Code = "io_error"               // the file system failed in another way, or a command could not start
	CodeCommandFailed        Code = "command_failed"         // bash: non-zero exit status
	CodeTimedOut             Code = "timed_out"              // bash: killed by the timeout ladder
	CodeKilled               Code = "killed"                 // bash: ended by a signal
	CodeWorkerLimit          Code = "worker_limit"           // delegate: the run already started its 16 workers (Go API only)
	CodeWorkerFailed         Code = "worker_failed"          // delegate: the worker run could not start or did not complete (Go API only)
)

// Policy denial codes: tool_policy.data.decision.denial_code (CONTRACT §10).
const (
	CodeUnknownTool           Code = "unknown_tool"            // the tool is not registered
	CodeMutationNotAuthorized Code = "mutation_not_authorized" // edit or write without allow_file_mutation or an operator setting
	CodeProcessNotEnabled     Code = "process_not_enabled"     // bash without allow_process and allow_shell
	CodeShellUnavailable      Code = "shell_unavailable"       // bash enabled, but no shell was found
	CodeNetworkNotEnabled     Code = "network_not_enabled"     // a network effect without allow_remote_read
	CodeUnknownEffect         Code = "unknown_effect"          // an effect the policy does not know
	CodeConfirmationRequired  Code = "confirmation_required"   // an effect that needs a confirmation the headless host never gives
	CodeDelegationNotEnabled  Code = "delegation_not_enabled"  // delegate (starting worker runs) without a delegation manager, which only the Go API's Ultra mode installs
	// The workspace gates deny with the tool error code of the same
	// refusal: CodePathOutsideWorkspace, CodeSymlinkRefused and
	// CodeProtectedPath (decided after the effect policy, before the
	// allowed decision is announced).
)

// Compaction error codes: compaction_finish.data.error.code. A refused or
// failed compaction writes no checkpoint.
const (
	CodeCompactionHandoffEmpty    Code = "compaction_handoff_empty"     // the summary is empty or whitespace only (evidence alone is refused too)
	CodeCompactionHandoffTooLarge Code = "compaction_handoff_too_large" // the handoff, evidence included, is over 131072 bytes of UTF-8
	CodeCompactionFailed          Code = "compaction_failed"            // the summarizer call failed (its recovery gave up) or the checkpoint could not be written
)

// Discovery issue codes: models.data.discovery[].code (CONTRACT §7). A
// malformed ~/.octet/models.json is reported as config_invalid.
const (
	CodeDiscoveryFailed    Code = "discovery_failed"    // the endpoint failed: connection, status, body too large
	CodeDiscoveryTimeout   Code = "discovery_timeout"   // no answer within the timeout
	CodeDiscoveryInvalid   Code = "discovery_invalid"   // the answer is not a model list
	CodeDiscoveryTruncated Code = "discovery_truncated" // the endpoint listed more models than are kept; the first ones are listed
)

// Extension notification codes: extension_notification.data.code (CONTRACT
// §18). Discovery reports findings; the host never starts an extension.
const (
	CodeNotStarted            Code = "not_started"             // info: a valid extension, found and not started (this host starts none)
	CodeManifestInvalid       Code = "manifest_invalid"        // error: extension.json missing, unreadable, a link, or breaking a rule
	CodeAPIVersionUnsupported Code = "api_version_unsupported" // warning: a well-formed api_version of another major or minor than 0.3
	CodeShadowed              Code = "shadowed"                // info: a later layer's extension of the same name wins
	CodeTruncated             Code = "truncated"               // warning: more findings than a run reports (64); the rest are counted
)

var (
	protocolCodes = []Code{
		CodeInvalidJSON, CodeInvalidUTF8, CodeFrameTooLarge, CodeNotAnObject, CodeUnknownField,
		CodeDuplicateField, CodeInvalidField, CodeMissingField, CodeUnsupportedProtocolVersion,
		CodeUnknownCommand, CodeInvalidID, CodeDuplicateRequestID, CodeOutputTooLarge,
	}
	runCodes = []Code{
		CodeInvalidValue, CodePromptTooLarge, CodeDisplayTextInvalid, CodeWorkspaceInvalid, CodeToolsInvalid,
		CodeHistoryInvalid, CodeModelNotFound, CodeCredentialsMissing, CodeRouteInvalid, CodeHeadersRejected,
		CodeReasoningUnsupported, CodeConfigInvalid, CodeSessionDirInvalid, CodeSessionLocked, CodeSessionCorrupt,
		CodeSessionWriteFailed, CodeMediaInvalid, CodeMediaTooLarge, CodeMediaUnsupported, CodeToolSchemaTooLarge,
		CodeUnsupported, CodeRetriesExhausted, CodeNetworkWaitExceeded, CodeRetryAfterTooLong, CodeBadRequest,
		CodeAuthFailed, CodeNotFound, CodeRequestTooLarge, CodeQuotaExhausted, CodeContextOverflow,
		CodeProviderError, CodeOutputIncomplete, CodeMaxStepsReached, CodeCanceled, CodeInternalError, CodeOutputFailed,
		CodeTerminalGateExhausted, CodeTerminalGateStopped, CodeTerminalGateFailed, CodeUnsettledNativeSteering,
	}
	toolCodes = []Code{
		CodeInvalidArguments, CodeUnknownTool, CodeMutationNotAuthorized, CodeProcessNotEnabled,
		CodeShellUnavailable, CodeNetworkNotEnabled, CodeUnknownEffect, CodeConfirmationRequired, CodeDelegationNotEnabled,
		CodePathOutsideWorkspace, CodeSymlinkRefused, CodeNotFound, CodeIsDirectory, CodeNotDirectory,
		CodeNotRegularFile, CodeBinaryFile, CodeFileTooLarge, CodeNotUnique, CodeNoChange, CodeProtectedPath, CodeIOError,
		CodeCanceled, CodeCommandFailed, CodeTimedOut, CodeKilled, CodeWorkerLimit, CodeWorkerFailed,
	}
	denialCodes = []Code{
		CodeUnknownTool, CodeMutationNotAuthorized, CodeProcessNotEnabled, CodeShellUnavailable,
		CodeNetworkNotEnabled, CodeUnknownEffect, CodeConfirmationRequired, CodeDelegationNotEnabled,
		CodePathOutsideWorkspace, CodeSymlinkRefused, CodeProtectedPath,
	}
	compactionCodes = []Code{CodeCompactionHandoffEmpty, CodeCompactionHandoffTooLarge, CodeCompactionFailed}
	discoveryCodes  = []Code{CodeDiscoveryFailed, CodeDiscoveryTimeout, CodeDiscoveryInvalid, CodeDiscoveryTruncated, CodeConfigInvalid}
	extensionCodes  = []Code{CodeNotStarted, CodeManifestInvalid, CodeAPIVersionUnsupported, CodeShadowed, CodeTruncated}
)

// ProtocolCodes returns the codes of protocol_error.data.code.
func ProtocolCodes() []Code { return slices.Clone(protocolCodes) }

// RunCodes returns the codes of final_result.data.error.code.
func RunCodes() []Code { return slices.Clone(runCodes) }

// ToolCodes returns the codes of tool_finish.data.error.code: the tools'
// own, bash's, and the policy denials (a denied call finishes with its
// denial code).
func ToolCodes() []Code { return slices.Clone(toolCodes) }

// DenialCodes returns the codes of tool_policy.data.decision.denial_code.
func DenialCodes() []Code { return slices.Clone(denialCodes) }

// CompactionCodes returns the codes of compaction_finish.data.error.code.
func CompactionCodes() []Code { return slices.Clone(compactionCodes) }

// DiscoveryCodes returns the codes of models.data.discovery[].code.
func DiscoveryCodes() []Code { return slices.Clone(discoveryCodes) }

// ExtensionCodes returns the codes of extension_notification.data.code.
func ExtensionCodes() []Code { return slices.Clone(extensionCodes) }
