package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Script is what the fake model answers: one Turn per request, in order,
// whatever the wire mode of the request.
type Script struct {
	// Models are the model ids GET /v1/models lists, before the ids named
	// by the turns. Requests may name any model; the fake does not check.
	Models []string `json:"models,omitempty"`
	// Turns are the answers, consumed in order (see Server.SetScript).
	Turns []Turn `json:"turns"`
	// Loading starts the server in a model-loading phase: the first
	// Loading requests to a model endpoint, in any mode, get llama.cpp's
	// answer while its model loads (LoadingBody, HTTP 503), before any
	// fault, turn or fixture is looked at and before the key is checked
	// (llama-server refuses every request so until the model is loaded,
	// API key or not). They consume nothing. Zero means the model is
	// ready from the start.
	Loading int `json:"loading,omitempty"`
	// Summaries answer the summarizer requests of context compaction (a
	// request whose body holds SummarizerMarker, the phrase the host's
	// summarizer system prompt carries), in order, apart from Turns: a
	// summarizer request never consumes a turn. When they run out, a
	// summarizer request gets DefaultSummary.
	Summaries []Turn `json:"summaries,omitempty"`
	// ContextWindow, when positive, is the fake model's context window in
	// tokens, counted as the request body's bytes / 4: a larger request
	// (summarizer requests too) gets the context-overflow error of
	// OverflowStyle instead of an answer, and consumes nothing.
	ContextWindow int `json:"context_window,omitempty"`
	// OverflowStyle is the form of that error (see OverflowFault); empty
	// means the mode's own provider.
	OverflowStyle string `json:"overflow_style,omitempty"`
	// AutoUsage makes a turn without Usage report input tokens of the
	// request body's bytes / 4 and output tokens of its text's, so that a
	// long session's usage grows as a real one's does.
	AutoUsage bool `json:"auto_usage,omitempty"`
}

// LoadingBody is what llama.cpp's llama-server answers, with HTTP 503 and
// Content-Type application/json, to every request that comes while it is
// still loading its model (tools/server/server-http.cpp, the server-state
// middleware). The fake sends it during Script.Loading.
const LoadingBody = `{"error":{"message":"Loading model","type":"unavailable_error","code":503}}`

// Turn is the model's answer to one request. Each turn is encoded in the
// wire format of the endpoint that received the request. Empty fields are
// left out of the stream: a Turn with only Text streams only text.
type Turn struct {
	// Model is the model id the stream reports; empty means the model the
	// request named.
	Model string `json:"model,omitempty"`
	// Reasoning is streamed before everything else: chat
	// delta.reasoning_content, a Responses reasoning item with a summary,
	// an Anthropic thinking block with a signature.
	Reasoning string `json:"reasoning,omitempty"`
	// Signature is the opaque token sent with Reasoning: the Anthropic
	// signature_delta, or the Responses encrypted_content when the request
	// asked for "reasoning.encrypted_content". Empty means a fixed fake
	// value.
	Signature string `json:"signature,omitempty"`
	// RedactedReasoning, in the Anthropic mode only, is the data of a
	// redacted_thinking block streamed right after the thinking block (the
	// other wire formats have no such block and ignore it).
	RedactedReasoning string `json:"redacted_reasoning,omitempty"`
	// Text is the answer text.
	Text string `json:"text,omitempty"`
	// Refusal is refusal text, streamed after Text: chat delta.refusal, a
	// Responses refusal content part, or an Anthropic text block followed
	// by stop_reason "refusal".
	Refusal string `json:"refusal,omitempty"`
	// ToolCalls are streamed last, in order, each with its arguments in
	// pieces.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage is reported at the end of the stream.
	Usage Usage `json:"usage,omitzero"`
	// Chunk is the size in bytes of each streamed piece of text, reasoning
	// and arguments (never splitting a UTF-8 character). Zero means a few
	// words per piece for text and reasoning and 12 bytes for arguments;
	// a negative value sends each of them whole, in one delta.
	Chunk int `json:"chunk,omitempty"`
	// Images are images the model generates, in the Responses mode only
	// (the other modes ignore them): each an image_generation_call item
	// streamed after the reasoning and before the message, with its
	// partial images, its whole base64 result in response.output_item.done
	// and again in response.completed, as the API sends them.
	Images []Image `json:"images,omitempty"`
	// Audio is audio output, in the chat mode only: AudioTranscript
	// streamed as delta.audio.transcript pieces, then the bytes as
	// base64 delta.audio.data pieces (in a script file, base64 too).
	Audio           []byte `json:"audio,omitempty"`
	AudioTranscript string `json:"audio_transcript,omitempty"`
	// Truncated ends the turn as if it hit the output cap: chat
	// finish_reason "length", Responses response.incomplete with reason
	// "max_output_tokens", Anthropic stop_reason "max_tokens".
	Truncated bool `json:"truncated,omitempty"`
	// Steer makes the turn wait for a response.steer message and answer
	// it (Responses over WebSocket only; the other endpoints ignore it):
	// see Steer.
	Steer *Steer `json:"steer,omitempty"`
}

