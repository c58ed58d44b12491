package prepare

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/customheader"
)

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
	History []protocol.HistoryMessage
	// MaxSteps bounds model calls: nil means DefaultMaxSteps, a value must
	// be 1..MaxMaxSteps.
	MaxSteps *int
	// ReasoningEffort is the reasoning the run asks for: nil asks for none
	// (the session's or the agent's selection applies), a value must be
	// "low", "medium" or "high".
	ReasoningEffort *string
	// Media are typed inputs (images, audio) read from the workspace and
	// sent with the prompt, in order (CONTRACT §16).
	Media []protocol.Media
	// ConfirmDelivery makes the run hold its session after its
	// final_result until the consumer says whether the events reached
	// their reader: Wait (they did) or AbandonWith (they did not; the
	// session then records why). A consumer that sets it must call one of
	// them once it has handled the final_result, or the session stays
	// locked. The NDJSON host sets it; without it an abandonment after the
	// final_result is not recorded.
	ConfirmDelivery bool
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
	MaxHeaderEntries    = customheader.MaxEntries
	MaxHeaderBytes      = customheader.MaxBytes
	DefaultMaxSteps     = 50
	MaxMaxSteps         = 1000
)

// RunError is a run refused before it was accepted: no event was emitted,
// and the caller reports a single error final result (CONTRACT §8).
type RunError struct {
	Code    protocol.Code // one of protocol.RunCodes
	Message string
}

func (e *RunError) Error() string { return string(e.Code) + ": " + e.Message }

// A check that refuses returns its RunError as a value, its message
// written out whole where the fault is found; the message is bounded once,
// where the refusal leaves preparation (Prepare cuts it to 1 KiB with
// Bound).

// Refuse is the RunError of code whose message is format with each "%s"
// replaced by the next of args, for refusals made outside this package.
func Refuse(code protocol.Code, format string, args ...string) *RunError {
	msg := format
	for _, a := range args {
		msg = strings.Replace(msg, "%s", a, 1)
	}
	return &RunError{Code: code, Message: msg}
}

// Bound cuts a message to 1 KiB at a rune boundary.
func Bound(s string) string { return textutil.Truncate(s, 1024-len(textutil.Ellipsis)) }

// CheckFields checks the fields of req that need nothing but the request,
// in the order of CONTRACT §8, and returns the run's step limit.
func CheckFields(req *RunRequest) (maxSteps int, _ *RunError) {
	if !protocol.ValidID(req.RunID) {
		return 0, &RunError{Code: protocol.CodeInvalidValue, Message: "run_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'"}
	}
	if req.Prompt == "" {
		return 0, &RunError{Code: protocol.CodeInvalidValue, Message: "prompt is empty"}
	}
	if len(req.Prompt) > MaxPromptBytes {
		return 0, &RunError{Code: protocol.CodePromptTooLarge, Message: "prompt is " + strconv.Itoa(len(req.Prompt)) + " bytes; the limit is 524288"}
	}
	// display_text: at most its limit, UTF-8 (a U+FFFD the application
	// sent is text; only bytes that are not UTF-8 are refused), and no
	// control character other than newline and tab.
	if n := len(req.DisplayText); n > MaxDisplayTextBytes {
		return 0, &RunError{Code: protocol.CodeDisplayTextInvalid, Message: "display_text is " + strconv.Itoa(n) + " bytes; the limit is 262144"}
	}
	if !utf8.ValidString(req.DisplayText) {
		return 0, &RunError{Code: protocol.CodeDisplayTextInvalid, Message: "display_text is not valid UTF-8"}
	}
	for i, r := range req.DisplayText {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return 0, &RunError{Code: protocol.CodeDisplayTextInvalid, Message: "display_text has a control character at byte " + strconv.Itoa(i) + "; only newline and tab are allowed"}
		}
	}
	maxSteps = DefaultMaxSteps
	if req.MaxSteps != nil {
		if *req.MaxSteps < 1 || *req.MaxSteps > MaxMaxSteps {
			return 0, &RunError{Code: protocol.CodeInvalidValue, Message: "max_steps must be between 1 and 1000"}
		}
		maxSteps = *req.MaxSteps
	}
	if req.ReasoningEffort != nil {
		switch *req.ReasoningEffort {
		case "low", "medium", "high":
		default:
			return 0, &RunError{Code: protocol.CodeInvalidValue, Message: `reasoning.effort must be "low", "medium" or "high"`}
		}
	}
	for i, h := range req.History {
		if h.Role != "user" && h.Role != "assistant" {
			return 0, &RunError{Code: protocol.CodeHistoryInvalid, Message: `history[` + strconv.Itoa(i) + `].role must be "user" or "assistant"`}
		}
		if h.Content == "" {
			return 0, &RunError{Code: protocol.CodeHistoryInvalid, Message: "history[" + strconv.Itoa(i) + "].content is empty"}
		}
	}
	return maxSteps, nil
}
