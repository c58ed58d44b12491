package responses

import (
	"bytes"
	"cmp"
	"io"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/media"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/sse"
	"octet.dev/host/runtime/provider"
)

// eventKind is a stream event type this package acts on.
type eventKind uint8

const (
	evUnknown        eventKind = iota // skipped (DESIGN §2)
	evTextDelta                       // response.output_text.delta
	evRefusalDelta                    // response.refusal.delta
	evSummaryDelta                    // response.reasoning_summary_text.delta
	evReasoningDelta                  // response.reasoning_text.delta
	evArgsDelta                       // response.function_call_arguments.delta
	evArgsDone                        // response.function_call_arguments.done
	evItemAdded                       // response.output_item.added
	evItemDone                        // response.output_item.done
	evCreated                         // response.created (native steering only)
	evSteerAccepted                   // response.steer.accepted (native steering only)
	evSteerPending                    // response.steer.pending (native steering only)
	evSteerFailed                     // response.steer.failed (native steering only)
	evCompleted                       // response.completed
	evIncomplete                      // response.incomplete
	evFailed                          // response.failed
	evError                           // error
)

// kindOf maps an event type to its kind. The switch on a converted byte
// slice does not allocate.
func kindOf(typ []byte) eventKind {
	switch string(typ) {
	case "response.output_text.delta":
		return evTextDelta
	case "response.refusal.delta":
		return evRefusalDelta
	case "response.reasoning_summary_text.delta":
		return evSummaryDelta
	case "response.reasoning_text.delta":
		return evReasoningDelta
	case "response.function_call_arguments.delta":
		return evArgsDelta
	case "response.function_call_arguments.done":
		return evArgsDone
	case "response.output_item.added":
		return evItemAdded
	case "response.output_item.done":
		return evItemDone
	case "response.created":
		return evCreated
	case "response.steer.accepted":
		return evSteerAccepted
	case "response.steer.pending":
		return evSteerPending
	case "response.steer.failed":
		return evSteerFailed
	case "response.completed":
		return evCompleted
	case "response.incomplete":
		return evIncomplete
	case "response.failed":
		return evFailed
	case "error":
		return evError
	}
	return evUnknown
}

// isDelta reports whether k is one of the frequent delta events the fast
// path decodes whole.
func (k eventKind) isDelta() bool { return k >= evTextDelta && k <= evArgsDelta }

// isTerminal reports whether k ends the response.
func (k eventKind) isTerminal() bool { return k >= evCompleted }

// isSteering reports whether k is read only by a decoder of a natively
// steered call (steer.go); every other decoder skips it unread.
func (k eventKind) isSteering() bool { return k >= evCreated && k <= evSteerFailed }

// decoder turns an event stream into provider.StreamEvents. It is the whole
// wire decoding of this mode, used by the HTTP Stream and directly by tests
// and benchmarks.
type decoder struct {
	sse     *sse.Reader
	fe      fastEvent
	scratch []byte       // unescaping buffer of the fast path
	strs    edge.Strings // the delta texts' storage (edge.Strings)
	ev      wireEvent
	edge.Queue

	items         []item
	byIndex       map[int]int // position in items of each output_index, once there are many
	lastText      int         // output_index of the last answer text, -1 for none
	lastReasoning int         // output_index of the last reasoning text, -1 for none
	calls         int         // function calls emitted
	done          bool
	maxEvent      int
	err           error // *provider.Error or what edge.ReadFailure returned

	// msgs, when set, replaces sse as the source of events: each message
	// is the data of one event (the WebSocket transport, websocket.go).
	// A message longer than longAt may come as its first bytes (data)
	// and a reader of the rest (rest), which is read before the next
	// call; rest is nil for a message given whole.
	msgs func() (data []byte, rest io.Reader, err error)
	// respID is the response id response.completed gave.
	respID string
	// steer: the call is natively steered (Request.NativeSteering): the
	// response.created and response.steer.* events are reported
	// (steer.go).
	steer bool

	// Output media (media.go): the spool folder, the images of the event
	// being decoded that Divert spooled, and the spool still being
	// written by a long event.
	spoolDir string
	diverted []diverted
	spools   []*media.Spool
	images   int // image spools opened by this response (media.MaxOutputImages)
}

