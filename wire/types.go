package wire

// Hello is the data of the hello event (CONTRACT §6).
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
}

// ModelsData is the data of the models event (CONTRACT §7).
type ModelsData struct {
	Models []ModelInfo `json:"models"`
	// Discovery reports live-discovery failures; it never fails the command.
	Discovery []DiscoveryIssue `json:"discovery,omitempty"`
}

// DiscoveryIssue is one endpoint whose live model listing failed.
type DiscoveryIssue struct {
	Provider string `json:"provider"`
	Code     Code   `json:"code"`
	Message  string `json:"message"`
}

// ModelInfo is one entry of the models inventory. Values are
// route-effective (CONTRACT §7).
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
	Cost                *Cost    `json:"cost,omitempty"`
}

// Cost is a price list in Currency per million tokens.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	Currency   string  `json:"currency"`
}

// Empty is the data of events that carry nothing ({}).
type Empty struct{}

// Run statuses of final_result (CONTRACT §9).
const (
	StatusCompleted = "completed"
	StatusBlocked   = "blocked"
	StatusError     = "error"
)

// FinalResult is the data of final_result; the camelCase names are the
// contract (CONTRACT §9).
type FinalResult struct {
	Status       string     `json:"status"`
	Output       string     `json:"output"`
	Error        *ErrorData `json:"error"`
	FilesChanged []string   `json:"filesChanged"`
	ToolCalls    int        `json:"toolCalls"`
	Steps        int        `json:"steps"`
	SessionFile  *string    `json:"sessionFile"`
}