// Image is one generated image (Turn.Images). Byte fields are base64 in a
// script file.
type Image struct {
	// Data is the final image, sent whole as the item's result.
	Data []byte `json:"data"`
	// Partials are the partial images streamed before it
	// (response.image_generation_call.partial_image).
	Partials [][]byte `json:"partials,omitempty"`
	// OutputFormat is the format the item declares; empty means "png".
	// It need not match Data (a lying server).
	OutputFormat string `json:"output_format,omitempty"`
}

// ToolCall is one function call the model makes.
type ToolCall struct {
	// ID is the call id; empty means a generated one ("call_…" or
	// "toolu_…").
	ID string `json:"id,omitempty"`
	// Name is the function name.
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, streamed in pieces as
	// is (it need not be valid JSON). In a script file it may also be
	// written as a JSON object, which stands for its compact text.
	Arguments string `json:"arguments"`
}

// UnmarshalJSON accepts "arguments" as a string or as any other JSON value,
// which is then taken as its compact text.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var w struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	c.ID, c.Name, c.Arguments = w.ID, w.Name, ""
	a := bytes.TrimSpace(w.Arguments)
	switch {
	case len(a) == 0 || string(a) == "null":
	case a[0] == '"':
		if err := json.Unmarshal(a, &c.Arguments); err != nil {
			return err
		}
	default:
		var b bytes.Buffer
		if err := json.Compact(&b, a); err != nil {
			return err
		}
		c.Arguments = b.String()
	}
	return nil
}

// Usage is the token accounting a turn reports. The figures are written
// into each mode's own fields as they are, without conversion: chat
// prompt_tokens / prompt_tokens_details.cached_tokens (and
// cache_write_tokens when set) / completion_tokens /
// completion_tokens_details.reasoning_tokens; Responses input_tokens /
// input_tokens_details.cached_tokens (and cache_write_tokens when set) /
// output_tokens / output_tokens_details.reasoning_tokens; Anthropic
// input_tokens / cache_read_input_tokens / cache_creation_input_tokens /
// output_tokens (and output_tokens_details.thinking_tokens when set). Note
// that the providers count differently: OpenAI's input includes the cached
// tokens, Anthropic's does not.
type Usage struct {
	Input      int `json:"input,omitempty"`
	Output     int `json:"output,omitempty"`
	CacheRead  int `json:"cache_read,omitempty"`
	CacheWrite int `json:"cache_write,omitempty"`
	Reasoning  int `json:"reasoning,omitempty"`
}

// ParseScript decodes a Script from JSON (the format the
// octet-fake-provider command reads). Unknown fields are errors, so a typo
// does not silently drop part of a turn.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("fakeprovider: script: %w", err)
	}
	if dec.More() {
		return Script{}, errors.New("fakeprovider: script: data after the script object")
	}
	for i := range s.Turns {
		if st := s.Turns[i].Steer; st != nil && !knownSteerOutcome(st.Outcome) {
			return Script{}, fmt.Errorf("fakeprovider: script: turn %d: unknown steer outcome %q", i, st.Outcome)
		}
	}
	return s, nil
}

// knownSteerOutcome reports whether o is empty (SteerAccepted) or one of
// the Steer* outcomes.
func knownSteerOutcome(o string) bool {
	switch o {
	case "", SteerAccepted, SteerAcceptedCompleted, SteerPending, SteerFailed, SteerAcceptedFailed, SteerDrop, SteerSilent, SteerHold:
		return true
	}
	return false
}

// modelIDs returns the ids GET /v1/models lists.
func (s *Script) modelIDs() []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range s.Models {
		add(id)
	}
	for i := range s.Turns {
		add(s.Turns[i].Model)
	}
	return ids
}

// defaultWords is how many words a text or reasoning piece holds when
// Turn.Chunk is zero.
const defaultWords = 3

// defaultArgBytes is the size of an argument piece when Turn.Chunk is zero.
const defaultArgBytes = 12

// textPieces splits text into the deltas of a turn.
func (t *Turn) textPieces(text string) []string {
	switch {
	case text == "":
		return nil
	case t.Chunk < 0:
		return []string{text}
	case t.Chunk > 0:
		return byteChunks(text, t.Chunk)
	default:
		return wordChunks(text, defaultWords)
	}
}

// argPieces splits tool-call arguments into deltas.
func (t *Turn) argPieces(args string) []string {
	switch {
	case args == "":
		return nil
	case t.Chunk < 0:
		return []string{args}
	case t.Chunk > 0:
		return byteChunks(args, t.Chunk)
	default:
		return byteChunks(args, defaultArgBytes)
	}
}

// byteChunks splits s into pieces of n bytes, extending a piece to the end
// of a UTF-8 character it would cut.
func byteChunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// wordChunks splits s into pieces of n words, each word with the space
// that follows it.
func wordChunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := 0
		for w := 0; w < n && end < len(s); w++ {
			// Leading space, then the word, then its trailing space.
			for end < len(s) && isSpace(s, end) {
				end += runeLen(s, end)
			}
			for end < len(s) && !isSpace(s, end) {
				end += runeLen(s, end)
			}
			for end < len(s) && isSpace(s, end) {
				end += runeLen(s, end)
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func isSpace(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

func runeLen(s string, i int) int {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}
