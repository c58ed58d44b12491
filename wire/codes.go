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

// CodeInternal is the final_result error of a run whose failure carries no
// code of its own (a broken invariant). The run codes themselves are owned
// by the runtime (runtime.Code*, fsm/recovery's outcome codes, the tools'
// codes, discovery's issue codes), which the host passes through unchanged
// and the README documents; they are not repeated here, so they cannot
// drift.
const CodeInternal = Code("internal_error")
