package provider

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Role is the author of a Message.
type Role string

// Roles of the neutral conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool result
	// RoleDeveloper is an instruction from the host inside the
	// conversation, not from the user: today only a reasoning update
	// (Message.ReasoningEffort). Responses sends it as a developer message
	// item, Chat as a system message, Anthropic Messages (which has no such
	// role in the conversation) as a text block of the user turn.
	RoleDeveloper Role = "developer"
)

// Message is one entry of the neutral conversation.
type Message struct {
	Role Role `json:"role"`
	// Text is the user prompt, the assistant's answer text, or the tool
	// result's content.
	Text string `json:"text,omitempty"`
	// Reasoning is all of the assistant's reasoning text, as streamed (for
	// the record; providers send back ReasoningBlocks instead).
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningBlocks are the reasoning blocks the provider authenticated,
	// in the order the model produced them: what must be sent back, unmodified,
	// for the model to continue its reasoning (Anthropic thinking with its
	// signature and redacted_thinking, Responses encrypted reasoning items).
	ReasoningBlocks []ReasoningBlock `json:"reasoning_blocks,omitempty"`
	// Media are a user message's typed inputs (images, audio), in request
	// order; the model sees them after Text.
	Media []Media `json:"media,omitempty"`
	// OutputMedia are references to the media an assistant message
	// produced (generated images, audio output), stored beside the session
	// like input media. They are for the record: no wire sends them back
	// (the audio's transcript is the message's Text).
	OutputMedia []Media `json:"output_media,omitempty"`
	// ToolCalls are the assistant's tool calls, in the order the model made them.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// IsError marks a tool result that reports a failure or a denial.
	IsError bool `json:"is_error,omitempty"`
	// NewTurn marks a user message that begins a new user turn whatever
	// precedes it: a run's prompt. A wire that would merge it with the
	// tool results before it (a previous run that ended inside a tool-use
	// loop) closes that loop first (messages: an assistant message between
	// them), so that the prompt starts a new assistant turn. Not stored:
	// the session derives it from its run records.
	NewTurn bool `json:"-"`
	// ReasoningEffort marks a RoleDeveloper message as a reasoning update:
	// the effort the host asks for from here on, while the request's
	// reasoning baseline stays as it was (so its cached prefix does too).
	// Text says the same in words for the model.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// NativeItems, when set, is a JSON array of Responses input items
	// that a provider's compaction endpoint returned (a native
	// checkpoint): the message stands for the compacted history and is
	// sent as those items, byte for byte, never parsed or altered. Only
	// the route that produced them ever gets such a message; Role and the
	// other fields are ignored. Not stored: the session builds it from its
	// checkpoint.
	NativeItems []byte `json:"-"`
}

// CompactResult is what a provider's compaction endpoint returned: the
// replacement history, as a JSON array of opaque items, and the call's
// usage (UsageReported false when the server sent none).
type CompactResult struct {
	Items         []byte
	Usage         Usage
	UsageReported bool
}

// Compactor is a Provider that can compact a conversation itself (the
// Responses compaction endpoint).
type Compactor interface {
	Compact(ctx context.Context, req Request) (CompactResult, error)
}

// Media types.
const (
	MediaImage = "image"
	MediaAudio = "audio"
)

// Media is one typed input, identified by its content. The session records
// the reference; the original bytes live beside the session file and are
// attached as Data before a model call.
type Media struct {
	// Type is MediaImage or MediaAudio.
	Type string `json:"type"`
	// MIMEType is sniffed from the bytes: image/png, image/jpeg, image/gif,
	// image/webp, audio/wav, audio/mpeg, audio/flac, audio/opus, audio/aac,
	// audio/pcm.
	MIMEType string `json:"mime_type"`
	// Format is the short name of the format: png, jpeg, gif, webp, wav,
	// mp3, flac, opus, aac, pcm16 (what OpenAI's input_audio calls it).
	Format string `json:"format"`
	// SHA256 is the hex digest of the bytes; Bytes their length.
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	// Data are the original bytes; never written to the session record.
	Data []byte `json:"-"`
}

// Wire modes, named as CONTRACT §8's provider_mode: the origin a
// ReasoningBlock records.
const (
	WireChat      = "openai-compatible"
	WireResponses = "openai-responses"
	WireMessages  = "anthropic-messages"
)

