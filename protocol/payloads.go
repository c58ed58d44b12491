package protocol

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Payloads: the data member of each event type. Field names are the wire
// names (snake_case, except final_result's camelCase, which is the
// contract). Clients must tolerate members added later.

// Hello is the data of hello (CONTRACT §6).
type Hello struct {
	SDKVersion        string   `json:"sdk_version"`
	ProtocolVersion   int      `json:"protocol_version"`
	MaxFrameBytes     int      `json:"max_frame_bytes"`
	MaxConcurrentRuns int      `json:"max_concurrent_runs"`
	Commands          []string `json:"commands"`
	Features          Features `json:"features"`
}

// Features are the hello feature flags. A flag is true only when the
// feature works end to end and is tested (CONTRACT §6).
type Features struct {
	Streaming          bool `json:"streaming"`
	PersistentSessions bool `json:"persistent_sessions"`
	SeedHistory        bool `json:"seed_history"`
	TypedMediaInput    bool `json:"typed_media_input"`
	TypedImageInput    bool `json:"typed_image_input"`
	TypedAudioInput    bool `json:"typed_audio_input"`
	PromptDisplayText  bool `json:"prompt_display_text"`
	InlineModels       bool `json:"inline_models"`
	Tools              bool `json:"tools"`
	Skills             bool `json:"skills"`
	Extensions         bool `json:"extensions"`
	ProcessGroupAbort  bool `json:"process_group_abort"`
	InBandAbort        bool `json:"in_band_abort"`
	// MaxSteps: a run may carry max_steps, the bound on its model steps
	// (an optional run field this host adds to the source's list, CONTRACT §8).
	MaxSteps bool `json:"max_steps"`
	// Reasoning: a run may carry reasoning, the effort of a route that
	// supports reasoning (an optional run field this host adds, CONTRACT §8).
	Reasoning bool `json:"reasoning"`
}

// Models is the data of models (CONTRACT §7).
type Models struct {
	Models []ModelInfo `json:"models"`
	// Discovery reports live-discovery failures; they never fail the
	// command. Absent when there were none.
	Discovery []DiscoveryIssue `json:"discovery,omitempty"`
}

// DiscoveryIssue is one endpoint whose live model listing failed; Code is
// one of DiscoveryCodes.
type DiscoveryIssue struct {
	Provider string `json:"provider"`
	Code     Code   `json:"code"`
	Message  string `json:"message"`
}

// ModelInfo is one model: an entry of the models inventory, and the
// resolved model of accepted. Values are route-effective (CONTRACT §7).
type ModelInfo struct {
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
	// Cost is the price list when known; the inventory sets it, accepted
	// never does (absent, not null).
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is a price list in Currency per million tokens.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	Currency   string  `json:"currency"`
}

// Empty is the data of shutdown: {}.
type Empty struct{}

// ErrorData is a stable code with a bounded (1 KiB), sanitized message: the
// data of protocol_error (Code one of ProtocolCodes) and the error member
// of final_result (RunCodes) and tool_finish (ToolCodes), CONTRACT §5.
type ErrorData struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// Statuses of a settled run: settled.status and final_result.status.
const (
	StatusCompleted = "completed"
	StatusBlocked   = "blocked"
	StatusError     = "error"
)

var statuses = []string{StatusCompleted, StatusBlocked, StatusError}

// Statuses returns the statuses of a settled run in a fixed order.
func Statuses() []string { return append([]string(nil), statuses...) }

// FinalResult is the data of final_result; the camelCase names are the
// contract (CONTRACT §9). FilesChanged is never null.
type FinalResult struct {
	Status       string     `json:"status"`
	Output       string     `json:"output"`
	Error        *ErrorData `json:"error"`
	FilesChanged []string   `json:"filesChanged"`
	ToolCalls    int        `json:"toolCalls"`
	Steps        int        `json:"steps"`
	SessionFile  *string    `json:"sessionFile"`
}

// Accepted is the data of accepted: the resolved model (no Cost), the
// session file, the registered tools, the effective tool policy and the
// skills offered.
type Accepted struct {
	Model               ModelInfo       `json:"model"`
	SessionFile         string          `json:"session_file"`
	Tools               []string        `json:"tools"`
	EffectiveToolPolicy EffectivePolicy `json:"effective_tool_policy"`
	// Skills names the skills offered to the model, sorted (CONTRACT §18);
	// empty when none.
	Skills []string `json:"skills"`
}

