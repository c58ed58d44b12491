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

// Refuse is the RunError of code whose message is format with each "%s"
// replaced by the next of args. The message is bounded once, where the
// refusal leaves preparation (Prepare cuts it to 1 KiB with Bound).
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
		return 0, Refuse(protocol.CodeInvalidValue, "run_id must be 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'")
	}
	if req.Prompt == "" {
		return 0, Refuse(protocol.CodeInvalidValue, "prompt is empty")
	}
	if len(req.Prompt) > MaxPromptBytes {
		return 0, Refuse(protocol.CodePromptTooLarge, "prompt is %s bytes; the limit is 524288", strconv.Itoa(len(req.Prompt)))
	}
	if err := CheckDisplayText(req.DisplayText); err != nil {
		return 0, err
	}
	maxSteps = DefaultMaxSteps
	if req.MaxSteps != nil {
		if *req.MaxSteps < 1 || *req.MaxSteps > MaxMaxSteps {
			return 0, Refuse(protocol.CodeInvalidValue, "max_steps must be between 1 and 1000")
		}
		maxSteps = *req.MaxSteps
	}
	if req.ReasoningEffort != nil {
		switch *req.ReasoningEffort {
		case "low", "medium", "high":
		default:
			return 0, Refuse(protocol.CodeInvalidValue, `reasoning.effort must be "low", "medium" or "high"`)
		}
	}
	for i, h := range req.History {
		if h.Role != "user" && h.Role != "assistant" {
			return 0, Refuse(protocol.CodeHistoryInvalid, `history[%s].role must be "user" or "assistant"`, strconv.Itoa(i))
		}
		if h.Content == "" {
			return 0, Refuse(protocol.CodeHistoryInvalid, "history[%s].content is empty", strconv.Itoa(i))
		}
	}
	return maxSteps, nil
}

// CheckDisplayText refuses a display_text over its limit, not UTF-8, or
// holding a control character other than newline and tab.
func CheckDisplayText(s string) *RunError {
	if len(s) > MaxDisplayTextBytes {
		return Refuse(protocol.CodeDisplayTextInvalid, "display_text is %s bytes; the limit is 262144", strconv.Itoa(len(s)))
	}
	if !utf8.ValidString(s) {
		// A U+FFFD the application sent is text; only bytes that are
		// not UTF-8 are refused.
		return Refuse(protocol.CodeDisplayTextInvalid, "display_text is not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return Refuse(protocol.CodeDisplayTextInvalid, "display_text has a control character at byte %s; only newline and tab are allowed", strconv.Itoa(i))
		}
	}
	return nil
}