// ReasoningBlock is one authenticated block of reasoning. Exactly one of
// Signature and Redacted is set.
//
// A block is opaque state of the wire that produced it: its signature or
// encrypted content means nothing to another wire, which rejects it (an
// OpenAI encrypted_content sent as an Anthropic signature is an HTTP 400).
// Request builders therefore send back only the blocks whose Origin is
// their own wire mode and leave the others out; the message's text stays.
type ReasoningBlock struct {
	// Text is the block's reasoning text (may be empty, e.g. when the
	// provider only sends an encrypted form).
	Text string `json:"text,omitempty"`
	// Signature is the opaque token that authenticates Text (Anthropic
	// thinking signature, Responses encrypted_content).
	Signature string `json:"signature,omitempty"`
	// ID is the provider's id of the block, when it has one (a Responses
	// reasoning item id, which the item must carry when it goes back).
	ID string `json:"id,omitempty"`
	// Redacted is reasoning the provider encrypted whole (Anthropic
	// redacted_thinking data): nothing to show, everything to send back.
	Redacted string `json:"redacted,omitempty"`
	// AfterToolCalls is how many of the message's tool calls the model made
	// before this block: with interleaved thinking a block can follow a
	// call, and it goes back in that place.
	AfterToolCalls int `json:"after_tool_calls,omitempty"`
	// Wire is the wire mode that produced the block (WireResponses,
	// WireMessages), recorded when the message is stored; empty in
	// sessions written before it was recorded (see Origin).
	Wire string `json:"wire,omitempty"`
	// Model is the model name the block came from (Request.Model), for
	// the record.
	Model string `json:"model,omitempty"`
}

// Origin returns the wire mode that produced b: Wire when it was recorded,
// else the mode its shape implies. Only the Responses decoder gives a
// signed block an ID (the reasoning item id, which the item needs to go
// back), and only Anthropic has redacted_thinking or signs thinking
// without an id, so the shape of every block this module has ever stored
// names its wire; older sessions keep their reasoning on the wire they ran
// on instead of losing it.
func (b *ReasoningBlock) Origin() string {
	switch {
	case b.Wire != "":
		return b.Wire
	case b.Signature != "" && b.ID != "":
		return WireResponses
	default:
		return WireMessages
	}
}

// SetOrigin records wire and model as the origin of every block of bs that
// has none yet.
func SetOrigin(bs []ReasoningBlock, wire, model string) {
	for i := range bs {
		if bs[i].Wire == "" {
			bs[i].Wire, bs[i].Model = wire, model
		}
	}
}

// ReasoningAfter returns the blocks of m that wire produced and that
// follow exactly n tool calls, in order: n = 0 are the blocks before the
// first call. Blocks of another wire are left out (see ReasoningBlock).
func (m *Message) ReasoningAfter(wire string, n int) []ReasoningBlock {
	var out []ReasoningBlock
	for _, b := range m.ReasoningBlocks {
		at := min(b.AfterToolCalls, len(m.ToolCalls))
		if at == n && b.Origin() == wire {
			out = append(out, b)
		}
	}
	return out
}

// MissingToolResult is the content of the stand-in result a request
// carries for a tool call the conversation never answered: a call cut by
// the output cap, or left behind by a cancel, was stored but never run,
// and every wire mode rejects a call without a result.
const MissingToolResult = "No result: the tool call did not complete."

// PendingCalls finds the tool calls that need a stand-in result, for wire
// modes where every call of an assistant message must be answered by the
// tool results right after it (Chat Completions: "tool_calls must be
// followed by tool messages"; Responses: "No tool output found"). Pass
// every message, in order, to Before, and nil at the end. The zero value
// is ready to use.
type PendingCalls struct {
	open     []ToolCall // the calls of the latest assistant message
	answered map[string]bool
}

// Before takes the next message m of the conversation (nil after the last)
// and returns the results to send before it: when m is not a tool result,
// one stand-in error result (MissingToolResult) for each call of the
// latest assistant message that no result answered, in call order.
func (p *PendingCalls) Before(m *Message) []Message {
	if m != nil && m.Role == RoleTool {
		if p.answered == nil {
			p.answered = map[string]bool{}
		}
		p.answered[m.ToolCallID] = true
		return nil
	}
	var out []Message
	for _, tc := range p.open {
		if !p.answered[tc.ID] {
			out = append(out, Message{Role: RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: MissingToolResult, IsError: true})
		}
	}
	p.open = p.open[:0]
	clear(p.answered)
	if m != nil && m.Role == RoleAssistant {
		p.open = append(p.open, m.ToolCalls...)
	}
	return out
}

