package chat

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/media"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/sse"
	"octet.dev/host/runtime/provider"
)

// unmarshalOpts are the edge's lenient options: unknown members are
// ignored, since servers add obfuscation, x_groq, prompt_filter_results,
// logprobs and more.
var unmarshalOpts = edge.Lenient

// chunk is the part of a chat.completion.chunk the decoder reads. It is
// reused for every event, so decoding a text delta allocates only the text.
type chunk struct {
	Choices []choice          `json:"choices"`
	Usage   *wireUsage        `json:"usage"`
	Error   *edge.ErrorObject `json:"error"`
}

type choice struct {
	Index        int    `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content          string `json:"content"`
	Refusal          string `json:"refusal"`
	ReasoningContent string `json:"reasoning_content"`
	// Reasoning is text only: servers disagree on its shape, and only the
	// plain-text form is reasoning text.
	Reasoning edge.TextOnly   `json:"reasoning"`
	ToolCalls []toolCallDelta `json:"tool_calls"`
	// Audio is audio output: its transcript, its base64 data, in pieces.
	Audio *deltaAudio `json:"audio"`
}

// deltaAudio is a piece of audio output (delta.audio): transcript text,
// base64 data of the requested format, and the id and expiry the next
// turn could refer to it by (not used: the transcript goes back as text).
type deltaAudio struct {
	Transcript edge.TextOnly `json:"transcript"`
	Data       edge.TextOnly `json:"data"`
}

type toolCallDelta struct {
	Index    optInt `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string       `json:"name"`
		Arguments edge.ArgText `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
		// CacheWriteTokens are the prompt tokens written to the cache
		// (OpenAI's CompletionUsage).
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's name for cached prompt tokens.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

func (u *wireUsage) neutral() provider.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	if cached == 0 {
		cached = u.PromptCacheHitTokens
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return provider.Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  cached,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
		TotalTokens:      total,
	}
}

// optInt is an integer that remembers whether it was present.
type optInt struct {
	v  int
	ok bool
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (o *optInt) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		*o = optInt{}
		return nil
	case '0':
		n, err := tok.Int()
		if err != nil {
			return err
		}
		*o = optInt{v: int(n), ok: true}
		return nil
	}
	return errors.New("index is not a number")
}

// toolAcc assembles one tool call from its deltas.
type toolAcc struct {
	index    int
	id, name string
	args     edge.Args
}

// decoder turns an event stream into provider.StreamEvents. It is the whole
// wire decoding of this mode, used by the HTTP Stream and directly by tests
// and benchmarks.
type decoder struct {
	sse  *sse.Reader
	c    chunk
	strs edge.Strings // the delta texts' storage (edge.Strings)
	edge.Queue

	tools    []toolAcc
	byIndex  map[int]int // position in tools of each index, once there are many
	nextIdx  int         // one past the highest index so far, at least 0
	flushed  bool        // tool calls were emitted
	finish   string      // normalized finish reason of choice 0
	done     bool        // [DONE] seen and EventFinish queued
	maxEvent int
	err      error // *provider.Error or what edge.ReadFailure returned

	// Audio output (audio.go): the spool folder and the response's audio
	// spool, opened by its first data.
	spoolDir string
	audio    *media.Spool
}

// decodeStream returns a decoder over r with the given event bound (zero or
// less: sse.DefaultMaxEventBytes).
func decodeStream(r io.Reader, maxEventBytes int) *decoder {
	d := &decoder{}
	d.sse, d.maxEvent = edge.NewSSE(r, maxEventBytes)
	return d
}

// Next advances to the next event. It returns false at the normal end (after
// EventFinish) or when err is set.
func (d *decoder) Next() bool {
	for !d.Pop() {
		if d.done || d.err != nil {
			return false
		}
		if d.err = d.LimitErr(); d.err != nil {
			return false
		}
		d.step()
	}
	return true
}

// Err returns the failure that stopped decoding, nil if none.
func (d *decoder) Err() error { return d.err }

// Finished reports whether EventFinish was delivered.
func (d *decoder) Finished() bool { return d.done && d.Drained() }

var doneMarker = []byte("[DONE]")

// step reads one SSE event and queues what it carries.
func (d *decoder) step() {
	if !d.sse.Next() {
		if err := d.sse.Err(); err != nil {
			d.err = edge.ReadFailure(err, d.maxEvent)
			return
		}
		// A [DONE] the server sent without the blank line that ends it
		// is still the server's own end marker.
		if ev, ok := d.sse.Pending(); ok && bytes.Equal(bytes.TrimSpace(ev.Data), doneMarker) {
			d.end()
			return
		}
		d.fail(provider.FailStreamCut, "", "stream ended before [DONE]", nil)
		return
	}
	ev := d.sse.Event()
	data := bytes.TrimSpace(ev.Data)
	switch ev.Type {
	case "", "message":
	case "error":
		d.errorEvent(data)
		return
	default:
		return // DESIGN §2: unknown event types are skipped
	}
	if bytes.Equal(data, doneMarker) {
		d.end()
		return
	}
	if len(data) == 0 {
		return
	}
	d.decodeChunk(data)
}

// decodeChunk applies one chat.completion.chunk.
func (d *decoder) decodeChunk(data []byte) {
	c := &d.c
	if !parseChunkFast(data, c, &d.strs) {
		// Unmarshal merges into existing values; clear what a chunk may
		// omit. json v2 zeroes reused slice elements itself.
		c.Choices, c.Usage, c.Error = c.Choices[:0], nil, nil
		if err := json.Unmarshal(data, c, unmarshalOpts); err != nil {
			d.fail(provider.FailDecode, "", "invalid chunk JSON", err)
			return
		}
	}
	if c.Error != nil {
		d.fail(provider.FailErrorEvent, c.Error.CodeOrType(), string(c.Error.Message), nil)
		return
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // n>1: only the first choice is the answer
		}
		dl := &ch.Delta
		// Some servers fill both fields with the same text; prefer the
		// DeepSeek-style field.
		reasoning := dl.ReasoningContent
		if reasoning == "" {
			reasoning = string(dl.Reasoning)
		}
		if reasoning != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Text: reasoning})
		}
		if dl.Content != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventText, Text: dl.Content})
		}
		if dl.Audio != nil {
			d.audioDelta(dl.Audio)
		}
		if dl.Refusal != "" {
			// CONTRACT §8: refusal text is answer text.
			d.Push(provider.StreamEvent{Kind: provider.EventText, Text: dl.Refusal})
		}
		for j := range dl.ToolCalls {
			d.addToolDelta(&dl.ToolCalls[j])
		}
		if ch.FinishReason != "" {
			d.finish = mapFinish(ch.FinishReason)
			d.flushTools()
		}
	}
	if c.Usage != nil {
		d.Add(provider.StreamEvent{Kind: provider.EventUsage, Usage: c.Usage.neutral()})
	}
}

// errorEvent handles an "event: error" SSE event.
func (d *decoder) errorEvent(data []byte) {
	var env struct {
		Error *edge.ErrorObject `json:"error"`
	}
	if err := json.Unmarshal(data, &env, unmarshalOpts); err == nil && env.Error != nil {
		d.fail(provider.FailErrorEvent, env.Error.CodeOrType(), string(env.Error.Message), nil)
		return
	}
	var e edge.ErrorObject
	if err := json.Unmarshal(data, &e, unmarshalOpts); err == nil && e.Message != "" {
		d.fail(provider.FailErrorEvent, e.CodeOrType(), string(e.Message), nil)
		return
	}
	d.fail(provider.FailErrorEvent, "", string(data), nil)
}

// addToolDelta merges one tool_calls[] entry into its call.
func (d *decoder) addToolDelta(t *toolCallDelta) {
	if d.flushed {
		return // the calls were already emitted at finish_reason
	}
	d.MarkStarted()
	acc := d.toolFor(t)
	if acc.id == "" {
		acc.id = t.ID
	}
	// The name normally arrives once; tolerate servers that repeat it in
	// every delta and ones that split it.
	if name := t.Function.Name; name != "" && name != acc.name {
		acc.name += name
	}
	d.AppendArgs(&acc.args, string(t.Function.Arguments))
}

// toolFor finds or creates the accumulator a delta belongs to. Calls are
// keyed by index, whatever its base; a delta without index continues the
// last call unless it carries a new id.
func (d *decoder) toolFor(t *toolCallDelta) *toolAcc {
	idx := t.Index.v
	if !t.Index.ok {
		n := len(d.tools)
		if n > 0 && (t.ID == "" || d.tools[n-1].id == "" || d.tools[n-1].id == t.ID) {
			return &d.tools[n-1]
		}
		idx = d.nextIdx
	}
	// A response has a handful of calls, found fastest by a scan; a
	// hostile one with thousands is looked up in a map, so that the
	// stream's cost stays linear in its length.
	if d.byIndex == nil {
		for i := range d.tools {
			if d.tools[i].index == idx {
				return &d.tools[i]
			}
		}
		if len(d.tools) == smallTools {
			d.byIndex = make(map[int]int, 4*smallTools)
			for i := range d.tools {
				d.byIndex[d.tools[i].index] = i
			}
		}
	} else if i, ok := d.byIndex[idx]; ok {
		return &d.tools[i]
	}
	if d.byIndex != nil {
		d.byIndex[idx] = len(d.tools)
	}
	d.nextIdx = max(d.nextIdx, idx+1)
	d.tools = append(d.tools, toolAcc{index: idx})
	return &d.tools[len(d.tools)-1]
}

// smallTools is how many calls are found by a scan before the decoder
// indexes them.
const smallTools = 16

// flushTools emits the assembled tool calls in index order, once.
func (d *decoder) flushTools() {
	if d.flushed {
		return
	}
	d.flushed = true
	for _, a := range d.tools {
		if a.name == "" {
			// Nothing can run it, and the call would go back in the
			// history, which strict servers refuse: the stream is not
			// a valid answer.
			d.fail(provider.FailDecode, "", "tool call at index "+strconv.Itoa(a.index)+" has no function name", nil)
			return
		}
	}
	// The sort moves calls: byIndex is stale from here on, which is
	// fine since no delta is merged after the flush.
	slices.SortStableFunc(d.tools, func(a, b toolAcc) int { return cmp.Compare(a.index, b.index) })
	d.byIndex = nil
	for _, a := range d.tools {
		id := a.id
		if id == "" {
			// The loop must pair results with calls; a server that sends
			// no id gets a stable one derived from the index.
			id = "call_" + strconv.Itoa(a.index)
		}
		d.Add(provider.StreamEvent{Kind: provider.EventToolCall, ToolCall: a.args.ToolCall(id, a.name)})
	}
}

// end handles [DONE]: pending tool calls, the audio, then EventFinish.
func (d *decoder) end() {
	d.flushTools()
	if d.err != nil {
		return
	}
	if d.finishAudio(); d.err != nil {
		return
	}
	reason := d.finish
	if reason == "" {
		// [DONE] without a finish_reason: the server ended normally.
		reason = provider.FinishStop
		if len(d.tools) > 0 {
			reason = provider.FinishToolCalls
		}
	}
	d.Add(provider.StreamEvent{Kind: provider.EventFinish, FinishReason: reason})
	d.done = true
}

// fail records a decoding failure; the Stream completes its facts.
func (d *decoder) fail(kind provider.FailKind, code, msg string, err error) {
	d.err = edge.Failure(kind, code, msg, err)
}

// mapFinish normalizes a Chat Completions finish_reason.
func mapFinish(r string) string {
	switch r {
	case "stop":
		return provider.FinishStop
	case "tool_calls", "function_call":
		return provider.FinishToolCalls
	case "length":
		return provider.FinishLength
	case "content_filter":
		return provider.FinishRefusal
	}
	return provider.FinishOther
}