// Started is the data of started: {}.
type Started struct{}

// Settled announces the status final_result will carry.
type Settled struct {
	Status string `json:"status"`
}

// Channels of ModelDelta.Channel (and of the runtime's RecoveredOutput).
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

// AppendJSON appends d's JSON object to b. model_delta is the hottest
// event, so it encodes itself without reflection or allocation; the result
// equals the encoding of its json tags (protocol_test.go checks it).
func (d *ModelDelta) AppendJSON(b []byte) []byte {
	b = append(b, `{"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	switch d.Channel { // the two channels need no quoting
	case ChannelText:
		b = append(b, `,"channel":"text","text":`...)
	case ChannelReasoning:
		b = append(b, `,"channel":"reasoning","text":`...)
	default:
		b = append(b, `,"channel":`...)
		b, _ = jsontext.AppendQuote(b, d.Channel) // invalid UTF-8 becomes U+FFFD
		b = append(b, `,"text":`...)
	}
	b, _ = jsontext.AppendQuote(b, d.Text)
	return append(b, '}')
}

// OutputMedia is a typed reference to media bytes the model produced (a
// generated image, audio output), stored durably under the session's media
// folder as <session>.media/<sha256> before the event; the bytes never
// cross a frame (CONTRACT §9). Path is that stored file; MimeType is
// sniffed from the bytes (application/octet-stream when they are of no
// recognized format). It is emitted once the model call's attempt is
// committed: a discarded attempt's media are never announced.
type OutputMedia struct {
	Step     int    `json:"step"`
	Type     string `json:"type"` // MediaImage or MediaAudio
	MimeType string `json:"mime_type"`
	Path     string `json:"path"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
}

// Lifecycle states of ProviderLifecycle.State.
const (
	LifecycleQueued  = "queued"
	LifecycleLoading = "loading"
	LifecycleReady   = "ready"
)

// ProviderLifecycle is opt-in readiness telemetry of a configured endpoint:
// advisory, not model output, never in the session (CONTRACT §9). It is
// emitted only for a provider of ~/.octet/models.json with
// "lifecycle_events": true. Detail is null (ready) or the server's
// sanitized word, at most 256 bytes (queued, loading).
type ProviderLifecycle struct {
	State  string  `json:"state"`
	Detail *string `json:"detail"`
}

// ProviderRetry announces that a failed attempt is replaced: its
// provisional output is discarded; the replacement is not a new run
// (CONTRACT §12).
type ProviderRetry struct {
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	DelayMS     int64  `json:"delay_ms"`
	Error       string `json:"error"`
}

// ProviderWaitingForNetwork announces a wait after a positively identified
// outage before any request byte was sent; it does not use the retry
// budget, so it has no max_attempts.
type ProviderWaitingForNetwork struct {
	Attempt int    `json:"attempt"`
	DelayMS int64  `json:"delay_ms"`
	Error   string `json:"error"`
}

// Operations of ProviderOperationRetry.Operation.
const (
	OperationLocalCompaction  = "local_compaction"
	OperationNativeCompaction = "native_compaction"
	OperationTerminalGate     = "terminal_gate"
)

// ProviderOperationRetry is the recovery of an auxiliary provider
// operation (a compaction's summarizer call, a model terminal gate's
// question). MaxAttempts is null for a pre-send network wait.
type ProviderOperationRetry struct {
	Operation   string `json:"operation"`
	Attempt     int    `json:"attempt"`
	MaxAttempts *int   `json:"max_attempts"`
	DelayMS     int64  `json:"delay_ms"`
	Error       string `json:"error"`
}

// ProviderUsageUncertain says the session's usage figures are known
// subtotals from now on; its data is {}.
type ProviderUsageUncertain struct{}

// CandidateRejected reports a candidate answer the terminal gate rejected
// before it became the run's output (CONTRACT §17): the step, the
// consecutive rejection count, the bound on them, and the gate's reason
// (at most 2048 bytes of UTF-8, credentials redacted, control characters
// other than newline and tab replaced). The source names the event but not
// its data: this shape is ours. Attempt counts the rejections since the
// run began or the gate last accepted a candidate, 1 for the first; the
// rejection whose Attempt reaches MaxAttempts ends the run blocked with
// terminal_gate_exhausted.
type CandidateRejected struct {
	Step        int    `json:"step"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	Reason      string `json:"reason"`
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
	CallID   string       `json:"call_id"`
	Tool     string       `json:"tool"`
	Decision ToolDecision `json:"decision"`
}

// Streams of ToolProgress.Stream.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// ToolProgress is streamed output of a running tool (bash).
type ToolProgress struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Stream string `json:"stream"` // StreamStdout or StreamStderr
	Text   string `json:"text"`
}

// ToolFinish is the outcome of a tool call; Error's code is one of
// ToolCodes.
type ToolFinish struct {
	CallID    string     `json:"call_id"`
	Tool      string     `json:"tool"`
	OK        bool       `json:"ok"`
	Output    string     `json:"output"`
	Truncated bool       `json:"truncated"`
	Error     *ErrorData `json:"error"`
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

// SteeringDelivered reports a steering message entering the conversation:
// the model sees it at Step (CONTRACT §15). Mode says how: "queued" (the
// host appended it at a safe boundary) or "native" (the provider took it
// with response.steer and its successor response was created). Protocol 1
// has no steering command, so only Go API runs emit it.
type SteeringDelivered struct {
	Step int    `json:"step"`
	Text string `json:"text"`
	Mode string `json:"mode"`
}

// Steering delivery modes (SteeringDelivered.Mode).
const (
	SteeringModeQueued = "queued"
	SteeringModeNative = "native"
)

// FollowUpDelivered reports a queued follow-up entering the conversation
// at Step; as SteeringDelivered, only Go API runs emit it.
type FollowUpDelivered struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// Compaction reasons and kinds (CompactionStart, CompactionFinish).
const (
	CompactionThreshold = "threshold" // the context passed the window less the reserve
	CompactionOverflow  = "overflow"  // the provider refused the request as too long
	CompactionLocal     = "local"     // a summarizer call on the run's own route
	CompactionNative    = "native"    // the provider's compaction endpoint
)

// CompactionStart announces a compaction of older history (CONTRACT §17):
// why, which kind, and the context size before it, in tokens.
type CompactionStart struct {
	Reason       string `json:"reason"`
	Kind         string `json:"kind"`
	TokensBefore int64  `json:"tokens_before"`
}

// CompactionFinish ends a compaction: whether it succeeded, the context
// size before and the estimate after, the sizes of the summary and of the
// handoff, whether the step that needed it will be retried, and the error
// of a refused or failed compaction (a CompactionCodes code).
type CompactionFinish struct {
	Reason              string     `json:"reason"`
	Kind                string     `json:"kind"`
	OK                  bool       `json:"ok"`
	TokensBefore        int64      `json:"tokens_before"`
	TokensAfterEstimate int64      `json:"tokens_after_estimate"`
	SummaryBytes        int64      `json:"summary_bytes"`
	HandoffBytes        int64      `json:"handoff_bytes"`
	WillRetry           bool       `json:"will_retry"`
	Error               *ErrorData `json:"error"`
}

// Levels of ExtensionNotification.Level.
const (
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

// ExtensionNotification is one finding of extension discovery (CONTRACT
// §18): the extension's folder name, the layer it was found in, a level, a
// stable code (one of ExtensionCodes) and a bounded message without host
// paths or the manifest's command. A run writes its findings right after
// started, at most 64 and then one truncated notice. The host never starts
// an executable extension. The source names the event but not its data:
// this shape is ours.
type ExtensionNotification struct {
	// Extension is the name of the extension's folder (extensions/<name>/),
	// so that a broken manifest is named too; "" for truncated.
	Extension string `json:"extension"`
	// Layer is where the folder is: "user", "workspace" or "root:N"
	// (explicit roots counted from 1); "" for truncated.
	Layer   string `json:"layer"`
	Level   string `json:"level"`
	Code    Code   `json:"code"`
	Message string `json:"message"`
}
