package responses

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// Native steering over the WebSocket transport. A call made
// with Request.NativeSteering returns a stream that is a provider.Steerer:
//
//   - Steer sends {"type":"response.steer","previous_response_id":…,
//     "input":"…"} on the call's socket, from any goroutine, while the
//     consumer reads the stream. Only type, previous_response_id and input
//     are sent; input is the text as a string.
//   - The decoder reports response.created (EventResponseCreated) and the
//     response.steer.accepted, .pending and .failed events. Their shapes,
//     from OpenAI's steering guide and API reference (the events are newer
//     than the published OpenAPI snapshots, so the generated SDK models
//     are the reference):
//
//     {"type":"response.steer.accepted","sequence_number":4,"steer":{"id":"steer_1","previous_response_id":"resp_1"}}
//     {"type":"response.steer.pending","sequence_number":9,"reason":"waiting_for_required_input","required_input":[…],"steer":{"id":"steer_1","previous_response_id":"resp_1"}}
//     {"type":"response.steer.failed","sequence_number":5,"steer":{"id":"steer_1","previous_response_id":"resp_1","input":"…"},"error":{"code":"…","message":"…"}}
//
//     stream_id (the lane of a multi-agent response) is ignored: steering is
//     only used on single-agent responses. required_input is not read: the
//     stubs it lists are the function calls of the completed response,
//     which the host answers anyway, every one, in the one response.create
//     that continues it. A response.incomplete whose incomplete_details
//     reason is "steered" ends with provider.FinishSteered.
//   - A stream that sent steers keeps its socket at its response's end
//     while some of them have no outcome yet (neither failed nor pending
//     nor committed by a successor's response.created): Next ends normally
//     and Follow hands the socket to a stream that reads what comes next.
//     That stream ends after the successor's response, or without a
//     response once every outstanding steer failed or is pending; then the
//     socket goes back with the steered response's continuation, so that
//     the response.create answering response.steer.pending
//     (Request.ContinueResponse) continues it by previous_response_id, as
//     the protocol requires.
//   - A follow's successor is itself a steerable stream: a steer sent
//     into it while it streams is answered like the first, and its own
//     Follow reads what comes next (a chain of steers on one socket).
//   - A socket that carried a successor is given back without an ordinary
//     continuation: the server's history there (the steered response, the
//     steering input, the successor) is not the host's request history,
//     so the next call sends its whole conversation. The one exception is
//     the response.create answering a response.steer.pending sent into a
//     successor: the call names the successor (Request.ContinueResponse),
//     and when its last assistant message is the successor's output
//     exactly, it goes with previous_response_id and only the messages
//     after that output (wsState.successor). The response that answers a
//     response.steer.pending (the call made with ContinueResponse) is
//     given back the same way: the server prepended the accepted input to
//     it, so its history there is no request of the host's either, and a
//     steer sent into it that comes back pending is answered by a call
//     that names it.

// wsSteer is the response.steer message.
type wsSteer struct {
	Type               string `json:"type"`
	PreviousResponseID string `json:"previous_response_id"`
	Input              string `json:"input"`
}

// wireSteer is the steer object of a response.steer.* event.
type wireSteer struct {
	ID                 edge.TextOnly  `json:"id"`
	PreviousResponseID edge.TextOnly  `json:"previous_response_id"`
	Input              jsontext.Value `json:"input"`
}

// inputText returns the input a response.steer.failed returned as text:
// the string, or the text parts of its user messages, a paragraph apart.
func (w *wireSteer) inputText() string {
	var s string
	if json.Unmarshal(w.Input, &s, unmarshalOpts) == nil {
		return s
	}
	var msgs []struct {
		Content jsontext.Value `json:"content"`
	}
	if json.Unmarshal(w.Input, &msgs, unmarshalOpts) != nil {
		return ""
	}
	var parts []string
	for _, m := range msgs {
		if json.Unmarshal(m.Content, &s, unmarshalOpts) == nil {
			parts = append(parts, s)
			continue
		}
		var cs []struct {
			Type edge.TextOnly `json:"type"`
			Text edge.TextOnly `json:"text"`
		}
		if json.Unmarshal(m.Content, &cs, unmarshalOpts) == nil {
			for _, c := range cs {
				if c.Type == "input_text" {
					parts = append(parts, string(c.Text))
				}
			}
		}
	}
	return strings.Join(parts, paragraph)
}

