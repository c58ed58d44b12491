package messages

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// unmarshalOpts are the edge's lenient options: unknown members are
// ignored, since the API adds members (caller, stop_details,
// cache_creation, inference_geo, …) over time. Whitespace inside objects
// (the API pads its events) is plain JSON.
var unmarshalOpts = edge.Lenient

// tag is a known "type" value of an event, a content block or a delta. It
// is decoded without allocating; unknown values are tagUnknown.
type tag uint8

// Known type values.
const (
	tagUnknown tag = iota
	// Event types.
	tagMessageStart
	tagContentBlockStart
	tagContentBlockDelta
	tagContentBlockStop
	tagMessageDelta
	tagMessageStop
	tagPing
	tagError
	// Content block types.
	tagText
	tagThinking
	tagRedactedThinking
	tagToolUse
	// Delta types.
	tagTextDelta
	tagThinkingDelta
	tagSignatureDelta
	tagInputJSONDelta
)

// tagOf maps a type value to its tag without allocating.
func tagOf[T ~string | ~[]byte](s T) tag {
	switch string(s) {
	case "message_start":
		return tagMessageStart
	case "content_block_start":
		return tagContentBlockStart
	case "content_block_delta":
		return tagContentBlockDelta
	case "content_block_stop":
		return tagContentBlockStop
	case "message_delta":
		return tagMessageDelta
	case "message_stop":
		return tagMessageStop
	case "ping":
		return tagPing
	case "error":
		return tagError
	case "text":
		return tagText
	case "thinking":
		return tagThinking
	case "redacted_thinking":
		return tagRedactedThinking
	case "tool_use":
		return tagToolUse
	case "text_delta":
		return tagTextDelta
	case "thinking_delta":
		return tagThinkingDelta
	case "signature_delta":
		return tagSignatureDelta
	case "input_json_delta":
		return tagInputJSONDelta
	}
	return tagUnknown
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom. A value that is not a
// string is tagUnknown.
func (t *tag) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*t = tagUnknown
	if v.Kind() != '"' {
		return nil
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		// Escaped type names are legal JSON, if unusual.
		if raw, err = jsontext.AppendUnquote(nil, v); err != nil {
			return err
		}
	}
	*t = tagOf(raw)
	return nil
}

// wireEvent is the union of the stream's event payloads. It is reused for
// every event, so decoding a text delta allocates only the text.
type wireEvent struct {
	Type         tag               `json:"type"`
	Index        int64             `json:"index"`
	Message      *wireMessage      `json:"message"` // message_start
	ContentBlock wireBlock         `json:"content_block"`
	Delta        wireDelta         `json:"delta"`
	Usage        *wireUsage        `json:"usage"` // message_delta
	Error        *edge.ErrorObject `json:"error"`
}

// wireMessage is message_start's message; only its usage is read.
type wireMessage struct {
	Usage *wireUsage `json:"usage"`
}

// wireBlock is content_block_start's content_block.
type wireBlock struct {
	Type      tag            `json:"type"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Text      string         `json:"text"`
	Thinking  string         `json:"thinking"`
	Signature string         `json:"signature"`
	Data      string         `json:"data"`
	Input     jsontext.Value `json:"input"`
}

// wireDelta is content_block_delta's delta or message_delta's delta.
type wireDelta struct {
	Type        tag    `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
	// StopDetails explains a refusal (message_delta of newer models).
	StopDetails struct {
		Explanation string `json:"explanation"`
	} `json:"stop_details"`
}

// wireUsage is a usage object. Each figure remembers whether it was present:
// message_delta repeats some figures and omits others, and an omitted one
// keeps its message_start value.
type wireUsage struct {
	InputTokens              optInt `json:"input_tokens"`
	OutputTokens             optInt `json:"output_tokens"`
	CacheReadInputTokens     optInt `json:"cache_read_input_tokens"`
	CacheCreationInputTokens optInt `json:"cache_creation_input_tokens"`
	OutputTokensDetails      struct {
		ThinkingTokens optInt `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// optInt is a token count that remembers whether it was present. null and
// values that are not integers count as absent; a negative integer or one
// beyond int64 is absurd (bad): the call's usage then counts as
// unreported.
type optInt struct {
	v   int64
	ok  bool
	bad bool
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (o *optInt) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '0' {
		*o = optInt{}
		return dec.SkipValue()
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(tok.String(), 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && n < 0 {
		*o = optInt{bad: true}
		return nil
	}
	if err != nil {
		*o = optInt{}
		return nil
	}
	*o = optInt{v: n, ok: true}
	return nil
}

// usageAcc holds the latest value of each usage figure.
type usageAcc struct {
	input, output, cacheRead, cacheWrite, thinking int64
	seen                                           bool
	bad                                            bool // an absurd figure came: no report
}

func (a *usageAcc) merge(u *wireUsage) {
	a.seen = true
	set := func(dst *int64, o optInt) {
		a.bad = a.bad || o.bad
		if o.ok {
			*dst = o.v
		}
	}
	set(&a.input, u.InputTokens)
	set(&a.output, u.OutputTokens)
	set(&a.cacheRead, u.CacheReadInputTokens)
	set(&a.cacheWrite, u.CacheCreationInputTokens)
	set(&a.thinking, u.OutputTokensDetails.ThinkingTokens)
}

// neutral applies provider.Usage's convention: InputTokens counts cache
// reads and writes too.
func (a *usageAcc) neutral() provider.Usage {
	in := a.input + a.cacheRead + a.cacheWrite
	return provider.Usage{
		InputTokens:      in,
		OutputTokens:     a.output,
		CacheReadTokens:  a.cacheRead,
		CacheWriteTokens: a.cacheWrite,
		ReasoningTokens:  a.thinking,
		TotalTokens:      in + a.output,
	}
}
