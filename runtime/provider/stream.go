package provider

import "strings"

// EventKind says what a StreamEvent carries.
type EventKind int

// Stream event kinds.
const (
	// EventText is a piece of answer text (refusal text included).
	EventText EventKind = iota + 1
	// EventReasoning is a piece of reasoning text.
	EventReasoning
	// EventToolCall is one complete tool call (arguments fully assembled).
	EventToolCall
	// EventUsage carries the usage figures known so far for this call; a
	// later EventUsage replaces an earlier one.
	EventUsage
	// EventFinish is the provider's normal end of the response, with its
	// finish reason. After it the stream reports no more events.
	EventFinish
	// EventMedia is one finished piece of media the model produced
	// (StreamEvent.Media): a generated image, or a response's audio.
	EventMedia

	// The native steering events (see Steerer) are reported only by the
	// streams of a Request with NativeSteering set. They carry no
	// content.

	// EventResponseCreated is the server's response.created: a response
	// began, StreamEvent.ID is its id. On a stream Steerer.Follow
	// returned, it is the steered response's successor: the commit point
	// of the steering input the server had accepted.
	EventResponseCreated
	// EventSteerAccepted is response.steer.accepted: the server owns a
	// steering input (ID: its steer id); nothing is applied yet.
	EventSteerAccepted
	// EventSteerPending is response.steer.pending: the steered response
	// stopped for client-owned tool output, and the accepted input (ID:
	// its steer id) waits for the one request that carries those outputs
	// (Request.ContinueResponse); it must not be sent again.
	EventSteerPending
	// EventSteerFailed is response.steer.failed: a steering input was
	// refused or could not be committed. ID is its steer id, empty when
	// none was allocated; Text is the input the server returned.
	EventSteerFailed
)

// OutputMedia is media the model produced, decoded into a temporary file
// (Spool, in Request.SpoolDir). From the EventMedia that carries it the
// consumer owns the file: it renames it into place when the attempt is
// committed and removes it when the attempt is discarded. Partial
// (provisional) images are never reported.
type OutputMedia struct {
	// Type is MediaImage or MediaAudio: what the wire said it produced.
	Type string
	// MIMEType is sniffed from the bytes, never taken from a declared
	// format (see media.OutputMIME); application/octet-stream when the
	// bytes are of no recognized format of Type.
	MIMEType string
	// Format is the sniffed format's short name (png, jpeg, wav, pcm16,
	// …), "" with application/octet-stream.
	Format string
	// SHA256 is the hex digest of the bytes; Bytes their length.
	SHA256 string
	Bytes  int64
	// Spool is the path of the temporary file holding the bytes: a file
	// of Request.SpoolDir whose name begins with ".tmp-" (the session's
	// store renames only such files into place).
	Spool string
}

// Finish reasons, normalized across wire modes.
const (
	FinishStop      = "stop"       // the model ended its answer
	FinishToolCalls = "tool_calls" // the model wants tool results
	FinishLength    = "length"     // output cap reached
	// FinishContextWindow: the answer stopped because the context window
	// filled up (Anthropic stop_reason "model_context_window_exceeded"):
	// a context overflow, which the runtime compacts and retries.
	FinishContextWindow = "context_window"
	FinishRefusal       = "refusal" // content filter or refusal
	// FinishSteered: the response ended at a safe point because steering
	// input was accepted (Responses response.incomplete with reason
	// "steered"); its successor follows on the same connection.
	FinishSteered = "steered"
	FinishOther   = "other"
)

// StreamEvent is one decoded piece of a streamed response.
type StreamEvent struct {
	Kind EventKind
	Text string // EventText, EventReasoning
	// Signature (EventReasoning) closes a reasoning block: it authenticates
	// all reasoning text since the previous block closed.
	Signature string
	// Redacted (EventReasoning) is a whole reasoning block the provider
	// encrypted; it carries no text and closes no other block.
	Redacted string
	// BlockID (EventReasoning, with Signature) is the provider's id of the
	// block, when it has one (a Responses reasoning item id).
	BlockID      string
	ToolCall     ToolCall     // EventToolCall
	Usage        Usage        // EventUsage
	FinishReason string       // EventFinish
	Media        *OutputMedia // EventMedia
	// ID is the response id (EventResponseCreated) or the steer id
	// (EventSteerAccepted, EventSteerPending, EventSteerFailed).
	ID string
}

// Stream is a pull iterator over one streamed response.
//
//	for s.Next() { ev := s.Event(); ... }
//	if err := s.Err(); err != nil { ... }
//
// Next returns false at the normal end (after EventFinish) or on error; Err
// is nil only at a normal end. A stream that ends before its terminal marker
// ([DONE], response.completed, message_stop) is an error of kind
// FailStreamCut, never a normal end.
type Stream interface {
	Next() bool
	Event() StreamEvent
	Err() error
	Close() error
}

// ReasoningCollector gathers one response's events into the reasoning text
// and the authenticated blocks of the assistant message, each placed after
// the tool calls that preceded it. The zero value is ready to use.
type ReasoningCollector struct {
	text   strings.Builder
	open   int // where in text the block not yet closed begins
	calls  int // tool calls seen so far
	blocks []ReasoningBlock
}

// Add takes every event of the stream, in order; it keeps reasoning and
// counts tool calls.
func (c *ReasoningCollector) Add(ev StreamEvent) {
	switch ev.Kind {
	case EventToolCall:
		c.calls++
		return
	case EventReasoning:
	default:
		return
	}
	c.text.WriteString(ev.Text)
	if ev.Signature != "" {
		c.blocks = append(c.blocks, ReasoningBlock{Text: c.text.String()[c.open:], Signature: ev.Signature, ID: ev.BlockID, AfterToolCalls: c.calls})
		c.open = c.text.Len()
	}
	if ev.Redacted != "" {
		c.blocks = append(c.blocks, ReasoningBlock{Redacted: ev.Redacted, AfterToolCalls: c.calls})
	}
}

// Text is all reasoning text so far.
func (c *ReasoningCollector) Text() string { return c.text.String() }

// Blocks are the closed blocks so far. Text after the last signature is
// not authenticated and belongs to no block.
func (c *ReasoningCollector) Blocks() []ReasoningBlock { return c.blocks }