// ToolCall is one complete tool call made by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw JSON text the model produced (may be invalid JSON;
	// the agent loop validates it).
	Arguments string `json:"arguments"`
	// ArgumentsDropped, when positive, is the size of arguments that went
	// over MaxToolArgBytes: the decoder dropped them as they came and
	// Arguments is "{}", so the call can still be replayed; the agent
	// answers the call with invalid_arguments. It is never stored.
	ArgumentsDropped int `json:"-"`
}

// MaxToolArgBytes bounds the arguments of one tool call as a decoder
// assembles them. A tool_start event, which carries the arguments, is one
// protocol frame of at most 1 MiB: larger arguments could never be
// announced, so they are dropped as they arrive (the memory they take stays
// bounded) and the call is reported with ToolCall.ArgumentsDropped. The
// margin leaves room for the frame's envelope and the call's id and name.
const MaxToolArgBytes = 1<<20 - 64<<10

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object, as raw JSON.
	Parameters []byte
}

// Request is one model call.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxOutputTokens is the output cap the call asks for. Zero asks for
	// none where the wire allows it (the Codex backend rejects the field);
	// Messages, which requires max_tokens, then sends its default.
	MaxOutputTokens int
	// ReasoningEffort is "", "low", "medium" or "high".
	ReasoningEffort string
	// MaxOutputBytes bounds what the response may produce: its text,
	// reasoning and tool-call arguments together (see OutputLimit). Past
	// it the stream fails (FailDecode). Zero means OutputLimit(0).
	MaxOutputBytes int
	// SpoolDir is the folder where media the model produces (a generated
	// image, audio output) is decoded into temporary files, beside the
	// session so that a committed file is renamed into place, never
	// copied. Empty means os.TempDir.
	SpoolDir string
	// CacheKey, when set, is the prompt-cache key of the conversation:
	// stable across its steps and runs and free of secrets (the host
	// derives it from the session and the route). Responses routes send it
	// as prompt_cache_key, Chat Completions routes only when configured to
	// (not every compatible server accepts the field); Messages routes
	// mark cache breakpoints instead and ignore it.
	CacheKey string
	// NativeSteering asks for a stream that takes native steering: a
	// Responses call over the WebSocket transport then returns a Steerer
	// and reports EventResponseCreated and the EventSteer* events. Other
	// transports and wire modes ignore it (their streams are no
	// Steerer).
	NativeSteering bool
	// ContinueResponse, when set, is the response this call must continue
	// (previous_response_id, on the connection that response came on): the
	// one response.create that answers response.steer.pending with the
	// tool outputs. A provider that cannot continue it fails before
	// sending anything, with ErrCannotContinue.
	ContinueResponse string
}

// ErrCannotContinue is the cause (Error.Err) of a call whose
// Request.ContinueResponse could not be continued: the connection that
// response came on is gone, or the conversation is not that response's
// continuation. Nothing was sent.
var ErrCannotContinue = errors.New("provider: the response to continue is not available on this connection")

// ErrNotSteerable reports a steer that was not sent: the stream's response
// had ended, the stream was closed, or its call's context ended or its
// connection was closed before the consumer saw the stream fail. Nothing
// left the host, and the record callback did not run.
var ErrNotSteerable = errors.New("provider: the stream takes no more steering")

// Steerer is a Stream whose live response takes native steering input
// (Responses over WebSocket, Request.NativeSteering).
//
// Steer may be called from any goroutine, also while another one is in
// Next. A stream that took a steer does not end its hold on the
// connection at its response's end while an outcome (failed, pending, or
// a successor response) is still to come: Next ends normally, and Follow
// returns the stream of what comes next on that connection.
type Steerer interface {
	Stream
	// Steer sends {"type":"response.steer","previous_response_id":respID,
	// "input":input} on the stream's connection. record runs first, while
	// the stream is held open for the steer: when it fails, its error is
	// returned and nothing is sent. ErrNotSteerable means nothing was
	// sent. Any other error means the message may have left: the
	// outcome is unknown.
	Steer(respID, input string, record func() error) error
	// Follow returns the stream of the events that follow this stream's
	// normal end on the same connection when steering outcomes are still
	// to come: EventSteer* events, then, when the server creates a
	// successor, its EventResponseCreated and its whole response. Such a
	// stream ends normally after the successor's EventFinish, or without
	// any response once every outstanding steer failed or is pending.
	// Follow returns nil when nothing is outstanding, and after the first
	// call; the returned stream owns the connection from then on.
	Follow(ctx context.Context) Steerer
}