// decodeStream returns a decoder over r with the given event bound (zero or
// less: sse.DefaultMaxEventBytes).
func decodeStream(r io.Reader, maxEventBytes int) *decoder {
	d := &decoder{lastText: -1, lastReasoning: -1}
	d.sse, d.maxEvent = edge.NewSSE(r, maxEventBytes)
	d.sse.SetLongData(edge.LongDataAt, edge.MaxLongDataBytes, d.longData)
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

// doneMarker is Chat Completions' end marker. The Responses API has none,
// but some gateways append it; it is ignored.
var doneMarker = []byte("[DONE]")

// step reads one SSE event and queues what it carries. Images a long
// event spooled and no item claimed (duplicates) are removed after it.
func (d *decoder) step() {
	d.stepEvent()
	if len(d.diverted) > 0 {
		d.dropDiverted()
	}
}

// longAt is the length past which a message is a long event (longData):
// edge.LongDataAt, or the event bound when that is smaller.
func (d *decoder) longAt() int { return min(edge.LongDataAt, d.maxEvent) }

func (d *decoder) stepEvent() {
	if d.msgs != nil {
		data, rest, err := d.msgs()
		if err != nil {
			d.err = err
			return
		}
		if rest != nil || len(data) > d.longAt() {
			// As long as a long SSE line: read it the same way, as it
			// arrives, so the image is decoded once, from the message,
			// without the message ever being held whole, and the rest
			// of it is held to the event bound.
			src := io.Reader(bytes.NewReader(data))
			if rest != nil {
				src = io.MultiReader(src, rest)
			}
			if data, err = d.longData(nil, src); err != nil {
				d.err = edge.ReadFailure(err, d.maxEvent)
				return
			}
		}
		d.decodeEvent("", bytes.TrimSpace(data))
		return
	}
	if !d.sse.Next() {
		if err := d.sse.Err(); err != nil {
			d.err = edge.ReadFailure(err, d.maxEvent)
			return
		}
		// A terminal event the server sent without the blank line that
		// ends it is still the server's own end; anything else left
		// pending was cut.
		if ev, ok := d.sse.Pending(); ok {
			data := bytes.TrimSpace(ev.Data)
			if d.peekKind(ev.Type, data).isTerminal() {
				d.decodeEvent(ev.Type, data)
				if d.done || d.err != nil {
					return
				}
			}
		}
		d.fail(provider.FailStreamCut, "", "stream ended before response.completed", nil)
		return
	}
	ev := d.sse.Event()
	d.decodeEvent(ev.Type, bytes.TrimSpace(ev.Data))
}

// peekKind returns the kind of a complete, valid event, evUnknown for
// anything else.
func (d *decoder) peekKind(sseType string, data []byte) eventKind {
	if parseFast(data, &d.fe) {
		return kindFor(d.fe.typ, sseType)
	}
	var head struct {
		Type edge.TextOnly `json:"type"`
	}
	if json.Unmarshal(data, &head, unmarshalOpts) != nil {
		return evUnknown
	}
	return kindFor([]byte(head.Type), sseType)
}

// kindFor returns the kind of an event from its JSON type, or from its SSE
// event name when the JSON has none.
func kindFor(typ []byte, sseType string) eventKind {
	if len(typ) == 0 {
		return kindOf([]byte(sseType))
	}
	return kindOf(typ)
}

// decodeEvent applies one event. The JSON type decides what an event is;
// the SSE event name, which some servers leave out, is used only when the
// JSON has no type.
func (d *decoder) decodeEvent(sseType string, data []byte) {
	if len(data) == 0 || bytes.Equal(data, doneMarker) {
		return
	}
	var kind eventKind
	if fe := &d.fe; parseFast(data, fe) {
		kind = kindFor(fe.typ, sseType)
		if kind == evUnknown || kind.isSteering() && !d.steer {
			return
		}
		if kind.isDelta() && fe.fieldsOK {
			d.delta(kind, fe.outputIndex, fe.summaryIndex, fe.text(&d.scratch, &d.strs))
			return
		}
	} else {
		var head struct {
			Type edge.TextOnly `json:"type"`
		}
		if err := json.Unmarshal(data, &head, unmarshalOpts); err != nil {
			switch {
			case jsontext.Value(data).IsValid(unmarshalOpts):
				return // JSON but not an object: no type, nothing to read
			case sseType != "" && sseType != "message" && kindOf([]byte(sseType)) == evUnknown:
				return // not JSON, in an event this package does not read
			}
			d.fail(provider.FailDecode, "", "invalid event JSON", err)
			return
		}
		kind = kindFor([]byte(head.Type), sseType)
		if kind == evUnknown || kind.isSteering() && !d.steer {
			return
		}
	}
	if kind.isDelta() {
		var dv wireDelta
		if err := json.Unmarshal(data, &dv, unmarshalOpts); err != nil {
			d.fail(provider.FailDecode, "", "invalid "+kindName(kind)+" event", err)
			return
		}
		d.delta(kind, dv.OutputIndex, dv.SummaryIndex, dv.Delta)
		return
	}
	ev := &d.ev
	*ev = wireEvent{}
	if err := json.Unmarshal(data, ev, unmarshalOpts); err != nil {
		d.fail(provider.FailDecode, "", "invalid "+kindName(kind)+" event", err)
		return
	}
	switch kind {
	case evArgsDone:
		it := d.item(ev.OutputIndex)
		if !it.done {
			if it.typ == "" {
				it.typ = itemFunctionCall
			}
			if ev.Arguments != "" {
				d.SetArgs(&it.args, string(ev.Arguments))
			}
			it.argsFinal = true
			d.MarkStarted()
		}
	case evItemAdded:
		if ev.Item != nil {
			d.itemAdded(ev.OutputIndex, ev.Item)
		}
	case evItemDone:
		if ev.Item != nil {
			d.itemDone(ev.OutputIndex, ev.Item)
		}
	case evCreated, evSteerAccepted, evSteerPending, evSteerFailed:
		d.steerEvent(kind, ev)
	case evCompleted, evIncomplete:
		d.end(kind, data)
	case evFailed:
		code, msg := "", "response failed"
		if r := ev.Response; r != nil && r.Error != nil {
			code = r.Error.CodeOrType()
			if r.Error.Message != "" {
				msg = string(r.Error.Message)
			}
		}
		d.fail(provider.FailErrorEvent, code, msg, nil)
	case evError:
		code, msg := string(ev.Code), string(ev.Message)
		if e := ev.Error; e != nil {
			if code == "" {
				code = e.CodeOrType()
			}
			if msg == "" {
				msg = string(e.Message)
			}
		}
		if msg == "" {
			msg = "error event"
		}
		d.fail(provider.FailErrorEvent, code, msg, nil)
	}
}

// kindName names a kind in error messages.
func kindName(k eventKind) string {
	switch k {
	case evTextDelta:
		return "response.output_text.delta"
	case evRefusalDelta:
		return "response.refusal.delta"
	case evSummaryDelta:
		return "response.reasoning_summary_text.delta"
	case evReasoningDelta:
		return "response.reasoning_text.delta"
	case evArgsDelta:
		return "response.function_call_arguments.delta"
	case evArgsDone:
		return "response.function_call_arguments.done"
	case evItemAdded:
		return "response.output_item.added"
	case evItemDone:
		return "response.output_item.done"
	case evCreated:
		return "response.created"
	case evSteerAccepted:
		return "response.steer.accepted"
	case evSteerPending:
		return "response.steer.pending"
	case evSteerFailed:
		return "response.steer.failed"
	case evCompleted:
		return "response.completed"
	case evIncomplete:
		return "response.incomplete"
	case evFailed:
		return "response.failed"
	case evError:
		return "error"
	}
	return "unknown"
}

// end handles response.completed and response.incomplete: function calls
// still open, the usage, then EventFinish.
func (d *decoder) end(kind eventKind, data []byte) {
	resp := d.ev.Response
	if resp == nil {
		resp = &wireResponse{}
	}
	if kind == evCompleted {
		d.respID = string(resp.ID)
	}
	if len(d.items) == 0 && resp.Output {
		// Nothing was streamed, but the response has output: a server
		// that sends the result only at the end.
		var out wireOutput
		if err := json.Unmarshal(data, &out, unmarshalOpts); err != nil {
			d.fail(provider.FailDecode, "", "invalid "+kindName(kind)+" event", err)
			return
		}
		for i := range out.Response.Output {
			d.itemAdded(i, &out.Response.Output[i])
			d.itemDone(i, &out.Response.Output[i])
		}
	}
	// Calls never marked done, in output order. A cut response emits
	// only those whose arguments the server said were whole.
	// The sort moves items: byIndex is stale from here on, which is fine
	// since nothing is decoded after the end.
	slices.SortStableFunc(d.items, func(a, b item) int { return cmp.Compare(a.index, b.index) })
	d.byIndex = nil
	for i := range d.items {
		it := &d.items[i]
		if it.typ != itemFunctionCall || it.done {
			continue
		}
		if kind == evIncomplete && !it.argsFinal {
			it.done = true
			continue
		}
		d.emitCall(it)
	}
	if d.err != nil {
		return
	}
	if resp.Usage != nil {
		d.Add(provider.StreamEvent{Kind: provider.EventUsage, Usage: resp.Usage.neutral()})
	}
	reason := provider.FinishStop
	if d.calls > 0 {
		reason = provider.FinishToolCalls
	}
	if kind == evIncomplete {
		reason = provider.FinishOther
		if resp.IncompleteDetails != nil {
			switch resp.IncompleteDetails.Reason {
			case "max_output_tokens":
				reason = provider.FinishLength
			case "content_filter":
				reason = provider.FinishRefusal
			case "steered":
				reason = provider.FinishSteered
			}
		}
	}
	d.Add(provider.StreamEvent{Kind: provider.EventFinish, FinishReason: reason})
	d.done = true
}

// fail records a decoding failure; the Stream completes its facts.
func (d *decoder) fail(kind provider.FailKind, code, msg string, err error) {
	d.err = edge.Failure(kind, code, msg, err)
}
