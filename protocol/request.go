package protocol

// Version is the only protocol this vocabulary describes.
const Version = 1

// MaxFrameBytes bounds one NDJSON frame, inbound or outbound, including its
// newline (CONTRACT §3).
const MaxFrameBytes = 1 << 20

// Command names of protocol 1.
const (
	CommandHello    = "hello"
	CommandModels   = "models"
	CommandRun      = "run"
	CommandShutdown = "shutdown"
)

var commands = []string{CommandHello, CommandModels, CommandRun, CommandShutdown}

// Commands returns the protocol-1 commands in the order hello reports them.
func Commands() []string { return append([]string(nil), commands...) }

// The request bodies live here, beside the events, so that one package
// describes every frame of the protocol: the wire codec decodes into them
// (strictly: exact-case names, no duplicates, no unknown members, no null),
// the Go client encodes them, and a schema generator reads their tags. The
// envelope members (protocol_version, request_id, command) are the wire
// codec's; hello and shutdown carry nothing else.

// ModelsRequest is the body of a models command (CONTRACT §7).
type ModelsRequest struct {
	// Offline suppresses live discovery; false when absent.
	Offline bool `json:"offline,omitzero"`
}

// RunRequest is the body of a run command (CONTRACT §8). Optional fields
// are pointers or nil slices so that "absent" is never confused with a zero
// value; no default is filled in here. Their tags carry omitzero, so that
// an encoder writes an absent field as absent (never null, which the host
// rejects) and a present empty one (tools: []) as present; the four
// required fields have none.
type RunRequest struct {
	RunID     string `json:"run_id"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	Prompt    string `json:"prompt"`

	SessionID         *string   `json:"session_id,omitzero"`
	SessionDir        *string   `json:"session_dir,omitzero"`
	SystemPrompt      *string   `json:"system_prompt,omitzero"`
	Tools             *[]string `json:"tools,omitzero"`
	AllowFileMutation *bool     `json:"allow_file_mutation,omitzero"`
	DisplayText       *string   `json:"display_text,omitzero"`
	Media             []Media   `json:"media,omitzero"`

	Provider            *string           `json:"provider,omitzero"`
	BaseURL             *string           `json:"base_url,omitzero"`
	APIKey              *string           `json:"api_key,omitzero"`
	CustomHeaders       map[string]string `json:"custom_headers,omitzero"`
	ProviderMode        *string           `json:"provider_mode,omitzero"`
	ContextWindowTokens *int64            `json:"context_window_tokens,omitzero"`
	MaxOutputTokens     *int64            `json:"max_output_tokens,omitzero"`
	InputModalities     *[]string         `json:"input_modalities,omitzero"`
	Vision              *bool             `json:"vision,omitzero"`
	SupportsReasoning   *bool             `json:"supports_reasoning,omitzero"`

	History   []HistoryMessage `json:"history,omitzero"`
	MaxSteps  *int64           `json:"max_steps,omitzero"`
	Reasoning *Reasoning       `json:"reasoning,omitzero"`
}

// Media is one typed media input (CONTRACT §16): Type is MediaImage or
// MediaAudio, Path absolute inside the workspace or relative to it.
type Media struct {
	Type string `json:"type"`
	Path string `json:"path"`
}

// Media types of Media.Type and OutputMedia.Type.
const (
	MediaImage = "image"
	MediaAudio = "audio"
)

// HistoryMessage seeds a new session with a prior message (the
// seed_history feature). Role is RoleUser or RoleAssistant.
type HistoryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Roles of HistoryMessage.Role.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Reasoning selects the reasoning effort of a run: "low", "medium" or
// "high".
type Reasoning struct {
	Effort string `json:"effort"`
}

// Provider modes of RunRequest.ProviderMode and ModelInfo.ProviderMode.
const (
	ModeOpenAICompatible  = "openai-compatible"
	ModeOpenAIResponses   = "openai-responses"
	ModeAnthropicMessages = "anthropic-messages"
)
