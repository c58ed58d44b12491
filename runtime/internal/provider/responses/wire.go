package responses

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// unmarshalOpts are the edge's lenient options: unknown members are
// ignored, since servers add sequence_number, obfuscation, logprobs, phase,
// copilot_usage and more.
var unmarshalOpts = edge.Lenient

// wireEvent is the part of a Responses stream event the slow path reads.
// Which members matter depends on Type.
type wireEvent struct {
	Type        edge.TextOnly `json:"type"`
	OutputIndex int           `json:"output_index"`
	Arguments   edge.ArgText  `json:"arguments"` // function_call_arguments.done
	Item        *wireItem     `json:"item"`      // output_item.added, output_item.done
	Response    *wireResponse `json:"response"`  // completed, incomplete, failed
	// An error event carries code and message at the top level (as
	// documented) or in a nested error object (as the API really sends).
	Error   *edge.ErrorObject `json:"error"`
	Code    edge.FlexString   `json:"code"`
	Message edge.FlexString   `json:"message"`
	// Steer is the steering submission of a response.steer.* event
	// (steer.go).
	Steer *wireSteer `json:"steer"`
}

// wireDelta is a delta event as the slow path reads it: only the members
// the fast path reads, so that both accept the same events.
type wireDelta struct {
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	Delta        string `json:"delta"`
}

// wireItem is an output item. Every member is lenient: items of types this
// package does not know are skipped, whatever their shape.
type wireItem struct {
	Type             edge.TextOnly `json:"type"`
	ID               edge.TextOnly `json:"id"`
	Status           edge.TextOnly `json:"status"`
	CallID           edge.TextOnly `json:"call_id"`
	Name             edge.TextOnly `json:"name"`
	Arguments        edge.ArgText  `json:"arguments"`
	EncryptedContent edge.TextOnly `json:"encrypted_content"`
	Summary          wireParts     `json:"summary"`
	// Result is an image_generation_call's base64 image, when its event
	// was short enough to be decoded whole; a long event's is spooled
	// (media.go) and reads "" here.
	Result  edge.TextOnly `json:"result"`
	Content wireParts     `json:"content"`
}

// wirePart is a content or summary part: output_text and summary_text and
// reasoning_text carry text, refusal carries refusal.
type wirePart struct {
	Type    edge.TextOnly `json:"type"`
	Text    edge.TextOnly `json:"text"`
	Refusal edge.TextOnly `json:"refusal"`
}

// wireParts is a list of parts that ignores anything but an array of
// objects.
type wireParts []wirePart

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (ps *wireParts) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*ps = (*ps)[:0]
	if dec.PeekKind() != '[' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		if dec.PeekKind() != '{' {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		var p wirePart
		if err := json.UnmarshalDecode(dec, &p); err != nil {
			return err
		}
		*ps = append(*ps, p)
	}
	_, err := dec.ReadToken()
	return err
}

// wireResponse is the part of the response object the terminal events
// carry that the decoder reads.
type wireResponse struct {
	ID                edge.TextOnly     `json:"id"`
	Status            edge.TextOnly     `json:"status"`
	Usage             *wireUsage        `json:"usage"`
	Error             *edge.ErrorObject `json:"error"`
	IncompleteDetails *wireIncomplete   `json:"incomplete_details"`
	Output            hasItems          `json:"output"`
}

type wireIncomplete struct {
	Reason edge.TextOnly `json:"reason"`
}

// hasItems records whether a value is a non-empty array, without decoding
// it: the terminal event repeats the whole output, which the decoder only
// reads when nothing was streamed.
type hasItems bool

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (h *hasItems) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*h = hasItems(v.Kind() == '[' && string(v) != "[]")
	return nil
}

// wireOutput is the output list of a terminal event, read only when the
// server streamed no items.
type wireOutput struct {
	Response struct {
		Output []wireItem `json:"output"`
	} `json:"response"`
}

type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
		// CacheWriteTokens are the input tokens written to the cache
		// (OpenAI's ResponseUsage; GitHub Copilot's endpoint sends it too).
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// neutral maps the usage to the provider convention, which is the
// Responses one: input_tokens counts cached tokens too, and output_tokens
// counts reasoning tokens too.
func (u *wireUsage) neutral() provider.Usage {
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	return provider.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.InputTokensDetails.CachedTokens,
		CacheWriteTokens: u.InputTokensDetails.CacheWriteTokens,
		ReasoningTokens:  u.OutputTokensDetails.ReasoningTokens,
		TotalTokens:      total,
	}
}
