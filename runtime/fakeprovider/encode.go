package fakeprovider

import (
	"encoding/base64"
	"fmt"
)

// audioPiece is how many base64 characters one chat delta.audio.data
// carries.
const audioPiece = 16 << 10

// defaultSignature is the Anthropic thinking signature sent when
// Turn.Signature is empty (base64 of "fakeprovider-signature").
const defaultSignature = "ZmFrZXByb3ZpZGVyLXNpZ25hdHVyZQ=="

// defaultEncrypted is the Responses reasoning encrypted_content sent when
// Turn.Signature is empty and the request asked for it.
const defaultEncrypted = "gAAAAABmFrZXByb3ZpZGVyLWVuY3J5cHRlZC1jb250ZW50"

// encodeParams is what the encoders need besides the turn.
type encodeParams struct {
	turn  *Turn
	model string // the model id the stream reports
	n     int    // the request's number, for unique ids
	// created is the Unix time the stream reports.
	created int64
	// includeUsage: chat only sends the usage chunk when the request set
	// stream_options.include_usage, as the real API does.
	includeUsage bool
	// encrypted: Responses only carries reasoning encrypted_content when
	// the request's include names "reasoning.encrypted_content".
	encrypted bool
}

// encoded is a turn as SSE events, each a complete event (ending in a
// blank line); the last one is the mode's terminal event.
type encoded struct {
	events [][]byte
	respID string // Responses: the response id
}

func (p *encodeParams) id(prefix string, i int) string {
	return fmt.Sprintf("%s_fake%d_%d", prefix, p.n, i)
}

func dataEvent(payload []byte) []byte {
	b := make([]byte, 0, len(payload)+8)
	b = append(b, "data: "...)
	b = append(b, payload...)
	return append(b, "\n\n"...)
}

func namedEvent(typ string, payload []byte) []byte {
	b := make([]byte, 0, len(payload)+len(typ)+16)
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, payload...)
	return append(b, "\n\n"...)
}

// encodeTurn encodes p.turn in mode's wire format.
func encodeTurn(mode Mode, p *encodeParams) encoded {
	switch mode {
	case ModeChat:
		return encodeChat(p)
	case ModeResponses:
		return encodeResponses(p)
	case ModeAnthropic:
		return encodeAnthropic(p)
	}
	panic("fakeprovider: encodeTurn: unknown mode " + string(mode))
}

// encodeChat writes a Chat Completions stream: a role delta, reasoning
// deltas, content deltas, refusal deltas, tool-call deltas (id and name
// first, then argument pieces), the finish chunk, the usage chunk with
// choices [] and "data: [DONE]".
func encodeChat(p *encodeParams) encoded {
	t := p.turn
	id := fmt.Sprintf("chatcmpl-fake%d", p.n)
	var out [][]byte
	chunk := func(delta obj, finish any) {
		out = append(out, dataEvent(encode(obj{
			"id", id, "object", "chat.completion.chunk", "created", p.created,
			"model", p.model, "system_fingerprint", "fp_fake",
			"choices", arr{obj{"index", 0, "delta", delta, "logprobs", nil, "finish_reason", finish}},
		})))
	}

	// The role delta as OpenAI sends it: content "" before text, null
	// before a refusal or tool calls only.
	role := obj{"role", "assistant"}
	switch {
	case t.Text == "" && t.Refusal != "":
		role = append(role, "content", nil, "refusal", "")
	case t.Text == "" && len(t.ToolCalls) > 0:
		role = append(role, "content", nil)
	default:
		role = append(role, "content", "", "refusal", nil)
	}
	chunk(role, nil)
	for _, piece := range t.textPieces(t.Reasoning) {
		chunk(obj{"reasoning_content", piece}, nil)
	}
	for _, piece := range t.textPieces(t.Text) {
		chunk(obj{"content", piece}, nil)
	}
	for _, piece := range t.textPieces(t.Refusal) {
		chunk(obj{"refusal", piece}, nil)
	}
	if len(t.Audio) > 0 || t.AudioTranscript != "" {
		// As observed: the id with the first transcript piece, more
		// transcript, then the data in base64 pieces, then the expiry.
		audioID := p.id("audio", 0)
		for i, piece := range t.textPieces(t.AudioTranscript) {
			a := obj{"transcript", piece}
			if i == 0 {
				a = append(obj{"id", audioID}, a...)
			}
			chunk(obj{"content", nil, "audio", a}, nil)
		}
		b64 := base64.StdEncoding.EncodeToString(t.Audio)
		for len(b64) > 0 {
			n := min(len(b64), audioPiece)
			chunk(obj{"content", nil, "audio", obj{"id", audioID, "data", b64[:n]}}, nil)
			b64 = b64[n:]
		}
		chunk(obj{"content", nil, "audio", obj{"id", audioID, "expires_at", p.created + 3600}}, nil)
	}
	for i, tc := range t.ToolCalls {
		callID := tc.ID
		if callID == "" {
			callID = p.id("call", i)
		}
		chunk(obj{"tool_calls", arr{obj{
			"index", i, "id", callID, "type", "function",
			"function", obj{"name", tc.Name, "arguments", ""},
		}}}, nil)
		for _, piece := range t.argPieces(tc.Arguments) {
			chunk(obj{"tool_calls", arr{obj{"index", i, "function", obj{"arguments", piece}}}}, nil)
		}
	}
	finish := "stop"
	switch {
	case t.Truncated:
		finish = "length"
	case len(t.ToolCalls) > 0:
		finish = "tool_calls"
	}
	chunk(obj{}, finish)
	if p.includeUsage {
		u := t.Usage
		promptDetails := obj{"cached_tokens", u.CacheRead, "audio_tokens", 0}
		if u.CacheWrite > 0 {
			promptDetails = append(promptDetails, "cache_write_tokens", u.CacheWrite)
		}
		out = append(out, dataEvent(encode(obj{
			"id", id, "object", "chat.completion.chunk", "created", p.created,
			"model", p.model, "system_fingerprint", "fp_fake", "choices", arr{},
			"usage", obj{
				"prompt_tokens", u.Input, "completion_tokens", u.Output,
				"total_tokens", u.Input + u.Output,
				"prompt_tokens_details", promptDetails,
				"completion_tokens_details", obj{
					"reasoning_tokens", u.Reasoning, "audio_tokens", 0,
					"accepted_prediction_tokens", 0, "rejected_prediction_tokens", 0,
				},
			},
		})))
	}
	out = append(out, []byte("data: [DONE]\n\n"))
	return encoded{events: out}
}

// encodeResponses writes an OpenAI Responses stream: response.created and
// response.in_progress, then a reasoning item (summary part and deltas), a
// message item (output_text and refusal parts with deltas), function_call
// items (argument deltas), and response.completed (or response.incomplete)
// with the usage.
func encodeResponses(p *encodeParams) encoded {
	t := p.turn
	respID := fmt.Sprintf("resp_fake%d", p.n)
	var out [][]byte
	seq := 0
	ev := func(typ string, fields ...any) {
		o := append(obj{"type", typ, "sequence_number", seq}, fields...)
		seq++
		out = append(out, namedEvent(typ, encode(o)))
	}
	response := func(status string, output arr, usage, incomplete any) obj {
		return obj{
			"id", respID, "object", "response", "created_at", p.created,
			"status", status, "background", false, "error", nil,
			"incomplete_details", incomplete, "model", p.model,
			"output", output, "parallel_tool_calls", true, "store", false,
			"usage", usage,
		}
	}
	ev("response.created", "response", response("in_progress", arr{}, nil, nil))
	ev("response.in_progress", "response", response("in_progress", arr{}, nil, nil))

	var output arr
	oi := 0 // output_index
	if t.Reasoning != "" {
		id := p.id("rs", oi)
		item := func(summary arr) obj {
			it := obj{"id", id, "type", "reasoning", "summary", summary}
			if p.encrypted {
				sig := t.Signature
				if sig == "" {
					sig = defaultEncrypted
				}
				it = append(it, "encrypted_content", sig)
			}
			return it
		}
		ev("response.output_item.added", "output_index", oi, "item", item(arr{}))
		ev("response.reasoning_summary_part.added", "item_id", id, "output_index", oi,
			"summary_index", 0, "part", obj{"type", "summary_text", "text", ""})
		for _, piece := range t.textPieces(t.Reasoning) {
			ev("response.reasoning_summary_text.delta", "item_id", id, "output_index", oi,
				"summary_index", 0, "delta", piece)
		}
		ev("response.reasoning_summary_text.done", "item_id", id, "output_index", oi,
			"summary_index", 0, "text", t.Reasoning)
		part := obj{"type", "summary_text", "text", t.Reasoning}
		ev("response.reasoning_summary_part.done", "item_id", id, "output_index", oi,
			"summary_index", 0, "part", part)
		done := item(arr{part})
		ev("response.output_item.done", "output_index", oi, "item", done)
		output = append(output, done)
		oi++
	}
	for _, img := range t.Images {
		id := p.id("ig", oi)
		format := img.OutputFormat
		if format == "" {
			format = "png"
		}
		item := func(status string, result any) obj {
			it := obj{"id", id, "type", "image_generation_call", "status", status}
			if result != nil {
				it = append(it, "background", "opaque", "output_format", format, "quality", "high",
					"result", result, "revised_prompt", "a fake image", "size", "1024x1024")
			}
			return it
		}
		ev("response.output_item.added", "output_index", oi, "item", item("in_progress", nil))
		ev("response.image_generation_call.in_progress", "output_index", oi, "item_id", id)
		ev("response.image_generation_call.generating", "output_index", oi, "item_id", id)
		for i, part := range img.Partials {
			ev("response.image_generation_call.partial_image", "output_index", oi, "item_id", id,
				"partial_image_index", i, "partial_image_b64", base64.StdEncoding.EncodeToString(part),
				"background", "opaque", "output_format", format, "quality", "high", "size", "1024x1024")
		}
		ev("response.image_generation_call.completed", "output_index", oi, "item_id", id)
		done := item("completed", base64.StdEncoding.EncodeToString(img.Data))
		ev("response.output_item.done", "output_index", oi, "item", done)
		output = append(output, done)
		oi++
	}
	if t.Text != "" || t.Refusal != "" {
		id := p.id("msg", oi)
		ev("response.output_item.added", "output_index", oi, "item", obj{
			"id", id, "type", "message", "status", "in_progress", "content", arr{}, "role", "assistant",
		})
		var parts arr
		ci := 0 // content_index
		if t.Text != "" {
			ev("response.content_part.added", "item_id", id, "output_index", oi, "content_index", ci,
				"part", obj{"type", "output_text", "annotations", arr{}, "logprobs", arr{}, "text", ""})
			for _, piece := range t.textPieces(t.Text) {
				ev("response.output_text.delta", "item_id", id, "output_index", oi, "content_index", ci,
					"delta", piece, "logprobs", arr{})
			}
			ev("response.output_text.done", "item_id", id, "output_index", oi, "content_index", ci,
				"text", t.Text, "logprobs", arr{})
			part := obj{"type", "output_text", "annotations", arr{}, "logprobs", arr{}, "text", t.Text}
			ev("response.content_part.done", "item_id", id, "output_index", oi, "content_index", ci, "part", part)
			parts = append(parts, part)
			ci++
		}
		if t.Refusal != "" {
			ev("response.content_part.added", "item_id", id, "output_index", oi, "content_index", ci,
				"part", obj{"type", "refusal", "refusal", ""})
			for _, piece := range t.textPieces(t.Refusal) {
				ev("response.refusal.delta", "item_id", id, "output_index", oi, "content_index", ci, "delta", piece)
			}
			ev("response.refusal.done", "item_id", id, "output_index", oi, "content_index", ci, "refusal", t.Refusal)
			part := obj{"type", "refusal", "refusal", t.Refusal}
			ev("response.content_part.done", "item_id", id, "output_index", oi, "content_index", ci, "part", part)
			parts = append(parts, part)
		}
		status := "completed"
		if t.Truncated {
			status = "incomplete"
		}
		done := obj{"id", id, "type", "message", "status", status, "content", parts, "role", "assistant"}
		ev("response.output_item.done", "output_index", oi, "item", done)
		output = append(output, done)
		oi++
	}
	for i, tc := range t.ToolCalls {
		id := p.id("fc", oi)
		callID := tc.ID
		if callID == "" {
			callID = p.id("call", i)
		}
		ev("response.output_item.added", "output_index", oi, "item", obj{
			"id", id, "type", "function_call", "status", "in_progress",
			"arguments", "", "call_id", callID, "name", tc.Name,
		})
		for _, piece := range t.argPieces(tc.Arguments) {
			ev("response.function_call_arguments.delta", "item_id", id, "output_index", oi, "delta", piece)
		}
		ev("response.function_call_arguments.done", "item_id", id, "output_index", oi, "arguments", tc.Arguments)
		done := obj{
			"id", id, "type", "function_call", "status", "completed",
			"arguments", tc.Arguments, "call_id", callID, "name", tc.Name,
		}
		ev("response.output_item.done", "output_index", oi, "item", done)
		output = append(output, done)
		oi++
	}
	usage := responsesUsage(t.Usage)
	if output == nil {
		output = arr{}
	}
	if t.Truncated {
		ev("response.incomplete", "response", response("incomplete", output, usage,
			obj{"reason", "max_output_tokens"}))
	} else {
		ev("response.completed", "response", response("completed", output, usage, nil))
	}
	return encoded{events: out, respID: respID}
}

