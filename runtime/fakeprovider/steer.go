package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// Native steering on the WebSocket endpoint. A Turn with Steer set sends
// the first events of its response, then waits for the client's
// {"type":"response.steer","previous_response_id":…,"input":…} message
// (recorded in Requests like any message) and answers it as Steer.Outcome
// says, in the shapes of OpenAI's steering events:
//
//	{"type":"response.steer.accepted","sequence_number":…,"steer":{"id":"steer_fakeN","previous_response_id":"resp_fakeN"}}
//	{"type":"response.steer.pending","sequence_number":…,"reason":"waiting_for_required_input","required_input":[{"type":"function_call_output","call_id":…,"output":""}],"steer":{…}}
//	{"type":"response.steer.failed","sequence_number":…,"steer":{"previous_response_id":…,"input":…},"error":{"code":"steer_rejected","message":…}}
//
// A steered response that ends early ends with response.incomplete and
// incomplete_details.reason "steered". A successor is the next Turn of the
// Script (or a queued fixture), consumed by the steer message as a request
// would consume it, streamed as a new response with its own
// response.created. A successor turn with its own Steer is steered in
// turn, the same way, on the same connection (a chain: its own successor
// is the next turn again). The last response of the chain is what a
// previous_response_id on the connection may name next. After a
// pending outcome the steered response stays the one to continue: the
// client's next response.create, with the tool outputs, names it.
//
// A message other than a valid response.steer for the streaming response
// is answered with an invalid_request_error error event, and the turn goes
// on as if it had not come.

// Steer outcomes (Steer.Outcome).
const (
	// SteerAccepted accepts the steer, ends the response at once with
	// response.incomplete (reason "steered"), then streams the successor.
	SteerAccepted = "accepted"
	// SteerAcceptedCompleted accepts the steer, lets the response run to
	// response.completed, then streams the successor.
	SteerAcceptedCompleted = "accepted_completed"
	// SteerPending accepts the steer, lets the response complete (with
	// the turn's tool calls), then sends response.steer.pending naming
	// those calls as the required input.
	SteerPending = "pending"
	// SteerFailed refuses the steer before allocating an id
	// (response.steer.failed with the input and no steer id), then lets
	// the response complete.
	SteerFailed = "failed"
	// SteerAcceptedFailed accepts the steer, then fails it with the same
	// id, then lets the response complete.
	SteerAcceptedFailed = "accepted_failed"
	// SteerDrop closes the connection as soon as the steer arrives.
	SteerDrop = "drop"
	// SteerSilent never answers the steer: the response completes and
	// nothing more is sent.
	SteerSilent = "silent"
	// SteerHold never answers the steer and never ends the response:
	// nothing more is sent until the client closes the connection (or
	// the server closes). Messages that come meanwhile are recorded and
	// left unanswered.
	SteerHold = "hold"
)

// Steer scripts how a turn answers a response.steer (Turn.Steer).
type Steer struct {
	// AfterEvents is how many of the turn's events are sent before the
	// fake waits for the steer; zero means up to the first text delta
	// (response.created and response.in_progress when the turn has no
	// text). The terminal event is never sent before the steer.
	AfterEvents int `json:"after_events,omitempty"`
	// Outcome is one of the Steer* constants; empty means SteerAccepted.
	Outcome string `json:"outcome,omitempty"`
}

// wsPeer names the connection of a message, for the record.
type wsPeer struct {
	num  int
	path string
}

// firstDelta returns how many events come up to and including the first
// text delta, 2 (created, in_progress) when there is none.
func firstDelta(events [][]byte) int {
	for i, ev := range events {
		if bytes.HasPrefix(ev, []byte("event: response.output_text.delta\n")) {
			return i + 1
		}
	}
	return 2
}

// checkSteer returns why a message is not a response.steer for respID, ""
// when it is.
func checkSteer(typ websocket.MessageType, body map[string]any, decodeErr error, respID string) string {
	switch {
	case typ != websocket.MessageText:
		return "messages must be text"
	case decodeErr != nil || body == nil:
		return "the message is not a JSON object"
	case body["type"] != "response.steer":
		return fmt.Sprintf("fakeprovider: expected response.steer while response %s streams, got %v", respID, body["type"])
	case body["previous_response_id"] != respID:
		return fmt.Sprintf("Steering target response '%v' is not active on this connection.", body["previous_response_id"])
	}
	for k := range body {
		if k != "type" && k != "previous_response_id" && k != "input" {
			return fmt.Sprintf("Unknown parameter: '%s'.", k)
		}
	}
	switch in := body["input"].(type) {
	case string:
		if in != "" {
			return ""
		}
	case []any:
		if len(in) > 0 {
			return ""
		}
	}
	return "input: a non-empty string or array of user messages is required."
}

