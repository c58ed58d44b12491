package messages

import (
	"bytes"
	"io"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/sse"
	"octet.dev/host/runtime/provider"
)

// blockState is one content block of the message being decoded.
type blockState struct {
	index    int64
	kind     tag
	id, name string
	args     edge.Args      // tool_use: the input_json_delta pieces
	input    jsontext.Value // tool_use: the input given in content_block_start
	sig      string         // thinking: the signature
	stopped  bool
}

// smallBlocks is how many blocks are found by a scan before the decoder
// indexes them.
const smallBlocks = 16

// noBlock marks the absence of a held-back tool_use block.
const noBlock = -1

// decoder turns an event stream into provider.StreamEvents. It is the whole
// wire decoding of this mode, used by the HTTP Stream and directly by tests
// and benchmarks.
type decoder struct {
	sse *sse.Reader
	w   wireEvent
	edge.Queue

	blocks []blockState
	// latest maps a block index to the position in blocks of the latest
	// block with it, once there are many blocks (see block).
	latest map[int64]int
	// held is the index in blocks of a closed tool_use block whose call is
	// held back until the message goes on (noBlock when none).
	held     int
	usage    usageAcc
	stop     string // the raw stop_reason, "" until message_delta
	texted   bool   // a text event was emitted
	ended    bool   // message_delta seen
	calls    int    // tool calls emitted
	done     bool   // message_stop seen and EventFinish queued
	maxEvent int
	err      error // *provider.Error or what edge.ReadFailure returned
}

// decodeStream returns a decoder over r with the given event bound (zero or
// less: sse.DefaultMaxEventBytes).
func decodeStream(r io.Reader, maxEventBytes int) *decoder {
	d := &decoder{held: noBlock}
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

// step reads one SSE event and queues what it carries.
func (d *decoder) step() {
	if !d.sse.Next() {
		if err := d.sse.Err(); err != nil {
			d.err = edge.ReadFailure(err, d.maxEvent)
			return
		}
		// A message_stop the server sent without the blank line that ends
		// it is still the server's own end marker.
		if ev, ok := d.sse.Pending(); ok && d.isMessageStop(ev) {
			d.messageStop()
			return
		}
		d.fail(provider.FailStreamCut, "", "stream ended before message_stop", nil)
		return
	}
	ev := d.sse.Event()
	switch ev.Type {
	case "", "message", "error":
		// Untyped events (a proxy that drops event lines) are told apart
		// by their JSON type; an error event is read whatever it holds.
	case "ping":
		return
	default:
		if tagOf(ev.Type) == tagUnknown {
			return // DESIGN §2: unknown event types are skipped
		}
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		if ev.Type == "error" {
			d.fail(provider.FailErrorEvent, "", "error event without data", nil)
		}
		return
	}
	w := &d.w
	*w = wireEvent{}
	if err := json.Unmarshal(data, w, unmarshalOpts); err != nil {
		if ev.Type == "error" {
			d.fail(provider.FailErrorEvent, "", string(data), nil)
			return
		}
		d.fail(provider.FailDecode, "", "invalid event JSON", err)
		return
	}
	typ := w.Type
	if typ == tagUnknown && ev.Type != "" {
		// The JSON has no (known) type: trust the event line.
		typ = tagOf(ev.Type)
	}
	if ev.Type == "error" {
		typ = tagError
	}
	d.apply(typ, w)
}

// apply handles one decoded event.
func (d *decoder) apply(typ tag, w *wireEvent) {
	switch typ {
	case tagMessageStart:
		if w.Message != nil && w.Message.Usage != nil {
			d.usage.merge(w.Message.Usage)
		}
	case tagContentBlockStart:
		d.blockStart(w)
	case tagContentBlockDelta:
		d.blockDelta(w)
	case tagContentBlockStop:
		d.blockStop(w.Index)
	case tagMessageDelta:
		d.messageDelta(w)
	case tagMessageStop:
		d.messageStop()
	case tagError:
		if w.Error != nil {
			d.fail(provider.FailErrorEvent, w.Error.TypeOrCode(), string(w.Error.Message), nil)
			return
		}
		d.fail(provider.FailErrorEvent, "", "error event", nil)
	}
	// ping and unknown types carry nothing.
}

// isMessageStop reports whether an event the stream ended inside is a
// complete message_stop.
func (d *decoder) isMessageStop(ev sse.Event) bool {
	if ev.Type != "" && ev.Type != "message" && ev.Type != "message_stop" {
		return false
	}
	var w struct {
		Type tag `json:"type"`
	}
	if json.Unmarshal(bytes.TrimSpace(ev.Data), &w, unmarshalOpts) != nil {
		return false
	}
	return w.Type == tagMessageStop || (w.Type == tagUnknown && ev.Type == "message_stop")
}

// blockStart opens a content block.
func (d *decoder) blockStart(w *wireEvent) {
	// The model went on: a held-back call is complete.
	d.release()
	cb := &w.ContentBlock
	d.MarkStarted()
	d.blocks = append(d.blocks, blockState{index: w.Index, kind: cb.Type, id: cb.ID, name: cb.Name})
	if d.latest == nil && len(d.blocks) > smallBlocks {
		d.latest = make(map[int64]int, 4*smallBlocks)
		for i := range d.blocks {
			d.latest[d.blocks[i].index] = i
		}
	} else if d.latest != nil {
		d.latest[w.Index] = len(d.blocks) - 1
	}
	b := &d.blocks[len(d.blocks)-1]
	switch cb.Type {
	case tagText:
		if cb.Text != "" {
			d.texted = true
			d.Push(provider.StreamEvent{Kind: provider.EventText, Text: cb.Text})
		}
	case tagThinking:
		if cb.Thinking != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Text: cb.Thinking})
		}
		b.sig = cb.Signature
	case tagRedactedThinking:
		// Encrypted whole, complete in its start event: nothing to show,
		// but it must go back with the turn.
		if cb.Data != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Redacted: cb.Data})
		}
	case tagToolUse:
		if len(cb.Input) > 0 {
			b.input = bytes.Clone(cb.Input)
		}
	}
	// Server tool blocks and other kinds are not this host's to run.
}