// steerEvent reports response.created or a response.steer.* event. They
// carry no content: nothing is charged to the output budget, and a
// missing member leaves the id empty (the consumer pairs outcomes with its
// steers in order then).
func (d *decoder) steerEvent(kind eventKind, ev *wireEvent) {
	if kind == evCreated {
		e := provider.StreamEvent{Kind: provider.EventResponseCreated}
		if ev.Response != nil {
			e.ID = string(ev.Response.ID)
		}
		d.Add(e)
		return
	}
	var e provider.StreamEvent
	switch kind {
	case evSteerAccepted:
		e.Kind = provider.EventSteerAccepted
	case evSteerPending:
		e.Kind = provider.EventSteerPending
	default:
		e.Kind = provider.EventSteerFailed
	}
	if w := ev.Steer; w != nil {
		e.ID = string(w.ID)
		if kind == evSteerFailed {
			e.Text = w.inputText()
		}
	}
	d.Add(e)
}

// cannotContinue is the failure of a call whose ContinueResponse is not
// what its socket can continue: nothing was sent.
func cannotContinue(respID string) error {
	return &provider.Error{Kind: provider.FailDecode, Err: provider.ErrCannotContinue,
		Message: "the call must continue response " + edge.Scrubber{}.Sanitize(respID) + " on its connection, which is not available"}
}

// steerState is the native steering of one WebSocket stream. Steer (any
// goroutine) and Next (the consumer's) share it under mu.
type steerState struct {
	mu sync.Mutex
	// ended: the stream reached its end (normal or not): no steer goes
	// out on it from then on.
	ended bool
	// outstanding counts the steers sent on the socket, by this stream or
	// the ones it follows, whose outcome was not read yet: a failure, a
	// pending notice, or (for the accepted ones) a successor's
	// response.created.
	outstanding int
	accepted    []string // steer ids accepted and not yet resolved
	held        bool     // ended normally with steers outstanding: the socket waits for Follow
	followed    atomic.Bool

	follow     bool     // the stream follows a held one
	inResponse bool     // a follow read a successor's response.created (the consumer's goroutine only)
	armed      bool     // a follow's idle watch runs (from its first Next)
	parent     *wsState // the steered response's continuation, restored when a follow ends without a response
	maxOutput  int      // the call's Request.MaxOutputBytes
}

var _ provider.Steerer = (*wsStream)(nil)

// steerable makes ws a natively steered call's stream.
func (ws *wsStream) steerable(maxOutput int) {
	ws.dec.steer = true
	ws.st = &steerState{inResponse: true, maxOutput: maxOutput}
}

// Steer implements provider.Steerer.
func (ws *wsStream) Steer(respID, input string, record func() error) error {
	st := ws.st
	if st == nil {
		return provider.ErrNotSteerable
	}
	frame, err := json.Marshal(&wsSteer{Type: "response.steer", PreviousResponseID: respID, Input: input}, marshalOpts)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	// A call whose context ended, or whose socket was closed (by that
	// context, the idle watch or Close), ends with a failure the consumer
	// has yet to read: nothing can leave on it any more, so nothing is
	// recorded (an intent recorded now would stay unknown for good).
	if st.ended || ws.closed.Load() || ws.s.closed.Load() || ws.ctx.Err() != nil {
		return provider.ErrNotSteerable
	}
	if record != nil {
		if err := record(); err != nil {
			return err
		}
	}
	// Counted before the write: from here on the stream's end waits for
	// this steer's outcome, whatever the write says.
	st.outstanding++
	ctx, cancel := context.WithTimeout(context.Background(), ws.p.idle)
	defer cancel()
	if err := ws.s.writeText(ctx, frame); err != nil {
		return &provider.Error{Kind: provider.FailStreamCut, RequestWritten: true, ContentStarted: true, Err: err,
			Message: ws.p.scrub.Sanitize("response.steer could not be sent: " + transportText(err))}
	}
	return nil
}

