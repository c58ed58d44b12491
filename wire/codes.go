package wire

// Code is a stable snake_case error code carried by protocol_error events
// and by final_result errors. Codes are part of the contract (CONTRACT §5)
// and documented in the README; never rename one.
type Code string

// Protocol error codes (protocol_error.data.code), CONTRACT §3–§5.
const (
	CodeInvalidJSON                = Code("invalid_json")                 // not valid JSON, trailing data, empty line
	CodeInvalidUTF8                = Code("invalid_utf8")                 // the line is not valid UTF-8
	CodeFrameTooLarge              = Code("frame_too_large")              // the line exceeds 1 MiB including the newline
	CodeNotAnObject                = Code("not_an_object")                // the JSON value is not an object
	CodeUnknownField               = Code("unknown_field")                // a member the command does not define (case differs too)
	CodeDuplicateField             = Code("duplicate_field")              // the same member name twice
	CodeInvalidField               = Code("invalid_field")                // wrong JSON type (null included) or malformed value
	CodeMissingField               = Code("missing_field")                // a required member is absent
	CodeUnsupportedProtocolVersion = Code("unsupported_protocol_version") // protocol_version is a number other than 1
	CodeUnknownCommand             = Code("unknown_command")              // command names no protocol-1 command
	CodeInvalidID                  = Code("invalid_id")                   // an ID breaks the rules of CONTRACT §4
	CodeDuplicateRequestID         = Code("duplicate_request_id")         // request_id already used by this host process
	CodeOutputTooLarge             = Code("output_too_large")             // an outbound event would exceed 1 MiB
)

// Run error codes (final_result.data.error.code), CONTRACT §8–§14.
const (
	CodeUnsupported         = Code("unsupported")          // the command is recognised but this build cannot do it
	CodeInternal            = Code("internal_error")       // a broken invariant inside the host
	CodePromptTooLarge      = Code("prompt_too_large")     // prompt over 512 KiB
	CodeDisplayTextInvalid  = Code("display_text_invalid") // display_text over 256 KiB or with control characters
	CodeWorkspaceInvalid    = Code("workspace_invalid")    // workspace missing, relative or not a directory
	CodeModelNotFound       = Code("model_not_found")      // no catalog entry and no inline route
	CodeCredentialsMissing  = Code("credentials_missing")  // the route needs a key that is not configured
	CodeRouteInvalid        = Code("route_invalid")        // inline route fields break the rules of CONTRACT §8
	CodeHeadersRejected     = Code("headers_rejected")     // custom headers over the caps or forbidden
	CodeToolsInvalid        = Code("tools_invalid")        // tools names an unknown tool or repeats one
	CodeMediaInvalid        = Code("media_invalid")        // media rules of CONTRACT §16
	CodeHistoryInvalid      = Code("history_invalid")      // history entries malformed
	CodeSessionLocked       = Code("session_locked")       // another process holds the session
	CodeSessionCorrupt      = Code("session_corrupt")      // the session file is invalid before its tail
	CodeSessionDirInvalid   = Code("session_dir_invalid")  // session_dir unusable
	CodeInvalidValue        = Code("invalid_value")        // a numeric or enumerated value out of range
	CodeReasoningUnsupport  = Code("reasoning_unsupported")
	CodeMaxStepsReached     = Code("max_steps_reached")
	CodeProviderError       = Code("provider_error")
	CodeRetriesExhausted    = Code("retries_exhausted")
	CodeNetworkWaitExceeded = Code("network_wait_exceeded")
	CodeCanceled            = Code("canceled")
)

// Discovery issue codes (models.data.discovery[].code): a configured
// endpoint's live listing failed; the command still answers (CONTRACT §7).
const (
	CodeDiscoveryFailed  = Code("discovery_failed")  // refused, HTTP error
	CodeDiscoveryTimeout = Code("discovery_timeout") // no answer within 2 s
	CodeDiscoveryInvalid = Code("discovery_invalid") // not a model list
	CodeConfigInvalid    = Code("config_invalid")    // ~/.octet/models.json or settings malformed
)