// blockDelta applies one content_block_delta.
func (d *decoder) blockDelta(w *wireEvent) {
	dl := &w.Delta
	switch dl.Type {
	case tagTextDelta:
		if dl.Text != "" {
			d.texted = true
			d.Push(provider.StreamEvent{Kind: provider.EventText, Text: dl.Text})
		}
	case tagThinkingDelta:
		if dl.Thinking != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Text: dl.Thinking})
		}
	case tagSignatureDelta:
		if i := d.block(w.Index); i != noBlock && d.blocks[i].kind == tagThinking && !d.blocks[i].stopped {
			d.blocks[i].sig += dl.Signature
		}
	case tagInputJSONDelta:
		if i := d.block(w.Index); i != noBlock && d.blocks[i].kind == tagToolUse && !d.blocks[i].stopped {
			b := &d.blocks[i]
			d.MarkStarted()
			d.AppendArgs(&b.args, dl.PartialJSON)
		}
	}
	// citations_delta and unknown deltas are skipped.
}

// blockStop closes a content block.
func (d *decoder) blockStop(index int64) {
	i := d.block(index)
	if i == noBlock || d.blocks[i].stopped {
		return
	}
	b := &d.blocks[i]
	b.stopped = true
	switch b.kind {
	case tagThinking:
		if b.sig != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Signature: b.sig})
		}
	case tagToolUse:
		if d.stop == "max_tokens" {
			// The block was still open when the output cap hit: its
			// input may be cut.
			return
		}
		d.release()
		d.held = i
		if d.ended {
			// A late stop after message_delta: nothing can cut it now.
			d.release()
		}
	}
}

