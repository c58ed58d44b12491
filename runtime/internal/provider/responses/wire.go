package responses

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider"
)

// unmarshalOpts is lenient where real servers are sloppy: a duplicated
// member or a stray invalid UTF-8 byte must not end a run. Unknown members
// are ignored (v2's default), since servers add sequence_number,
// obfuscation, logprobs, phase, copilot_usage and more.
var unmarshalOpts = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// wireEvent is the part of a Responses stream event the slow path reads.
// Which members matter depends on Type.
type wireEvent struct {
	Type        textOnly      `json:"type"`
	OutputIndex int           `json:"output_index"`
	Arguments   argText       `json:"arguments"` // function_call_arguments.done
	Item        *wireItem     `json:"item"`      // output_item.added, output_item.done
	Response    *wireResponse `json:"response"`  // completed, incomplete, failed
	// An error event carries code and message at the top level (as
	// documented) or in a nested error object (as the API really sends).
	Error   *wireError `json:"error"`
	Code    flexString `json:"code"`
	Message flexString `json:"message"`
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
	Type             textOnly  `json:"type"`
	Status           textOnly  `json:"status"`
	CallID           textOnly  `json:"call_id"`
	Name             textOnly  `json:"name"`
	Arguments        argText   `json:"arguments"`
	EncryptedContent textOnly  `json:"encrypted_content"`
	Summary          wireParts `json:"summary"`
	Content          wireParts `json:"content"`
}

// wirePart is a content or summary part: output_text and summary_text and
// reasoning_text carry text, refusal carries refusal.
type wirePart struct {
	Type    textOnly `json:"type"`
	Text    textOnly `json:"text"`
	Refusal textOnly `json:"refusal"`
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
	Status            textOnly        `json:"status"`
	Usage             *wireUsage      `json:"usage"`
	Error             *wireError      `json:"error"`
	IncompleteDetails *wireIncomplete `json:"incomplete_details"`
	Output            hasItems        `json:"output"`
}

type wireIncomplete struct {
	Reason textOnly `json:"reason"`
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
		// CacheWriteTokens is sent by GitHub Copilot's endpoint.
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

// wireError is the OpenAI error object {"message","type","code","param"}.
// Servers also send a bare string; code may be a string, a number or null.
type wireError struct {
	Message flexString `json:"message"`
	Type    flexString `json:"type"`
	Code    flexString `json:"code"`
	Param   flexString `json:"param"`
}

// UnmarshalJSONFrom accepts an object or a bare message string.
func (e *wireError) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '{' {
		type plain wireError // drop the method to avoid recursion
		return json.UnmarshalDecode(dec, (*plain)(e))
	}
	return e.Message.UnmarshalJSONFrom(dec)
}

// code returns the error code, else its type.
func (e *wireError) code() string {
	if e.Code != "" {
		return string(e.Code)
	}
	return string(e.Type)
}

// flexString takes any JSON value: a string as its text, null as "", and
// anything else as its compact JSON text.
type flexString string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *flexString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*s = flexString(tok.String())
	case 'n':
		_, err := dec.ReadToken()
		*s = ""
		return err
	default:
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		*s = flexString(v)
	}
	return nil
}

// textOnly keeps a JSON string and ignores any other value.
type textOnly string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *textOnly) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '"' {
		*s = ""
		return dec.SkipValue()
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	*s = textOnly(tok.String())
	return nil
}

// argText is a function call's arguments: normally a JSON string holding
// JSON text, but some servers send the arguments object itself.
type argText string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *argText) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var f flexString
	err := f.UnmarshalJSONFrom(dec)
	*s = argText(f)
	return err
}

// readError is a failure of the underlying body; the Stream classifies it
// (idle timeout, cancel, cut) with facts the decoder does not have.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }
