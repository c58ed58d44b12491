package fakeprovider

import (
	"fmt"
	"strings"
)

// validate checks the basics of a model request: a JSON object with a
// model, stream true, and the members each API requires.
func validate(mode Mode, raw []byte, body map[string]any, decodeErr error) *apiError {
	fail := func(param, msg string) *apiError {
		e := invalidRequest(param, msg)
		return &e
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return fail("", "The request body is empty; expected a JSON object.")
	}
	if decodeErr != nil || body == nil {
		return fail("", "We could not parse the JSON body of your request: expected a JSON object.")
	}
	if m, ok := body["model"].(string); !ok || m == "" {
		return fail("model", "model: a non-empty string is required.")
	}
	if st, _ := body["stream"].(bool); !st {
		return fail("stream", `stream: this fake serves streaming requests only; set "stream": true.`)
	}
	switch mode {
	case ModeChat:
		if _, ok := body["messages"].([]any); !ok {
			return fail("messages", "messages: an array is required.")
		}
		if e := checkAudioOutput(body); e != nil {
			return e
		}
	case ModeAnthropic:
		if _, ok := body["messages"].([]any); !ok {
			return fail("messages", "messages: Field required")
		}
		if mt, ok := body["max_tokens"].(float64); !ok || mt < 1 {
			return fail("max_tokens", "max_tokens: Field required (a positive integer)")
		}
		if e := checkCacheControl(body); e != nil {
			return e
		}
		if e := thinkingTurn(body); e != nil {
			return e
		}
	}
	return nil
}

// thinkingTurn enforces Anthropic's rule of one thinking configuration per
// assistant turn, a tool-use loop being part of the turn. A request whose
// last user message carries tool_result blocks continues the turn of the
// assistant message before it: with thinking on (enabled or adaptive) that
// message must start with a thinking or redacted_thinking block, as the API
// requires; with thinking off it must carry none, the turn having begun
// with thinking on. (With thinking off, thinking blocks left in the
// history are ignored, as the API ignores them.) A request whose last user
// message has no tool_result begins a new turn and may choose either mode.
func thinkingTurn(body map[string]any) *apiError {
	msgs, _ := body["messages"].([]any)
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			last = i
			break
		}
	}
	if last < 1 || !hasBlock(msgs[last], "tool_result") {
		return nil
	}
	asst := -1
	for i := last - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "assistant" {
			asst = i
			break
		}
	}
	if asst < 0 {
		return nil
	}
	first := ""
	if blocks, _ := msgs[asst].(map[string]any)["content"].([]any); len(blocks) > 0 {
		b, _ := blocks[0].(map[string]any)
		first, _ = b["type"].(string)
	}
	th, _ := body["thinking"].(map[string]any)
	on := th != nil && th["type"] != "disabled"
	// Only turning thinking on inside a turn is refused: that is the
	// documented 400. With thinking off the API ignores thinking blocks
	// still in the history, so this fake accepts them as well.
	if param := fmt.Sprintf("messages.%d.content.0.type", asst); on && first != "thinking" && first != "redacted_thinking" {
		e := invalidRequest(param, param+": expected `thinking` or `redacted_thinking`, found `"+first+
			"`: with thinking on, the assistant message whose tool use the request continues must begin with its thinking block (thinking cannot be turned on inside an assistant turn)")
		return &e
	}
	return nil
}

// hasBlock reports whether message m has a content block of type typ.
func hasBlock(m any, typ string) bool {
	mm, _ := m.(map[string]any)
	blocks, _ := mm["content"].([]any)
	for _, b := range blocks {
		if bm, _ := b.(map[string]any); bm["type"] == typ {
			return true
		}
	}
	return false
}

// includeUsage reports stream_options.include_usage.
func includeUsage(body map[string]any) bool {
	so, _ := body["stream_options"].(map[string]any)
	v, _ := so["include_usage"].(bool)
	return v
}

// wantsEncrypted reports whether include names reasoning.encrypted_content.
func wantsEncrypted(body map[string]any) bool {
	inc, _ := body["include"].([]any)
	for _, v := range inc {
		if v == "reasoning.encrypted_content" {
			return true
		}
	}
	return false
}

// checkAudioOutput applies the Chat API's rule for audio output: with
// "audio" in modalities, an audio object with a voice and a format is
// required.
func checkAudioOutput(body map[string]any) *apiError {
	mods, _ := body["modalities"].([]any)
	wants := false
	for _, m := range mods {
		wants = wants || m == "audio"
	}
	if !wants {
		return nil
	}
	a, _ := body["audio"].(map[string]any)
	voice, _ := a["voice"].(string)
	format, _ := a["format"].(string)
	if voice == "" || format == "" {
		e := invalidRequest("audio", `audio: "voice" and "format" are required when modalities includes "audio".`)
		return &e
	}
	return nil
}