// OutputLimit is the most one model call may produce, in bytes of text,
// reasoning and tool-call arguments together, for a model whose output is
// capped at maxOutputTokens: 16 bytes a token (a token is a few bytes of
// UTF-8, and JSON escaping in tool-call arguments can double it), at least
// 1 MiB. A response past it is broken or hostile (a model cannot produce
// more than its output cap), so the call ends rather than let it grow
// memory without bound.
func OutputLimit(maxOutputTokens int) int {
	const floor = 1 << 20
	if maxOutputTokens <= 0 || maxOutputTokens > (1<<40)/16 {
		if maxOutputTokens > 0 {
			return 1 << 40
		}
		return floor
	}
	return max(floor, 16*maxOutputTokens)
}

// Provider starts model calls for one route.
type Provider interface {
	Stream(ctx context.Context, req Request) (Stream, error)
}

// ToolSizer is implemented by providers that can say how many bytes the
// tools array of their requests takes, exactly as sent (0 for no tools).
type ToolSizer interface {
	ToolArrayBytes(tools []ToolSpec) (int, error)
}

// FailKind classifies a provider failure by the facts the edge collected.
type FailKind string

// Failure kinds: the edge's classification for recovery, not protocol
// codes.
const (
	FailConnect     FailKind = "connect"      // no request byte written (DNS, refused, unreachable)
	FailHTTPStatus  FailKind = "http_status"  // the server answered with a non-2xx status
	FailStreamCut   FailKind = "stream_cut"   // body ended or broke before the terminal marker
	FailIdleTimeout FailKind = "idle_timeout" // no frame within the idle timeout
	FailErrorEvent  FailKind = "error_event"  // the stream carried an error event
	FailDecode      FailKind = "decode"       // the stream was not valid for its wire format
	FailCanceled    FailKind = "canceled"     // the context was canceled
)

// Error is a provider failure with the facts recovery needs. Message never
// contains a credential.
type Error struct {
	Kind FailKind
	// Status is the HTTP status, 0 when none was received.
	Status int
	// Code is the provider's error code/type when it sent one
	// (e.g. "insufficient_quota", "overloaded_error", "context_length_exceeded").
	Code string
	// Message is a sanitized, bounded description.
	Message string
	// RequestWritten reports whether any request byte may have reached the
	// provider (from net/http/httptrace, never guessed from error strings).
	RequestWritten bool
	// ContentStarted reports whether any stream content was decoded.
	ContentStarted bool
	// RetryAfter is the server's requested delay (retry-after-ms, then
	// Retry-After), zero when none was given.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return "provider: " + string(e.Kind) + " " + strconv.Itoa(e.Status) + ": " + e.Message
	}
	return "provider: " + string(e.Kind) + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrOpenTimeout is the cause (Error.Err) of a FailConnect whose request
// could not be opened, dial and TLS handshake, within the bound
// WithOpenTimeout set: what was left of the max network wait. It is an
// outage at the ceiling, never a written request.
var ErrOpenTimeout = errors.New("provider: the request could not be opened in what was left of the max network wait")

type openTimeoutKey struct{}

// WithOpenTimeout returns ctx carrying a bound on the opening of the
// requests made with it: a call whose connection is not ready (dialed,
// TLS handshake done) within d fails with FailConnect and ErrOpenTimeout.
// The bound ends once the connection is ready: it never bounds writing the
// request or reading the answer. d ≤ 0 means no bound.
func WithOpenTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, openTimeoutKey{}, d)
}

// OpenTimeout returns the bound WithOpenTimeout put on ctx, 0 for none.
func OpenTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(openTimeoutKey{}).(time.Duration)
	return d
}