// answerSteered plays a turn with Steer set: its first events, the wait
// for the steer, the outcome, and the successor. It reports the response
// a previous_response_id may name next and whether the answer was sent
// whole.
func (s *Server) answerSteered(ctx context.Context, conn *websocket.Conn, p plan, create map[string]any, events [][]byte, respID string, n int, peer wsPeer, send func([][]byte) bool) (string, bool) {
	st := p.t.Steer
	k := st.AfterEvents
	if k <= 0 {
		k = firstDelta(events)
	}
	k = min(k, max(len(events)-1, 0))
	if !send(events[:k]) {
		return "", false
	}
	typ, data, err := conn.Read(ctx)
	if err != nil {
		return "", false
	}
	var body map[string]any
	decodeErr := json.Unmarshal(data, &body)
	idx := s.record(Request{Mode: ModeResponses, Method: MethodMessage, Path: peer.path, Turn: -1, WebSocket: peer.num, Header: http.Header{}, Body: body})
	rest := events[k:]
	if msg := checkSteer(typ, body, decodeErr, respID); msg != "" {
		if s.sendWS(ctx, conn, errorMessage("invalid_request_error", msg)) != nil {
			return "", false
		}
		return respID, send(rest)
	}
	seq := k
	msg := func(typ string, fields ...any) []byte {
		seq++
		return encode(append(obj{"type", typ, "sequence_number", seq}, fields...))
	}
	steerID := fmt.Sprintf("steer_fake%d", n)
	ref := obj{"id", steerID, "previous_response_id", respID}
	accepted := func() bool { return s.sendWS(ctx, conn, msg("response.steer.accepted", "steer", ref)) == nil }
	failed := func(id string) bool {
		steer := obj{"previous_response_id", respID, "input", body["input"]}
		if id != "" {
			steer = append(obj{"id", id}, steer...)
		}
		return s.sendWS(ctx, conn, msg("response.steer.failed", "steer", steer,
			"error", obj{"type", "invalid_request_error", "code", "steer_rejected", "message", "fakeprovider: the steering input was not taken"})) == nil
	}
	switch st.Outcome {
	case SteerDrop:
		_ = conn.CloseNow()
		return "", false
	case SteerSilent:
		return respID, send(rest)
	case SteerHold:
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return "", false
			}
			var body map[string]any
			_ = json.Unmarshal(data, &body)
			s.record(Request{Mode: ModeResponses, Method: MethodMessage, Path: peer.path, Turn: -1, WebSocket: peer.num, Header: http.Header{}, Body: body})
		}
	case SteerFailed:
		return respID, failed("") && send(rest)
	case SteerAcceptedFailed:
		return respID, accepted() && failed(steerID) && send(rest)
	case SteerPending:
		if !accepted() || !send(rest) {
			return "", false
		}
		ep := &encodeParams{n: n}
		stubs := arr{}
		for i, tc := range p.t.ToolCalls {
			id := tc.ID
			if id == "" {
				id = ep.id("call", i)
			}
			stubs = append(stubs, obj{"type", "function_call_output", "call_id", id, "output", ""})
		}
		return respID, s.sendWS(ctx, conn, msg("response.steer.pending", "reason", "waiting_for_required_input",
			"required_input", stubs, "steer", ref)) == nil
	case SteerAcceptedCompleted:
		if !accepted() || !send(rest) {
			return "", false
		}
	default:
		model, _ := create["model"].(string)
		if !accepted() || s.sendWS(ctx, conn, msg("response.incomplete", "response", obj{
			"id", respID, "object", "response", "status", "incomplete", "error", nil,
			"incomplete_details", obj{"reason", "steered"}, "model", model, "output", arr{},
			"store", false, "usage", responsesUsage(p.t.Usage),
		})) != nil {
			return "", false
		}
	}
	return s.successor(ctx, conn, create, idx, data, peer, send)
}

// successor streams the steered response's successor: the next turn,
// consumed by the steer message idx. A successor turn with Steer set is
// itself steered (answerSteered), so steers chain on one connection.
func (s *Server) successor(ctx context.Context, conn *websocket.Conn, create map[string]any, idx int, raw []byte, peer wsPeer, send func([][]byte) bool) (string, bool) {
	next := s.dispatch(ModeResponses, idx, raw)
	if next.turn < 0 || next.fault != nil {
		_ = s.sendWS(ctx, conn, errorMessage("server_error", "fakeprovider: no script turn for the steered response's successor"))
		return "", false
	}
	model := next.t.Model
	if model == "" {
		model, _ = create["model"].(string)
	}
	m := int(s.seq.Add(1))
	enc := encodeTurn(ModeResponses, &encodeParams{turn: &next.t, model: model, n: m, created: time.Now().Unix(),
		includeUsage: true, encrypted: wantsEncrypted(create)})
	if next.t.Steer != nil {
		return s.answerSteered(ctx, conn, next, create, enc.events, enc.respID, m, peer, send)
	}
	return enc.respID, send(enc.events)
}
