package chat

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// appendJSON appends the body to b byte for byte as json.Marshal(r,
// marshalOpts) writes it, without reflection: the first request of a
// process then builds no reflective encoder for the body's types,
// and a long history is encoded in one pass over it. TestRequestBytes
// holds the two equal; a field added to the body's types is written here
// too, and drawn by that test. ok is false for a content value of a type the
// encoder does not know; the caller then marshals the body reflectively.
func (r *chatRequest) appendJSON(b []byte) (_ []byte, ok bool) {
	b = append(b, `{"model":`...)
	b = appendString(b, r.Model)
	b = append(b, `,"messages":[`...)
	for i := range r.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = r.Messages[i].appendJSON(b); !ok {
			return b, false
		}
	}
	b = append(b, `],"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	b = append(b, `,"stream_options":{"include_usage":`...)
	b = strconv.AppendBool(b, r.StreamOptions.IncludeUsage)
	b = append(b, '}')
	if len(r.Tools) > 0 {
		b = append(b, `,"tools":`...)
		b = appendTools(b, r.Tools)
	}
	if r.MaxCompletionTokens != 0 {
		b = append(b, `,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxCompletionTokens), 10)
	}
	if r.ReasoningEffort != "" {
		b = append(b, `,"reasoning_effort":`...)
		b = appendString(b, r.ReasoningEffort)
	}
	if r.PromptCacheKey != "" {
		b = append(b, `,"prompt_cache_key":`...)
		b = appendString(b, r.PromptCacheKey)
	}
	if len(r.Modalities) > 0 {
		b = append(b, `,"modalities":[`...)
		for i, m := range r.Modalities {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m)
		}
		b = append(b, ']')
	}
	if r.Audio != nil {
		b = appendPair(b, `,"audio":{"voice":`, r.Audio.Voice, `,"format":`, r.Audio.Format)
	}
	return append(b, '}'), true
}

func (m *chatMessage) appendJSON(b []byte) (_ []byte, ok bool) {
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role)
	b = append(b, `,"content":`...)
	switch c := m.Content.(type) {
	case nil:
		b = append(b, "null"...)
	case *string:
		if c == nil {
			b = append(b, "null"...)
		} else {
			b = appendString(b, *c)
		}
	case []chatPart:
		b = append(b, '[')
		for i := range c {
			if i > 0 {
				b = append(b, ',')
			}
			b = c[i].appendJSON(b)
		}
		b = append(b, ']')
	default:
		return b, false
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendString(b, tc.ID)
			b = append(b, `,"type":`...)
			b = appendString(b, tc.Type)
			b = appendPair(b, `,"function":{"name":`, tc.Function.Name, `,"arguments":`, tc.Function.Arguments)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	}
	return append(b, '}'), true
}

func (p *chatPart) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, p.Type)
	if p.Text != "" {
		b = append(b, `,"text":`...)
		b = appendString(b, p.Text)
	}
	if p.ImageURL != nil {
		b = append(b, `,"image_url":{"url":`...)
		b = appendString(b, p.ImageURL.URL)
		b = append(b, '}')
	}
	if p.InputAudio != nil {
		b = appendPair(b, `,"input_audio":{"data":`, p.InputAudio.Data, `,"format":`, p.InputAudio.Format)
	}
	return append(b, '}')
}

// appendTools appends the tools array. Parameters were checked valid by
// buildTools; they are written compact, as the reflective encoder writes
// a jsontext.Value.
func appendTools(b []byte, tools []chatTool) []byte {
	b = append(b, '[')
	for i := range tools {
		t := &tools[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = appendString(b, t.Type)
		b = append(b, `,"function":{"name":`...)
		b = appendString(b, t.Function.Name)
		if t.Function.Description != "" {
			b = append(b, `,"description":`...)
			b = appendString(b, t.Function.Description)
		}
		b = append(b, `,"parameters":`...)
		b, _ = jsontext.AppendFormat(b, t.Function.Parameters) // valid: buildTools checked it
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendPair appends open, x quoted, sep, y quoted and the brace that
// closes the object open began.
func appendPair(b []byte, open, x, sep, y string) []byte {
	b = appendString(append(b, open...), x)
	b = appendString(append(b, sep...), y)
	return append(b, '}')
}

// appendString appends s quoted; invalid UTF-8 becomes U+FFFD, as
// marshalOpts has it.
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}
