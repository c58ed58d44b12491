package fakeprovider

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
)

// SummarizerMarker is the phrase that marks a context-compaction
// summarizer request: the host's summarizer system prompt carries it
// (octet.dev/host/runtime checks that it does). The fake answers such a
// request from Script.Summaries, never from Script.Turns.
const SummarizerMarker = "Do not continue the conversation"

// DefaultSummary is the answer to a summarizer request when
// Script.Summaries has run out: a short summary in the sections the host
// asks for.
const DefaultSummary = "## Goal\nContinue the user's task.\n\n## Constraints & Preferences\n- (none)\n\n" +
	"## Progress\n### Done\n- The earlier conversation, summarized by the fake provider.\n### In Progress\n- (none)\n### Blocked\n- (none)\n\n" +
	"## Key Decisions\n- (none)\n\n## Next Steps\n- Answer the latest request.\n\n## Critical Context\n- (none)"

// isSummarizer reports whether a request body is a summarizer request.
// The marker is plain ASCII without characters JSON escapes, so it
// appears in the body as is.
func isSummarizer(raw []byte) bool { return bytes.Contains(raw, []byte(SummarizerMarker)) }

// nextSummaryLocked returns the next summary turn, taking it when take is
// set (a request without a fault).
func (s *Server) nextSummaryLocked(take bool, raw []byte) Turn {
	if s.summaries < len(s.script.Summaries) {
		t := s.script.Summaries[s.summaries]
		if take {
			s.summaries++
		}
		return t
	}
	return Turn{Text: DefaultSummary}
}

// SummariesLeft returns how many of Script.Summaries have not been served.
func (s *Server) SummariesLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Summaries) - s.summaries
}

// Overflow styles of OverflowFault: the ways servers say that a request
// does not fit the model's context window.
const (
	// OverflowOpenAI: Chat Completions' 400 with code
	// context_length_exceeded, "This model's maximum context length is N
	// tokens…".
	OverflowOpenAI = "openai"
	// OverflowResponses: the Responses API's 400 with code
	// context_length_exceeded, "Your input exceeds the context window of
	// this model…".
	OverflowResponses = "responses"
	// OverflowAnthropic: Messages' 400 invalid_request_error "prompt is
	// too long: N tokens > M maximum".
	OverflowAnthropic = "anthropic"
	// Overflow413: a bare HTTP 413 (a gateway's request-size limit).
	Overflow413 = "413"
	// OverflowLlamaCpp: llama.cpp's 400 exceed_context_size_error, "the
	// request exceeds the available context size, try increasing it".
	OverflowLlamaCpp = "llama.cpp"
	// OverflowLMStudio: LM Studio's 400 "… is greater than the context
	// length …".
	OverflowLMStudio = "lmstudio"
	// OverflowVLLM: vLLM's 400 "This model's maximum context length is N
	// tokens. However, you requested M tokens…" without a code.
	OverflowVLLM = "vllm"
	// OverflowGateway: an OpenAI-compatible gateway's 400 "too many
	// tokens" without a code.
	OverflowGateway = "gateway"
)

// OverflowStyles returns every overflow style.
func OverflowStyles() []string {
	return []string{OverflowOpenAI, OverflowResponses, OverflowAnthropic, Overflow413, OverflowLlamaCpp, OverflowLMStudio, OverflowVLLM, OverflowGateway}
}

// OverflowFault returns the FaultStatus with which a server of the given
// style refuses a request of tokens tokens for a window of window tokens.
// An empty style is mode's own provider (openai, responses or anthropic).
// Inject it with InjectFault to script one overflow; Script.ContextWindow
// plays it for every request that is too large.
func OverflowFault(mode Mode, style string, tokens, window int) FaultStatus {
	if style == "" {
		switch mode {
		case ModeAnthropic:
			style = OverflowAnthropic
		case ModeResponses:
			style = OverflowResponses
		default:
			style = OverflowOpenAI
		}
	}
	n, w := strconv.Itoa(tokens), strconv.Itoa(window)
	e := apiError{status: http.StatusBadRequest, typ: "invalid_request_error"}
	switch style {
	case OverflowResponses:
		e.code, e.param = "context_length_exceeded", "input"
		e.msg = "Your input exceeds the context window of this model. Please adjust your input and try again."
	case OverflowAnthropic:
		e.msg = fmt.Sprintf("prompt is too long: %s tokens > %s maximum", n, w)
	case Overflow413:
		return FaultStatus{Code: http.StatusRequestEntityTooLarge, Body: "Request Entity Too Large"}
	case OverflowLlamaCpp:
		return FaultStatus{Code: http.StatusBadRequest, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":` + n + `,"n_ctx":` + w + `}}`}
	case OverflowLMStudio:
		return FaultStatus{Code: http.StatusBadRequest, Body: `{"error":"Trying to keep the first ` + n + ` tokens when context the overflows. However, the model is loaded with context length of only ` + w + ` tokens, which is not enough. The number of tokens to keep is greater than the context length."}`}
	case OverflowVLLM:
		e.typ = "BadRequestError"
		e.msg = "This model's maximum context length is " + w + " tokens. However, you requested " + n + " tokens in the messages, Please reduce the length of the messages."
	case OverflowGateway:
		e.typ = "invalid_request_error"
		e.msg = "Request has too many tokens (" + n + ")"
	default: // OverflowOpenAI
		e.code, e.param = "context_length_exceeded", "messages"
		e.msg = "This model's maximum context length is " + w + " tokens. However, your messages resulted in " + n + " tokens. Please reduce the length of the messages."
	}
	return FaultStatus{Code: e.status, Body: string(e.body(mode, ""))}
}
