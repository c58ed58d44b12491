package recovery

import (
	"strconv"
	"strings"

	"octet.dev/host/protocol"
)

// FailKind classifies a provider failure by how it happened. The values
// equal runtime/internal/provider.FailKind's; fsm does not import runtime,
// so the runtime maps provider.Error to Facts field by field.
type FailKind string

// Failure kinds.
const (
	FailConnect     FailKind = "connect"      // no answer: dial, DNS, refused, unreachable (RequestWritten says whether bytes left)
	FailHTTPStatus  FailKind = "http_status"  // the server answered with a non-2xx status
	FailStreamCut   FailKind = "stream_cut"   // the body ended or broke before the stream's terminal event
	FailIdleTimeout FailKind = "idle_timeout" // no frame within the idle timeout
	FailErrorEvent  FailKind = "error_event"  // the stream carried an error event before its terminal event
	FailDecode      FailKind = "decode"       // the stream was not valid for its wire format
	FailCanceled    FailKind = "canceled"     // the attempt's context was canceled
)

// Facts are what the provider edge collected about one failed attempt
// (DESIGN §2): provider.Error, field by field, with durations in
// milliseconds.
type Facts struct {
	Kind FailKind
	// Status is the HTTP status, 0 when none was received.
	Status int
	// Code is the provider's error code or type when it sent one
	// ("insufficient_quota", "overloaded_error", "context_length_exceeded").
	Code string
	// Message is the sanitized, bounded description; it becomes the error
	// of provider_retry / provider_waiting_for_network and the message of
	// Fail. It never contains a credential (the edge sanitizes it).
	Message string
	// RequestWritten reports whether any request byte may have reached the
	// provider (net/http/httptrace; never guessed from error strings).
	RequestWritten bool
	// ContentStarted reports whether any stream content was decoded.
	ContentStarted bool
	// RetryAfterMS is the server's requested delay in milliseconds
	// (retry-after-ms, then Retry-After as seconds or an HTTP date, already
	// parsed by the edge); 0 or less means none was given.
	RetryAfterMS int64
}

// ClassKind is what recovery does about a failure.
type ClassKind string

// Classes.
const (
	// NetworkWait: a positively identified outage before any request byte
	// was written; wait and try again, without consuming the retry budget.
	NetworkWait ClassKind = "network_wait"
	// Retry: the request may have reached the provider and failed in a way
	// a replacement may fix; retry within the finite budget.
	Retry ClassKind = "retry"
	// Fatal: trying again cannot help (or must not be tried); the turn
	// fails with Class.Code.
	Fatal ClassKind = "fatal"
)

// Class is the outcome of Classify: what to do, and for Fatal the stable
// error code the turn fails with.
type Class struct {
	Kind ClassKind
	Code protocol.Code // set for Fatal only
}

// Error codes of a failed turn (final_result.error.code): the protocol's
// run codes (package protocol), named here for this package.
const (
	// Fatal classes (Classify).
	CodeAuthFailed      = protocol.CodeAuthFailed      // 401, 403, or an authentication/permission error event
	CodeBadRequest      = protocol.CodeBadRequest      // 400, 422, or an invalid-request error event
	CodeNotFound        = protocol.CodeNotFound        // 404 (unknown model or endpoint)
	CodeRequestTooLarge = protocol.CodeRequestTooLarge // 413
	CodeQuotaExhausted  = protocol.CodeQuotaExhausted  // insufficient_quota and kin, 402
	CodeContextOverflow = protocol.CodeContextOverflow // context_length_exceeded and kin
	CodeProviderError   = protocol.CodeProviderError   // any other non-retryable failure (other statuses, a stream that is not its wire format)
	CodeCanceled        = protocol.CodeCanceled        // the attempt or the turn was canceled

	// Outcomes of the machine.
	CodeRetriesExhausted    = protocol.CodeRetriesExhausted    // a retryable failure with the budget spent
	CodeNetworkWaitExceeded = protocol.CodeNetworkWaitExceeded // an outage outlasted MaxNetworkWaitMS (or waiting is disabled)
	CodeRetryAfterTooLong   = protocol.CodeRetryAfterTooLong   // the server asked for a delay above Policy.RetryAfterCeilingMS
)

