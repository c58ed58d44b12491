package fakeprovider

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
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

// serveCompact answers POST /v1/responses/compact, the Responses API's
// compaction endpoint: {model, input, instructions} in, and out a
// response.compaction object whose output is the input's last user
// message followed by one opaque compaction item, {"type":"compaction",
// "id":"cmp_fakeN","encrypted_content":…}, whose content is CompactionContent
// of the request (so a test can check that it comes back unaltered), and
// usage of the body's bytes / 4 in and 50 out. A FaultStatus at the head of
// the fault queue is played instead; other faults wait for a model
// request.
func (s *Server) serveCompact(w http.ResponseWriter, r *http.Request, raw []byte, body map[string]any, n, idx int, requestID string) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, ModeResponses, requestID, r)
		return
	}
	if s.apiKey != "" && !s.authorized(ModeResponses, r.Header) {
		statusError(ModeResponses, http.StatusUnauthorized).write(w, ModeResponses, requestID)
		return
	}
	s.mu.Lock()
	var fault *FaultStatus
	if len(s.faults) > 0 {
		if f, ok := s.faults[0].(FaultStatus); ok {
			fault = &f
			s.faults = s.faults[1:]
			s.refuseAtHeadLocked()
			s.reqAt(idx).Fault = f.describe()
		}
	}
	s.compactions++
	s.mu.Unlock()
	if fault != nil {
		writeFaultStatus(w, ModeResponses, *fault, requestID)
		return
	}
	model, _ := body["model"].(string)
	input, ok := body["input"].([]any)
	if model == "" || !ok {
		invalidRequest("input", "model and an input array are required").write(w, ModeResponses, requestID)
		return
	}
	output := arr{}
	for i := len(input) - 1; i >= 0; i-- {
		if m, _ := input[i].(map[string]any); m["type"] == "message" && m["role"] == "user" {
			output = append(output, m)
			break
		}
	}
	output = append(output, obj{"type", "compaction", "id", fmt.Sprintf("cmp_fake%d", n), "encrypted_content", CompactionContent(raw)})
	setRequestID(w.Header(), ModeResponses, requestID)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(encode(obj{
		"id", fmt.Sprintf("cmp_resp%d", n), "object", "response.compaction", "created_at", 0, "output", output,
		"usage", obj{"input_tokens", len(raw) / 4, "output_tokens", 50, "total_tokens", len(raw)/4 + 50},
	}))
}

// CompactionContent is the encrypted_content of the compaction item the
// fake's compaction endpoint returns for a request body: opaque text that
// depends on the whole body.
func CompactionContent(body []byte) string {
	sum := sha256.Sum256(body)
	return "gAAAA" + base64.StdEncoding.EncodeToString(sum[:]) + "=="
}

// Compactions returns how many requests the compaction endpoint got.
func (s *Server) Compactions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compactions
}
