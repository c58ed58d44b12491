package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// apiError is an error answer in a provider's own envelope.
type apiError struct {
	status int
	typ    string // OpenAI error.type / Anthropic error.type
	code   string // OpenAI error.code; empty means null
	param  string // OpenAI error.param; empty means null
	msg    string
}

// anthropicRequestTooLarge is Anthropic's error.type for a 413: the
// provider's wire vocabulary, not a protocol code (the host maps it to
// one).
const anthropicRequestTooLarge = "request_too_large"

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// body returns the envelope for mode: Anthropic's
// {"type":"error","error":{"type","message"},"request_id"} or OpenAI's
// {"error":{"message","type","param","code"}} (also used for requests that
// match no mode).
func (e apiError) body(mode Mode, requestID string) []byte {
	if mode == ModeAnthropic {
		return encode(obj{
			"type", "error",
			"error", obj{"type", e.typ, "message", e.msg},
			"request_id", requestID,
		})
	}
	return encode(obj{"error", obj{
		"message", e.msg, "type", e.typ, "param", nullable(e.param), "code", nullable(e.code),
	}})
}

// write sends e as the answer.
func (e apiError) write(w http.ResponseWriter, mode Mode, requestID string) {
	setRequestID(w.Header(), mode, requestID)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body(mode, requestID))
}

// setRequestID sets the provider's request id header.
func setRequestID(h http.Header, mode Mode, id string) {
	if mode == ModeAnthropic {
		h.Set("Request-Id", id)
	} else {
		h.Set("X-Request-Id", id)
	}
}

// invalidRequest is the 400 for a request the fake cannot serve.
func invalidRequest(param, msg string) apiError {
	return apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, msg: msg}
}

// statusError is the error for an injected FaultStatus code, shaped the
// way each provider answers it.
func statusError(mode Mode, code int) apiError {
	e := apiError{status: code}
	if mode == ModeAnthropic {
		switch code {
		case 400:
			e.typ, e.msg = "invalid_request_error", "Invalid request"
		case 401:
			e.typ, e.msg = "authentication_error", "invalid x-api-key"
		case 402:
			e.typ, e.msg = "billing_error", "Your credit balance is too low"
		case 403:
			e.typ, e.msg = "permission_error", "Your API key does not have permission to use the specified resource."
		case 404:
			e.typ, e.msg = "not_found_error", "Not found"
		case 413:
			e.typ, e.msg = anthropicRequestTooLarge, "Request exceeds the maximum allowed number of bytes."
		case 429:
			e.typ, e.msg = "rate_limit_error", "This request would exceed the rate limit for your organization. Please try again later."
		case 504:
			e.typ, e.msg = "timeout_error", "Request timed out"
		case 529:
			e.typ, e.msg = "overloaded_error", "Overloaded"
		default:
			if code < 500 {
				e.typ, e.msg = "invalid_request_error", http.StatusText(code)
			} else {
				e.typ, e.msg = "api_error", "Internal server error"
			}
		}
		return e
	}
	switch {
	case code == 401:
		e.typ, e.code, e.msg = "invalid_request_error", "invalid_api_key", "Incorrect API key provided."
	case code == 429:
		e.typ, e.code, e.msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."
	case code == 503:
		e.typ, e.msg = "server_error", "The server is overloaded or not ready yet."
	case code >= 500:
		e.typ, e.msg = "server_error", "The server had an error while processing your request. Sorry about that!"
	default:
		e.typ, e.msg = "invalid_request_error", http.StatusText(code)
	}
	if e.msg == "" {
		e.msg = "HTTP " + strconv.Itoa(code)
	}
	return e
}

// streamErrorMessage is the message sent with an in-stream error of type
// typ when FaultErrorEvent.Message is empty.
func streamErrorMessage(typ string) string {
	switch typ {
	case "overloaded_error":
		return "Overloaded"
	case "api_error":
		return "Internal server error"
	case "rate_limit_error", "rate_limit_exceeded":
		return "Rate limit reached. Please try again later."
	case "server_error":
		return "The server had an error while processing your request. Sorry about that!"
	case "insufficient_quota":
		return "You exceeded your current quota, please check your plan and billing details."
	}
	return fmt.Sprintf("fakeprovider: injected %s", typ)
}

// errorEvents returns the in-stream error of f in mode's format. seq is the
// Responses sequence number of the first event and respID the response id.
func errorEvents(mode Mode, f FaultErrorEvent, seq int, respID, requestID string) [][]byte {
	typ := f.Type
	if typ == "" {
		if mode == ModeAnthropic {
			typ = "overloaded_error"
		} else {
			typ = "server_error"
		}
	}
	msg := f.Message
	if msg == "" {
		msg = streamErrorMessage(typ)
	}
	switch mode {
	case ModeAnthropic:
		return [][]byte{namedEvent("error", encode(obj{
			"type", "error", "error", obj{"type", typ, "message", msg}, "request_id", requestID,
		}))}
	case ModeResponses:
		return [][]byte{
			namedEvent("error", encode(obj{
				"type", "error", "sequence_number", seq,
				"error", obj{"type", typ, "code", typ, "message", msg, "param", nil},
			})),
			namedEvent("response.failed", encode(obj{
				"type", "response.failed", "sequence_number", seq + 1,
				"response", obj{
					"id", respID, "object", "response", "status", "failed",
					"error", obj{"code", typ, "message", msg},
					"incomplete_details", nil, "output", arr{}, "usage", nil,
				},
			})),
		}
	default:
		var code any = typ
		if typ == "server_error" {
			code = nil // OpenAI sends server errors with a null code
		}
		return [][]byte{dataEvent(encode(obj{"error", obj{
			"message", msg, "type", typ, "param", nil, "code", code,
		}}))}
	}
}

// isJSON reports whether s is one valid JSON value.
func isJSON(s string) bool { return json.Valid([]byte(s)) }