// encodeAnthropic writes an Anthropic Messages stream: message_start with
// the input usage, a ping after the first block starts (as recorded) and
// another before message_delta, content blocks
// (thinking with signature_delta, text, refusal text, tool_use with
// input_json_delta pieces), message_delta with the stop reason and the
// cumulative usage, and message_stop.
func encodeAnthropic(p *encodeParams) encoded {
	t := p.turn
	u := t.Usage
	var out [][]byte
	ev := func(typ string, fields ...any) {
		out = append(out, namedEvent(typ, encode(append(obj{"type", typ}, fields...))))
	}
	ev("message_start", "message", obj{
		"id", fmt.Sprintf("msg_fake%d", p.n), "type", "message", "role", "assistant",
		"model", p.model, "content", arr{}, "stop_reason", nil, "stop_sequence", nil,
		"usage", obj{
			"input_tokens", u.Input, "cache_creation_input_tokens", u.CacheWrite,
			"cache_read_input_tokens", u.CacheRead, "output_tokens", 1,
		},
	})
	index, pinged := 0, false
	start := func(block obj) {
		ev("content_block_start", "index", index, "content_block", block)
		if !pinged {
			// The real API pings right after the first block starts.
			ev("ping")
			pinged = true
		}
	}
	delta := func(d obj) { ev("content_block_delta", "index", index, "delta", d) }
	stop := func() {
		ev("content_block_stop", "index", index)
		index++
	}
	if t.Reasoning != "" {
		start(obj{"type", "thinking", "thinking", "", "signature", ""})
		for _, piece := range t.textPieces(t.Reasoning) {
			delta(obj{"type", "thinking_delta", "thinking", piece})
		}
		sig := t.Signature
		if sig == "" {
			sig = defaultSignature
		}
		delta(obj{"type", "signature_delta", "signature", sig})
		stop()
	}
	if t.RedactedReasoning != "" {
		// Complete in its start event; no deltas.
		start(obj{"type", "redacted_thinking", "data", t.RedactedReasoning})
		stop()
	}
	for _, text := range []string{t.Text, t.Refusal} {
		if text == "" {
			continue
		}
		start(obj{"type", "text", "text", ""})
		for _, piece := range t.textPieces(text) {
			delta(obj{"type", "text_delta", "text", piece})
		}
		stop()
	}
	for i, tc := range t.ToolCalls {
		id := tc.ID
		if id == "" {
			id = p.id("toolu", i)
		}
		start(obj{"type", "tool_use", "id", id, "name", tc.Name, "input", obj{}})
		pieces := t.argPieces(tc.Arguments)
		if len(pieces) == 0 {
			pieces = []string{""} // what the API sends for a call without arguments
		}
		for _, piece := range pieces {
			delta(obj{"type", "input_json_delta", "partial_json", piece})
		}
		stop()
	}
	// A ping between the content and the end, as the API sends pings
	// whenever it pauses.
	ev("ping")
	d := obj{"stop_reason", "end_turn", "stop_sequence", nil}
	switch {
	case t.Truncated:
		d[1] = "max_tokens"
	case t.Refusal != "":
		d[1] = "refusal"
		d = append(d, "stop_details", obj{"type", "refusal", "category", nil, "explanation", nil})
	case len(t.ToolCalls) > 0:
		d[1] = "tool_use"
	}
	usage := obj{
		"input_tokens", u.Input, "cache_creation_input_tokens", u.CacheWrite,
		"cache_read_input_tokens", u.CacheRead, "output_tokens", u.Output,
	}
	if u.Reasoning > 0 {
		usage = append(usage, "output_tokens_details", obj{"thinking_tokens", u.Reasoning})
	}
	ev("message_delta", "delta", d, "usage", usage)
	ev("message_stop")
	return encoded{events: out}
}

// responsesUsage is u as a Responses usage object.
func responsesUsage(u Usage) obj {
	inDetails := obj{"cached_tokens", u.CacheRead}
	if u.CacheWrite > 0 {
		inDetails = append(inDetails, "cache_write_tokens", u.CacheWrite)
	}
	return obj{
		"input_tokens", u.Input, "input_tokens_details", inDetails,
		"output_tokens", u.Output, "output_tokens_details", obj{"reasoning_tokens", u.Reasoning},
		"total_tokens", u.Input + u.Output,
	}
}