// Provider error codes and types (sent as "code", else "type") that decide
// the class whatever the HTTP status. Compared in lower case.
var (
	// quotaCodes: the account is out of credit or quota; a 429 with one of
	// these is not a rate limit and retrying cannot help (GitHub Copilot
	// answers its plan's limits with free_quota_exceeded and
	// overage_limit_reached).
	quotaCodes = []string{"insufficient_quota", "quota_exceeded", "billing_hard_limit_reached", "billing_not_active",
		"free_quota_exceeded", "overage_limit_reached"}
	// contextCodes: the conversation does not fit the model's window.
	contextCodes = []string{"context_length_exceeded", "context_window_exceeded", "model_context_window_exceeded", "prompt_too_long"}
)

// Error-event codes (stream errors after a 200) that are fatal; every other
// error event, including an unknown or empty code ("overloaded_error",
// "api_error", "server_error", "rate_limit_exceeded", ...), is retried.
var eventFatal = map[string]protocol.Code{
	"invalid_api_key":       CodeAuthFailed,
	"authentication_error":  CodeAuthFailed,
	"permission_error":      CodeAuthFailed,
	"invalid_request_error": CodeBadRequest,
	"invalid_prompt":        CodeBadRequest,
	"not_found_error":       CodeNotFound,
	"model_not_found":       CodeNotFound,
	"request_too_large":     CodeRequestTooLarge,
}

// contextMessages are phrases of the providers' context-overflow messages
// that come without a distinguishing code: Anthropic answers 400
// invalid_request_error "prompt is too long: …", OpenAI "This model's
// maximum context length is N tokens", llama.cpp "the request exceeds the
// available context size", LM Studio "… is greater than the context
// length", vLLM and other gateways "too many tokens", "input token count
// … exceeds the maximum", "reduce the length of the messages". They only
// refine the code of a failure that is already fatal (bad_request,
// request_too_large, provider_error) into context_overflow; they never
// change the class.
var contextMessages = []string{
	"prompt is too long", "maximum context length", "context window", "input is too long for requested model",
	"exceeds the available context size", "greater than the context length", "context length exceeded",
	"context_length_exceeded", "maximum prompt length", "reduce the length of the messages", "too many tokens",
	"token limit exceeded", "exceeded model token limit", "context size has been exceeded",
	"input token count", "exceeds the maximum number of tokens",
}

// Classify maps the facts of one failed attempt to what recovery does
// (CONTRACT §12). It is a total, pure function:
//
//   - FailCanceled → Fatal canceled.
//   - FailConnect with no request byte written → NetworkWait. With bytes
//     written it is treated like a cut: Retry.
//   - A quota code (insufficient_quota, …) → Fatal quota_exhausted, and a
//     context code (context_length_exceeded, …) → Fatal context_overflow,
//     whatever the status or kind.
//   - FailHTTPStatus by status: 408, 409, 425, 429, 500–599 (529 included)
//     → Retry; 400, 422 → bad_request; 401, 403 → auth_failed; 402 →
//     quota_exhausted; 404 → not_found; 413 → request_too_large; anything
//     else (another 4xx, a non-error or missing status) → provider_error.
//   - FailErrorEvent: a fatal event code (see eventFatal) → Fatal with that
//     code; an error status (≥ 400) carried with it → as for
//     FailHTTPStatus; else Retry (overloaded, server errors, unknown).
//   - FailStreamCut, FailIdleTimeout → Retry.
//   - FailDecode → Fatal provider_error: the stream is not the wire
//     format, and a replacement would almost surely fail the same way.
//   - An unknown kind → Fatal provider_error.
//
// A fatal bad_request, request_too_large or provider_error (an
// unclassified status) whose message reads like a context overflow
// ("prompt is too long", …) is context_overflow. A bare 413 stays
// request_too_large; the runtime treats it as an overflow signal too.
func Classify(f Facts) Class {
	code := strings.ToLower(strings.TrimSpace(f.Code))
	switch f.Kind {
	case FailCanceled:
		return fatal(CodeCanceled)
	case FailConnect:
		if !f.RequestWritten {
			return Class{Kind: NetworkWait}
		}
		return Class{Kind: Retry}
	}
	switch {
	case contains(quotaCodes, code):
		return fatal(CodeQuotaExhausted)
	case contains(contextCodes, code):
		return fatal(CodeContextOverflow)
	}
	switch f.Kind {
	case FailHTTPStatus:
		return refine(byStatus(f.Status), f.Message)
	case FailErrorEvent:
		if c, ok := eventFatal[code]; ok {
			return refine(fatal(c), f.Message)
		}
		if f.Status >= 400 {
			return refine(byStatus(f.Status), f.Message)
		}
		return Class{Kind: Retry}
	case FailStreamCut, FailIdleTimeout:
		return Class{Kind: Retry}
	}
	return fatal(CodeProviderError) // FailDecode, unknown kinds
}