// messageDelta applies the stop reason and the cumulative usage.
func (d *decoder) messageDelta(w *wireEvent) {
	if r := w.Delta.StopReason; r != "" {
		d.stop = r
	}
	if ex := w.Delta.StopDetails.Explanation; d.stop == "refusal" && !d.texted && ex != "" {
		// A refusal that said nothing in text still says why in its
		// stop_details: that is the refusal text, and refusal text is
		// answer text (CONTRACT §8), so the answer is never silently
		// empty.
		d.texted = true
		d.Push(provider.StreamEvent{Kind: provider.EventText, Text: ex})
	}
	if w.Usage != nil {
		d.usage.merge(w.Usage)
	}
	d.ended = true
	if d.stop == "max_tokens" {
		// The cap cut the message inside or right after the held-back
		// block: its input may be incomplete, so it is never a call.
		d.held = noBlock
		return
	}
	d.release()
}

// messageStop ends the message: the held-back call (when no message_delta
// came), usage, then EventFinish.
func (d *decoder) messageStop() {
	if d.stop != "max_tokens" {
		d.release()
	}
	if d.err != nil {
		return
	}
	if d.usage.seen && !d.usage.bad {
		d.Add(provider.StreamEvent{Kind: provider.EventUsage, Usage: d.usage.neutral()})
	}
	d.Add(provider.StreamEvent{Kind: provider.EventFinish, FinishReason: d.finishReason()})
	d.done = true
}

// release emits the held-back tool call, if any.
func (d *decoder) release() {
	if d.held == noBlock {
		return
	}
	b := &d.blocks[d.held]
	d.held = noBlock
	call := b.args.ToolCall(b.id, b.name)
	if call.ArgumentsDropped == 0 && len(bytes.TrimSpace(b.args.Bytes())) == 0 {
		// No input_json_delta pieces: the input came whole in
		// content_block_start, or the call takes no arguments.
		call.Arguments = "{}"
		if in := bytes.TrimSpace(b.input); len(in) > 0 && string(in) != "{}" {
			call.Arguments = string(in)
		}
	}
	if b.name == "" {
		// Nothing can run it, and the call would go back in the
		// history, which the API refuses: not a valid answer.
		d.fail(provider.FailDecode, "", "tool_use block at index "+strconv.FormatInt(b.index, 10)+" has no name", nil)
		return
	}
	id := b.id
	if id == "" {
		// The loop must pair results with calls: a block without an id
		// gets a stable one derived from its index.
		id = "toolu_" + strconv.FormatInt(b.index, 10)
	}
	d.calls++
	call.ID = id
	d.Add(provider.StreamEvent{Kind: provider.EventToolCall, ToolCall: call})
}

// block returns the position in blocks of the latest block with index,
// noBlock when none started.
func (d *decoder) block(index int64) int {
	// A message has a handful of blocks, found fastest by a scan; a
	// hostile one with thousands is looked up in a map, so that the
	// stream's cost stays linear in its length.
	if d.latest != nil {
		if i, ok := d.latest[index]; ok {
			return i
		}
		return noBlock
	}
	for i := len(d.blocks) - 1; i >= 0; i-- {
		if d.blocks[i].index == index {
			return i
		}
	}
	return noBlock
}

// finishReason normalizes the stop reason.
func (d *decoder) finishReason() string {
	switch d.stop {
	case "end_turn", "stop_sequence":
		return provider.FinishStop
	case "tool_use":
		return provider.FinishToolCalls
	case "max_tokens":
		return provider.FinishLength
	case "model_context_window_exceeded":
		return provider.FinishContextWindow
	case "refusal":
		return provider.FinishRefusal
	case "":
		// message_stop without a stop reason: the server ended normally.
		if d.calls > 0 {
			return provider.FinishToolCalls
		}
		return provider.FinishStop
	}
	// pause_turn and reasons newer than this package.
	return provider.FinishOther
}

// fail records a decoding failure; the Stream completes its facts.
func (d *decoder) fail(kind provider.FailKind, code, msg string, err error) {
	d.err = edge.Failure(kind, code, msg, err)
}
