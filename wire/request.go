package wire

// ProtocolVersion is the only protocol this host speaks.
const ProtocolVersion = 1

// Command names of protocol 1.
const (
	CommandHello    = "hello"
	CommandModels   = "models"
	CommandRun      = "run"
	CommandShutdown = "shutdown"
)

// Commands lists the protocol-1 commands in the order hello reports them.
var Commands = []string{CommandHello, CommandModels, CommandRun, CommandShutdown}

// Request is one decoded, strictly validated request line. Exactly one of
// Models and Run is set for those commands; hello and shutdown carry no
// fields beyond the envelope.
type Request struct {
	RequestID string
	Command   string
	Models    *ModelsRequest
	Run       *RunRequest
}

// ModelsRequest is the body of a models command (CONTRACT §7).
type ModelsRequest struct {
	// Offline suppresses live discovery; false when absent.
	Offline bool `json:"offline"`
}

// RunRequest is the body of a run command (CONTRACT §8). Optional fields are
// pointers or nil slices so that "absent" is never confused with a zero
// value; no default is filled in here.
type RunRequest struct {
	RunID     string `json:"run_id"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	Prompt    string `json:"prompt"`

	SessionID         *string   `json:"session_id"`
	SessionDir        *string   `json:"session_dir"`
	SystemPrompt      *string   `json:"system_prompt"`
	Tools             *[]string `json:"tools"`
	AllowFileMutation *bool     `json:"allow_file_mutation"`
	DisplayText       *string   `json:"display_text"`
	Media             []Media   `json:"media"`

	Provider            *string           `json:"provider"`
	BaseURL             *string           `json:"base_url"`
	APIKey              *string           `json:"api_key"`
	CustomHeaders       map[string]string `json:"custom_headers"`
	ProviderMode        *string           `json:"provider_mode"`
	ContextWindowTokens *int64            `json:"context_window_tokens"`
	MaxOutputTokens     *int64            `json:"max_output_tokens"`
	InputModalities     *[]string         `json:"input_modalities"`
	Vision              *bool             `json:"vision"`
	SupportsReasoning   *bool             `json:"supports_reasoning"`

	History       []HistoryMessage `json:"history"`
	ResourceRoots []string         `json:"resource_roots"`
	MaxSteps      *int64           `json:"max_steps"`
	Reasoning     *Reasoning       `json:"reasoning"`
}

// Media is one typed media input (CONTRACT §16).
type Media struct {
	Type string `json:"type"`
	Path string `json:"path"`
}

// HistoryMessage seeds a new session with a prior message (the seed_history
// feature). Role is "user" or "assistant".
type HistoryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Reasoning selects the reasoning effort of a run.
type Reasoning struct {
	Effort string `json:"effort"`
}
