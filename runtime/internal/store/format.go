package store

// The content types of schema version 1. A record's members are defined by
// this package alone: the conversation message a message record holds, its
// reasoning blocks, media references and tool calls, and the token counts
// of usage records and checkpoints are the V1 types below, not the
// provider's types the agent loop speaks. convert.go maps between the two
// explicitly, member by member, so that a change to provider.Message (a
// renamed JSON tag, a new field, a reordered struct) changes neither the
// lines this package writes nor the lines it reads.
//
// The member names, their order (the order of the fields), and which
// members are left out of a line (omitempty: a member whose JSON value
// would be "" or [] or {}, never false or 0; omitzero: a nil raw value)
// are the file format: testdata/golden.jsonl and testdata/compat pin them
// byte for byte. See the package documentation, "Format and versions", for
// what may change within a version.

// Message roles of schema version 1 (MessageV1.Role).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleDeveloper = "developer"
)

// MessageV1 is the conversation message of a message record ("message"
// member), schema version 1:
//
//	{"role":"assistant","text":"…","reasoning":"…","reasoning_blocks":[…],"tool_calls":[…],"is_error":false}
//
// Its fields mean what provider.Message's fields of the same names mean.
// Two of provider.Message's fields have no member: NewTurn, which the
// Session derives from its run records, and NativeItems, which it builds
// from a native checkpoint.
type MessageV1 struct {
	Role            string             `json:"role"`
	Text            string             `json:"text,omitempty"`
	Reasoning       string             `json:"reasoning,omitempty"`
	ReasoningBlocks []ReasoningBlockV1 `json:"reasoning_blocks,omitempty"`
	Media           []MediaV1          `json:"media,omitempty"`
	OutputMedia     []MediaV1          `json:"output_media,omitempty"`
	ToolCalls       []ToolCallV1       `json:"tool_calls,omitempty"`
	ToolCallID      string             `json:"tool_call_id,omitempty"`
	ToolName        string             `json:"tool_name,omitempty"`
	// IsError is always written (omitempty leaves out no false).
	IsError         bool   `json:"is_error,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
}

// ReasoningBlockV1 is one authenticated reasoning block of a message,
// schema version 1 (provider.ReasoningBlock). AfterToolCalls is always
// written.
type ReasoningBlockV1 struct {
	Text           string `json:"text,omitempty"`
	Signature      string `json:"signature,omitempty"`
	ID             string `json:"id,omitempty"`
	Redacted       string `json:"redacted,omitempty"`
	AfterToolCalls int    `json:"after_tool_calls,omitempty"`
	Wire           string `json:"wire,omitempty"`
	Model          string `json:"model,omitempty"`
}

// MediaV1 is a reference to a media object stored beside the session
// (media.go), schema version 1 (provider.Media without its bytes).
type MediaV1 struct {
	Type     string `json:"type"`
	MIMEType string `json:"mime_type"`
	Format   string `json:"format"`
	SHA256   string `json:"sha256"`
	Bytes    int64  `json:"bytes"`
}

// ToolCallV1 is one tool call of an assistant message, schema version 1
// (provider.ToolCall without ArgumentsDropped, which is never stored).
type ToolCallV1 struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// UsageV1 is the token counts of a provider call, schema version 1
// (provider.Usage): a usage record's "usage" member and a checkpoint's.
type UsageV1 struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}
