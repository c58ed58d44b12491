package responses

import (
	"strconv"
	"strings"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// Output item types.
const (
	itemFunctionCall = "function_call"
	itemReasoning    = "reasoning"
	itemMessage      = "message"
	itemImage        = "image_generation_call"
)

// item is what the decoder knows of one output item. Items are keyed by
// output_index, never by item id: some servers (GitHub Copilot) change the
// id of an item between its events.
type item struct {
	index        int
	typ          string // "" until an output_item event names it
	callID, name string
	args         edge.Args
	argsFinal    bool // function_call_arguments.done gave the whole arguments
	texted       bool // answer text was streamed for it
	reasoned     bool // reasoning text was streamed for it
	summary      int  // summary_index of its last reasoning summary delta
	done         bool // output_item.done was handled (a call emitted or dropped)
}

// delta applies a text, refusal, reasoning or arguments delta.
func (d *decoder) delta(kind eventKind, index, summary int, text string) {
	switch kind {
	case evTextDelta, evRefusalDelta:
		// CONTRACT §8: refusal text is answer text.
		d.text(index, text)
	case evSummaryDelta:
		d.reasoning(index, summary, text)
	case evReasoningDelta:
		d.reasoning(index, -1, text)
	case evArgsDelta:
		it := d.item(index)
		if it.done || it.argsFinal {
			return // the call's arguments are already whole
		}
		if it.typ == "" {
			it.typ = itemFunctionCall
		}
		d.AppendArgs(&it.args, text)
		d.MarkStarted()
	}
}

// paragraph separates the text of different items, and of the parts of
// one reasoning summary, which the wire keeps apart and the neutral
// conversation joins.
const paragraph = "\n\n"

// text emits answer text of the item at index.
func (d *decoder) text(index int, text string) {
	if text == "" {
		return
	}
	d.item(index).texted = true
	if d.lastText >= 0 && d.lastText != index {
		d.Push(provider.StreamEvent{Kind: provider.EventText, Text: paragraph})
	}
	d.lastText = index
	d.Push(provider.StreamEvent{Kind: provider.EventText, Text: text})
}

// reasoning emits reasoning text of the item at index; summary is the
// summary part it belongs to, -1 for raw reasoning text.
func (d *decoder) reasoning(index, summary int, text string) {
	if text == "" {
		return
	}
	it := d.item(index)
	sep := d.lastReasoning >= 0 && d.lastReasoning != index ||
		it.reasoned && summary >= 0 && summary != it.summary
	it.reasoned = true
	if summary >= 0 {
		it.summary = summary
	}
	if sep {
		d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Text: paragraph})
	}
	d.lastReasoning = index
	d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Text: text})
}

// item returns the item at output index, creating it. The pointer is valid
// until the next call.
func (d *decoder) item(index int) *item {
	// A response has a handful of items, found fastest by a scan; a
	// hostile one with thousands is looked up in a map, so that the
	// stream's cost stays linear in its length.
	if d.byIndex == nil {
		for i := range d.items {
			if d.items[i].index == index {
				return &d.items[i]
			}
		}
		if len(d.items) == smallItems {
			d.byIndex = make(map[int]int, 4*smallItems)
			for i := range d.items {
				d.byIndex[d.items[i].index] = i
			}
		}
	} else if i, ok := d.byIndex[index]; ok {
		return &d.items[i]
	}
	if d.byIndex != nil {
		d.byIndex[index] = len(d.items)
	}
	d.items = append(d.items, item{index: index})
	return &d.items[len(d.items)-1]
}

// smallItems is how many items are found by a scan before the decoder
// indexes them.
const smallItems = 16

// itemAdded records a new output item; only function calls carry anything
// needed later (call id, name, sometimes the whole arguments).
func (d *decoder) itemAdded(index int, w *wireItem) {
	it := d.item(index)
	if w.Type != "" {
		it.typ = string(w.Type)
	}
	if it.typ != itemFunctionCall {
		return
	}
	d.MarkStarted()
	if w.CallID != "" {
		it.callID = string(w.CallID)
	}
	if w.Name != "" {
		it.name = string(w.Name)
	}
	if w.Arguments != "" && it.args.Len() == 0 {
		d.AppendArgs(&it.args, string(w.Arguments))
	}
}

// itemDone completes an output item: a function call is emitted (or
// dropped when the item says it was cut), encrypted reasoning is reported,
// and text the server never streamed as deltas is emitted from the item.
func (d *decoder) itemDone(index int, w *wireItem) {
	it := d.item(index)
	if it.done {
		return
	}
	if w.Type != "" {
		it.typ = string(w.Type)
	}
	switch it.typ {
	case itemFunctionCall:
		if w.CallID != "" {
			it.callID = string(w.CallID)
		}
		if w.Name != "" {
			it.name = string(w.Name)
		}
		if w.Arguments != "" {
			d.SetArgs(&it.args, string(w.Arguments))
			it.argsFinal = true
		}
		if w.Status == "incomplete" {
			it.done = true // its arguments were cut: never run half a call
			return
		}
		d.emitCall(it)
	case itemReasoning:
		it.done = true
		if !it.reasoned {
			d.reasoningFromParts(index, w)
		}
		if w.EncryptedContent != "" {
			d.Push(provider.StreamEvent{Kind: provider.EventReasoning, Signature: string(w.EncryptedContent), BlockID: string(w.ID)})
		}
	case itemImage:
		it.done = true
		d.image(w)
	case itemMessage:
		it.done = true
		if !it.texted {
			for _, p := range w.Content {
				switch p.Type {
				case "output_text":
					d.text(index, string(p.Text))
				case "refusal":
					d.text(index, string(p.Refusal))
				}
			}
		}
	default:
		it.done = true
	}
}

// reasoningFromParts emits the reasoning of a done item whose text was not
// streamed: its summary parts, else its reasoning_text content.
func (d *decoder) reasoningFromParts(index int, w *wireItem) {
	n := 0
	for i, p := range w.Summary {
		if p.Text != "" {
			d.reasoning(index, i, string(p.Text))
			n++
		}
	}
	if n > 0 {
		return
	}
	var b strings.Builder
	for _, p := range w.Content {
		if p.Type == "reasoning_text" {
			b.WriteString(string(p.Text))
		}
	}
	d.reasoning(index, -1, b.String())
}

// emitCall queues the tool call of a function-call item.
func (d *decoder) emitCall(it *item) {
	it.done = true
	if d.err != nil {
		return
	}
	if it.name == "" {
		// Nothing can run it, and the call would go back in the
		// history, which the API refuses: not a valid answer.
		d.fail(provider.FailDecode, "", "function call at output index "+strconv.Itoa(it.index)+" has no name", nil)
		return
	}
	id := it.callID
	if id == "" {
		// The loop must pair results with calls; a server that sends no
		// call id gets a stable one derived from the output index.
		id = "call_" + strconv.Itoa(it.index)
	}
	d.calls++
	d.Push(provider.StreamEvent{Kind: provider.EventToolCall, ToolCall: it.args.ToolCall(id, it.name)})
}