func fatal(code protocol.Code) Class { return Class{Kind: Fatal, Code: code} }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// byStatus classifies an HTTP error status.
func byStatus(status int) Class {
	switch {
	case status == 408, status == 409, status == 425, status == 429:
		return Class{Kind: Retry}
	case status >= 500 && status <= 599:
		return Class{Kind: Retry}
	case status == 400, status == 422:
		return fatal(CodeBadRequest)
	case status == 401, status == 403:
		return fatal(CodeAuthFailed)
	case status == 402:
		return fatal(CodeQuotaExhausted)
	case status == 404:
		return fatal(CodeNotFound)
	case status == 413:
		return fatal(CodeRequestTooLarge)
	}
	return fatal(CodeProviderError)
}

// refine turns a fatal bad_request, request_too_large or provider_error
// whose message reads like a context overflow into context_overflow.
func refine(c Class, msg string) Class {
	if c.Kind != Fatal || (c.Code != CodeBadRequest && c.Code != CodeRequestTooLarge && c.Code != CodeProviderError) {
		return c
	}
	lower := strings.ToLower(msg)
	for _, p := range contextMessages {
		if strings.Contains(lower, p) {
			return fatal(CodeContextOverflow)
		}
	}
	return c
}

// UsageUncertain reports whether a failed attempt may have been billed
// while its usage is unknown (CONTRACT §12), so that the usage_uncertainty
// record must be persisted before the attempt is replaced or abandoned.
// The rule, conservative where the facts cannot tell:
//
//	RequestWritten && (ContentStarted
//	                   || Kind ∈ {stream_cut, idle_timeout, canceled, connect}
//	                   || (Kind = http_status && Status ∈ 500–599 \ {503, 529})
//	                   || Kind ∉ {http_status, error_event, decode})
//
// That is: nothing written, nothing billed. Content decoded means the model
// ran. A cut, a stall or a cancel after the request left means the
// provider may have run the model and we never saw the final usage. A 5xx
// other than 503 (unavailable) and 529 (overloaded) may come after the
// model ran (a gateway timeout, a crash mid-generation). Statuses the
// providers reject before running the model (4xx, 429, 503, 529) and error
// events or undecodable answers before any content are not billed. An
// unknown kind with bytes written is uncertain.
//
// The flag this sets is sticky: the machine never clears State.Uncertain,
// and the session's record outlives the run.
func UsageUncertain(f Facts) bool {
	if !f.RequestWritten {
		return false
	}
	if f.ContentStarted {
		return true
	}
	switch f.Kind {
	case FailHTTPStatus:
		return f.Status >= 500 && f.Status <= 599 && f.Status != 503 && f.Status != 529
	case FailErrorEvent, FailDecode:
		return false
	}
	return true // stream_cut, idle_timeout, canceled, connect with bytes written, unknown kinds
}

// describe is the error text of a failure: the edge's message, or a short
// description of the facts when it sent none.
func describe(f Facts) string {
	if f.Message != "" {
		if f.Kind == FailHTTPStatus && f.Status != 0 {
			// The status says which failure it was; the body's message
			// alone ("The server is overloaded") often does not.
			return "HTTP " + strconv.Itoa(f.Status) + ": " + f.Message
		}
		return f.Message
	}
	switch {
	case f.Kind == FailHTTPStatus && f.Status != 0:
		s := "HTTP " + strconv.Itoa(f.Status)
		if f.Code != "" {
			s += " " + f.Code
		}
		return s
	case f.Status != 0:
		s := "provider: " + string(f.Kind) + " " + strconv.Itoa(f.Status)
		if f.Code != "" {
			s += " " + f.Code
		}
		return s
	case f.Code != "":
		return "provider: " + string(f.Kind) + " " + f.Code
	case f.Kind == "":
		return "provider: failure"
	}
	return "provider: " + string(f.Kind)
}