// note counts an outcome the consumer is about to read.
func (st *steerState) note(ev provider.StreamEvent) {
	st.mu.Lock()
	defer st.mu.Unlock()
	resolve := func(id string) {
		st.outstanding = max(st.outstanding-1, 0)
		if i := slices.Index(st.accepted, id); i >= 0 && id != "" {
			st.accepted = slices.Delete(st.accepted, i, i+1)
		} else if id == "" && ev.Kind == provider.EventSteerPending && len(st.accepted) > 0 {
			st.accepted = st.accepted[1:]
		}
	}
	switch ev.Kind {
	case provider.EventResponseCreated:
		if st.follow && !st.inResponse {
			// The successor: the commit point of every accepted steer.
			st.inResponse = true
			st.outstanding = max(st.outstanding-len(st.accepted), 0)
			st.accepted = st.accepted[:0]
		}
	case provider.EventSteerAccepted:
		st.accepted = append(st.accepted, ev.ID)
	case provider.EventSteerPending, provider.EventSteerFailed:
		resolve(ev.ID)
	}
}

// end marks the stream ended for steering.
func (st *steerState) end() {
	st.mu.Lock()
	st.ended = true
	st.mu.Unlock()
}

// hold ends a stream that ended normally; when steers are outstanding it
// keeps the socket for Follow and reports true.
func (ws *wsStream) hold() bool {
	st := ws.st
	st.mu.Lock()
	st.ended = true
	st.held = st.outstanding > 0
	st.mu.Unlock()
	if !st.held {
		return false
	}
	st.parent = ws.continuation()
	ws.released = true
	ws.dec.Release()
	ws.watch.stop()
	ws.stopCtx()
	return true
}

// quietEnd runs first in a steered stream's Next: a follow arms its idle
// watch on its first read, and ends normally, without a response, once
// nothing is outstanding and no successor began.
func (ws *wsStream) quietEnd() bool {
	st := ws.st
	if !st.follow || st.inResponse {
		return false
	}
	if !st.armed {
		st.armed = true
		ws.watch = newIdleWatch(ws.p.idle, ws.s.close)
	}
	if !ws.dec.Drained() {
		return false
	}
	st.mu.Lock()
	quiet := st.outstanding == 0
	st.mu.Unlock()
	if quiet {
		ws.release(true)
	}
	return quiet
}

// afterFollow is the continuation a follow leaves: the steered response's
// when no successor came; else the successor's, when it completed, which
// only a call naming it continues (wsState.successor).
func (ws *wsStream) afterFollow() *wsState {
	st := ws.st
	if !st.inResponse {
		return st.parent
	}
	if ws.dec.respID == "" {
		return nil
	}
	return &wsState{respID: ws.dec.respID, head: ws.req.head, textSum: ws.textSum.Sum64(), calls: ws.calls, successor: true}
}

// Follow implements provider.Steerer.
func (ws *wsStream) Follow(ctx context.Context) provider.Steerer {
	st := ws.st
	if st == nil {
		return nil
	}
	st.mu.Lock()
	ok := st.held && !st.followed.Load()
	out, acc := st.outstanding, slices.Clone(st.accepted)
	st.mu.Unlock()
	if !ok {
		return nil
	}
	st.followed.Store(true)
	f := newWSStream(ctx, ws.p, ws.s, ws.req, st.maxOutput)
	// Its idle watch starts with its first read (quietEnd): the consumer
	// may run the steered response's tools before it reads on.
	f.watch.stop()
	f.dec.spoolDir = ws.dec.spoolDir
	f.dec.steer = true
	f.st = &steerState{follow: true, outstanding: out, accepted: acc, parent: st.parent, maxOutput: st.maxOutput}
	return f
}
