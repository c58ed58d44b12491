package runtime

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/policy"
)

// Event types of a run, in the vocabulary of CONTRACT §9. Each Event's Data
// is the pointer type named beside it; its JSON encoding is the event's
// data object.
const (
	EventAccepted   = "accepted"     // *Accepted
	EventStarted    = "started"      // *Started
	EventModelDelta = "model_delta"  // *ModelDelta
	EventToolStart  = "tool_start"   // *ToolStart
	EventToolPolicy = "tool_policy"  // *ToolPolicy
	EventToolFinish = "tool_finish"  // *ToolFinish
	EventModelStep  = "model_step"   // *ModelStep
	EventSettled    = "settled"      // *Settled
	EventFinal      = "final_result" // *Result
)

// Event is one event of a run's ordered stream.
type Event struct {
	Type string
	Data any
}

// ToolPolicy is the effective tool policy snapshot: every value with the
// layer that set it (CONTRACT §10). It never holds a path.
type ToolPolicySnapshot = policy.Effective

// PolicyDecision is the policy's decision for one tool call.
type PolicyDecision = policy.Decision

// AcceptedModel is the resolved model of an accepted run. The modality and
// reasoning fields are route-effective, as in the models inventory
// (CONTRACT §7), and additive to the minimum of CONTRACT §9.
type AcceptedModel struct {
	ID                  string   `json:"id"`
	Provider            string   `json:"provider"`
	Name                string   `json:"name"`
	ProviderMode        string   `json:"provider_mode"`
	ContextWindowTokens int      `json:"context_window_tokens"`
	MaxOutputTokens     int      `json:"max_output_tokens"`
	InputModalities     []string `json:"input_modalities"`
	Vision              bool     `json:"vision"`
	Audio               bool     `json:"audio"`
	SupportsReasoning   bool     `json:"supports_reasoning"`
}

// Accepted is the data of the accepted event.
type Accepted struct {
	Model               AcceptedModel      `json:"model"`
	SessionFile         string             `json:"session_file"`
	Tools               []string           `json:"tools"`
	EffectiveToolPolicy ToolPolicySnapshot `json:"effective_tool_policy"`
}

// Started is the (empty) data of the started event.
type Started struct{}

// Delta channels.
const (
	ChannelText      = "text"
	ChannelReasoning = "reasoning"
)

// ModelDelta is a piece of streamed model output.
type ModelDelta struct {
	Step    int    `json:"step"`
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

// ToolStart announces a tool call. Arguments is the JSON object the model
// sent, or a JSON string holding its raw text when that is not an object.
type ToolStart struct {
	Step      int            `json:"step"`
	CallID    string         `json:"call_id"`
	Tool      string         `json:"tool"`
	Arguments jsontext.Value `json:"arguments"`
}

// ToolPolicy is the policy decision for a tool call, emitted after every
// gate has passed (allowed) or when the call is denied.
type ToolPolicy struct {
	CallID   string         `json:"call_id"`
	Tool     string         `json:"tool"`
	Decision PolicyDecision `json:"decision"`
}

// ErrorInfo is a stable code with a bounded, sanitized message.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ToolFinish is the outcome of a tool call.
type ToolFinish struct {
	CallID    string     `json:"call_id"`
	Tool      string     `json:"tool"`
	OK        bool       `json:"ok"`
	Output    string     `json:"output"`
	Truncated bool       `json:"truncated"`
	Error     *ErrorInfo `json:"error"`
	// ExitCode (-1 when a signal ended the command) and Signal are set for
	// bash only.
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// Usage is token accounting.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// StepCost is the priced cost of usage; all zero with currency "" when
// the model's prices are unknown.
type StepCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	Total      float64 `json:"total"`
	Currency   string  `json:"currency"`
}

// Totals are cumulative figures over the run.
type Totals struct {
	Usage Usage    `json:"usage"`
	Cost  StepCost `json:"cost"`
}

// ModelStep is the accounting of one model call.
type ModelStep struct {
	Step       int      `json:"step"`
	Model      string   `json:"model"`
	Usage      Usage    `json:"usage"`
	Cost       StepCost `json:"cost"`
	Cumulative Totals   `json:"cumulative"`
	// UsageUncertain marks the figures as known subtotals (CONTRACT §12).
	UsageUncertain bool `json:"usage_uncertain"`
}

// Settled announces the status the final result will carry.
type Settled struct {
	Status string `json:"status"`
}

// Result is the final result of a run (final_result.data). The camelCase
// names are the contract (CONTRACT §9).
type Result struct {
	Status       string     `json:"status"`
	Output       string     `json:"output"`
	Error        *ErrorInfo `json:"error"`
	FilesChanged []string   `json:"filesChanged"`
	ToolCalls    int        `json:"toolCalls"`
	Steps        int        `json:"steps"`
	SessionFile  *string    `json:"sessionFile"`
}

// AppendJSON appends d's JSON object to b. model_delta is the hottest
// event, so it encodes itself without reflection or allocation; the result
// equals the encoding of its json tags (events_test.go checks it).
func (d *ModelDelta) AppendJSON(b []byte) []byte {
	b = append(b, `{"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	b = append(b, `,"channel":`...)
	b, _ = jsontext.AppendQuote(b, d.Channel) // invalid UTF-8 becomes U+FFFD
	b = append(b, `,"text":`...)
	b, _ = jsontext.AppendQuote(b, d.Text)
	return append(b, '}')
}
