package responses

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/provider"
)

// steerRead is what a steered stream reported.
type steerRead struct {
	created []string // response ids
	kinds   []provider.EventKind
	text    string
	calls   []provider.ToolCall
	finish  string
	failed  string // the input a response.steer.failed returned
	ids     []string
}

// readSteered drains s, calling onText once, at the first text event.
func readSteered(t *testing.T, s provider.Stream, onText func(respID string)) (steerRead, error) {
	t.Helper()
	var r steerRead
	for s.Next() {
		ev := s.Event()
		switch ev.Kind {
		case provider.EventResponseCreated:
			r.created = append(r.created, ev.ID)
		case provider.EventText:
			if r.text == "" && onText != nil {
				onText(r.created[len(r.created)-1])
				onText = nil
			}
			r.text += ev.Text
		case provider.EventToolCall:
			r.calls = append(r.calls, ev.ToolCall)
		case provider.EventFinish:
			r.finish = ev.FinishReason
		case provider.EventSteerAccepted, provider.EventSteerPending:
			r.kinds = append(r.kinds, ev.Kind)
			r.ids = append(r.ids, ev.ID)
		case provider.EventSteerFailed:
			r.kinds = append(r.kinds, ev.Kind)
			r.ids = append(r.ids, ev.ID)
			r.failed = ev.Text
		}
	}
	return r, s.Err()
}

// steerFrames returns the bodies of the messages the fake received, as
// "type" or "type prev=<id> items=<n>" for creates.
func steerFrames(fake *fakeprovider.Server) []map[string]any {
	_, msgs, _ := handshakes(fake)
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

func steeredQuestion() provider.Request {
	r := question
	r.NativeSteering = true
	return r
}

// Accepted: the steer goes out on the call's socket while it streams; the
// response ends steered, and Follow reads the successor's response on the
// same socket. The next call sends its whole conversation.
func TestWebSocketSteerAccepted(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{
		{Text: "Writing it with spaces and more words here", Steer: &fakeprovider.Steer{}},
		{Text: "Tabs it is.", Usage: fakeprovider.Usage{Input: 20, Output: 3}},
		{Text: "Done."},
	}, nil)
	s, err := p.Stream(context.Background(), steeredQuestion())
	if err != nil {
		t.Fatal(err)
	}
	st, ok := s.(provider.Steerer)
	if !ok {
		t.Fatal("a natively steered WebSocket call's stream is no Steerer")
	}
	recorded := 0
	first, err := readSteered(t, s, func(respID string) {
		if err := st.Steer(respID, "use tabs", func() error { recorded++; return nil }); err != nil {
			t.Errorf("steer: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if recorded != 1 || len(first.created) != 1 || first.finish != provider.FinishSteered ||
		len(first.kinds) != 1 || first.kinds[0] != provider.EventSteerAccepted || first.ids[0] == "" {
		t.Fatalf("steered response %+v, recorded %d", first, recorded)
	}
	f := st.Follow(context.Background())
	if f == nil {
		t.Fatal("no follow while the successor is outstanding")
	}
	if st.Follow(context.Background()) != nil {
		t.Fatal("a second Follow")
	}
	_ = s.Close() // the follow owns the socket now
	second, err := readSteered(t, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if len(second.created) != 1 || second.created[0] == first.created[0] || second.text != "Tabs it is." || second.finish != provider.FinishStop {
		t.Fatalf("successor %+v", second)
	}
	if f.Follow(context.Background()) != nil {
		t.Fatal("a follow of a settled successor")
	}
	// The next call reuses the socket, without a continuation.
	next := question
	next.Messages = append(next.Messages,
		provider.Message{Role: provider.RoleAssistant, Text: first.text},
		provider.Message{Role: provider.RoleUser, Text: "use tabs"},
		provider.Message{Role: provider.RoleAssistant, Text: second.text},
		provider.Message{Role: provider.RoleUser, Text: "thanks"})
	if _, err := call(t, p, next); err != nil {
		t.Fatal(err)
	}
	hs, _, _ := handshakes(fake)
	frames := steerFrames(fake)
	if len(hs) != 1 || len(frames) != 3 {
		t.Fatalf("%d handshakes, frames %v", len(hs), frames)
	}
	steer := frames[1]
	if steer["type"] != "response.steer" || steer["previous_response_id"] != first.created[0] || steer["input"] != "use tabs" || len(steer) != 3 {
		t.Fatalf("steer frame %v", steer)
	}
	if _, ok := frames[2]["previous_response_id"]; ok || len(frames[2]["input"].([]any)) != 5 {
		t.Fatalf("the call after a successor continued it: %v", frames[2])
	}
}

// A chain: the successor a follow reads is itself steerable; its steer
// goes out on the same socket naming the successor, and the follow's own
// Follow reads the second successor.
func TestWebSocketSteerChain(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{
		{Text: "Writing it with spaces and more words here", Steer: &fakeprovider.Steer{}},
		{Text: "Tabs then, four wide", Steer: &fakeprovider.Steer{}},
		{Text: "Tabs, eight wide."},
		{Text: "Done."},
	}, nil)
	s, err := p.Stream(context.Background(), steeredQuestion())
	if err != nil {
		t.Fatal(err)
	}
	var reads []steerRead
	var cur provider.Stream = s
	for i, input := range []string{"use tabs", "eight wide", ""} {
		st := cur.(provider.Steerer)
		var onText func(string)
		if input != "" {
			onText = func(respID string) {
				if err := st.Steer(respID, input, nil); err != nil {
					t.Errorf("steer %d: %v", i, err)
				}
			}
		}
		r, err := readSteered(t, cur, onText)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		reads = append(reads, r)
		next := st.Follow(context.Background())
		_ = cur.Close()
		if (next != nil) != (input != "") {
			t.Fatalf("response %d: follow %v", i, next != nil)
		}
		if next == nil {
			break
		}
		cur = next
	}
	if len(reads) != 3 || reads[0].finish != provider.FinishSteered || reads[1].finish != provider.FinishSteered ||
		reads[2].finish != provider.FinishStop || reads[2].text != "Tabs, eight wide." {
		t.Fatalf("reads %+v", reads)
	}
	for i, r := range reads[:2] {
		if len(r.kinds) != 1 || r.kinds[0] != provider.EventSteerAccepted || len(r.created) != 1 {
			t.Fatalf("response %d: %+v", i, r)
		}
	}
	if reads[0].created[0] == reads[1].created[0] || reads[1].created[0] == reads[2].created[0] {
		t.Fatalf("response ids %v %v %v", reads[0].created, reads[1].created, reads[2].created)
	}
	// The next call reuses the socket and sends its whole conversation.
	next := question
	next.Messages = append(next.Messages,
		provider.Message{Role: provider.RoleAssistant, Text: reads[0].text},
		provider.Message{Role: provider.RoleUser, Text: "use tabs"},
		provider.Message{Role: provider.RoleAssistant, Text: reads[1].text},
		provider.Message{Role: provider.RoleUser, Text: "eight wide"},
		provider.Message{Role: provider.RoleAssistant, Text: reads[2].text},
		provider.Message{Role: provider.RoleUser, Text: "thanks"})
	if _, err := call(t, p, next); err != nil {
		t.Fatal(err)
	}
	hs, _, _ := handshakes(fake)
	frames := steerFrames(fake)
	if len(hs) != 1 || len(frames) != 4 {
		t.Fatalf("%d handshakes, frames %v", len(hs), frames)
	}
	if frames[1]["type"] != "response.steer" || frames[1]["previous_response_id"] != reads[0].created[0] || frames[1]["input"] != "use tabs" ||
		frames[2]["type"] != "response.steer" || frames[2]["previous_response_id"] != reads[1].created[0] || frames[2]["input"] != "eight wide" {
		t.Fatalf("steer frames %v", frames[1:3])
	}
	if _, ok := frames[3]["previous_response_id"]; ok || len(frames[3]["input"].([]any)) != 7 {
		t.Fatalf("the call after the chain continued it: %v", frames[3])
	}
}

// A chain ending pending: the successor of the first steer completes with
// a tool call while the second steer waits for its output; the one
// response.create continues the successor (its previous_response_id)
// with the tool output only.
func TestWebSocketSteerChainPending(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{
		{Text: "Writing it with spaces and more words here", Steer: &fakeprovider.Steer{}},
		{Text: "Checking the weather now.", ToolCalls: []fakeprovider.ToolCall{weatherCall}, Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerPending}},
		{Text: "Sunny, in Celsius."},
	}, nil)
	s, err := p.Stream(context.Background(), steeredQuestion())
	if err != nil {
		t.Fatal(err)
	}
	st := s.(provider.Steerer)
	first, err := readSteered(t, s, func(respID string) {
		if err := st.Steer(respID, "check the weather", nil); err != nil {
			t.Errorf("steer: %v", err)
		}
	})
	if err != nil || first.finish != provider.FinishSteered {
		t.Fatalf("first %+v %v", first, err)
	}
	f1 := st.Follow(context.Background())
	_ = s.Close()
	if f1 == nil {
		t.Fatal("no follow")
	}
	second, err := readSteered(t, f1, func(respID string) {
		if err := f1.Steer(respID, "in Celsius", nil); err != nil {
			t.Errorf("steer: %v", err)
		}
	})
	if err != nil || len(second.created) != 1 || second.finish != provider.FinishToolCalls || len(second.calls) != 1 {
		t.Fatalf("successor %+v %v", second, err)
	}
	f2 := f1.Follow(context.Background())
	_ = f1.Close()
	if f2 == nil {
		t.Fatal("no follow of the successor while its steer is outstanding")
	}
	out, err := readSteered(t, f2, nil)
	if err != nil || len(out.created) != 0 || len(out.kinds) != 1 || out.kinds[0] != provider.EventSteerPending {
		t.Fatalf("follow %+v %v", out, err)
	}
	_ = f2.Close()
	req := steeredQuestion()
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Text: first.text},
		provider.Message{Role: provider.RoleUser, Text: "check the weather"},
		provider.Message{Role: provider.RoleAssistant, Text: second.text, ToolCalls: second.calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: second.calls[0].ID, ToolName: "weather", Text: "sunny"})
	req.ContinueResponse = second.created[0]
	if sum, err := call(t, p, req); err != nil || sum.Text != "Sunny, in Celsius." {
		t.Fatalf("the create after pending: %+v %v", sum, err)
	}
	hs, _, _ := handshakes(fake)
	frames := steerFrames(fake)
	if len(hs) != 1 || len(frames) != 4 || frames[2]["previous_response_id"] != second.created[0] {
		t.Fatalf("%d handshakes, frames %v", len(hs), frames)
	}
	create := frames[3]
	input := create["input"].([]any)
	if create["type"] != "response.create" || create["previous_response_id"] != second.created[0] || len(input) != 1 ||
		input[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("the create after pending %v", create)
	}
}

// A successor's continuation is taken only by the call that names it, and
// only when that call's last assistant message is the successor's output
// followed by new messages; its items are never sent again.
func TestWebSocketSuccessorContinuation(t *testing.T) {
	_, p := wsFake(t, nil, nil)
	calls := []provider.ToolCall{{ID: "call_w1", Name: "weather", Arguments: `{"city":"Paris"}`}}
	base := func() provider.Request {
		r := question
		r.Messages = []provider.Message{
			{Role: provider.RoleUser, Text: "Weather in Paris?"},
			{Role: provider.RoleAssistant, Text: "Spaces"},
			{Role: provider.RoleUser, Text: "check the weather"},
			{Role: provider.RoleAssistant, Text: "Checking.", ToolCalls: calls},
			{Role: provider.RoleTool, ToolCallID: "call_w1", ToolName: "weather", Text: "sunny"},
		}
		r.ContinueResponse = "resp_s"
		return r
	}
	enc := func(r provider.Request) *wsRequest {
		w, err := p.encodeWS(r)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	state := &wsState{respID: "resp_s", head: enc(base()).head, textSum: maphash.String(p.ws.seed, "Checking."), calls: calls, successor: true}
	frame, err := p.frame(enc(base()), state)
	if err != nil {
		t.Fatal(err)
	}
	var msg map[string]any
	if err := json.Unmarshal(frame, &msg); err != nil {
		t.Fatal(err)
	}
	if input, _ := msg["input"].([]any); msg["previous_response_id"] != "resp_s" || len(input) != 1 ||
		input[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("frame %s", frame)
	}
	for name, mod := range map[string]func(*provider.Request){
		"another response named": func(r *provider.Request) { r.ContinueResponse = "resp_other" },
		"its output changed":     func(r *provider.Request) { r.Messages[3].Text = "Checking [redacted]." },
		"nothing new":            func(r *provider.Request) { r.Messages = r.Messages[:4] },
		"another head":           func(r *provider.Request) { r.System = "Be verbose." },
	} {
		r := base()
		mod(&r)
		if _, err := p.frame(enc(r), state); !errors.Is(err, provider.ErrCannotContinue) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Without ContinueResponse the call sends its whole conversation.
	r := base()
	r.ContinueResponse = ""
	frame, err = p.frame(enc(r), state)
	if err != nil {
		t.Fatal(err)
	}
	msg = nil
	if err := json.Unmarshal(frame, &msg); err != nil {
		t.Fatal(err)
	}
	if _, ok := msg["previous_response_id"]; ok || len(msg["input"].([]any)) != 6 {
		t.Fatalf("frame %s", frame)
	}
}

// Pending: the response completes with its tool calls, the steer waits
// for their outputs; the follow ends without a response, and exactly one
// response.create continues the steered response with the outputs only.
func TestWebSocketSteerPending(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{
		{Text: "Checking the weather now.", ToolCalls: []fakeprovider.ToolCall{weatherCall}, Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerPending}},
		{Text: "Sunny, in Celsius."},
	}, nil)
	s, err := p.Stream(context.Background(), steeredQuestion())
	if err != nil {
		t.Fatal(err)
	}
	st := s.(provider.Steerer)
	first, err := readSteered(t, s, func(respID string) {
		if err := st.Steer(respID, "in Celsius", nil); err != nil {
			t.Errorf("steer: %v", err)
		}
	})
	if err != nil || first.finish != provider.FinishToolCalls || len(first.calls) != 1 {
		t.Fatalf("first %+v %v", first, err)
	}
	f := st.Follow(context.Background())
	_ = s.Close()
	if f == nil {
		t.Fatal("no follow while the steer is outstanding")
	}
	out, err := readSteered(t, f, nil)
	if err != nil || len(out.created) != 0 || len(out.kinds) != 1 || out.kinds[0] != provider.EventSteerPending || out.ids[0] != first.ids[0] {
		t.Fatalf("follow %+v %v", out, err)
	}
	_ = f.Close()
	req := toolLoop(summary{Text: first.text, ToolCalls: first.calls})
	req.NativeSteering, req.ContinueResponse = true, first.created[0]
	if _, err := call(t, p, req); err != nil {
		t.Fatal(err)
	}
	frames := steerFrames(fake)
	if len(frames) != 3 || frames[1]["type"] != "response.steer" {
		t.Fatalf("frames %v", frames)
	}
	create := frames[2]
	input := create["input"].([]any)
	if create["previous_response_id"] != first.created[0] || len(input) != 1 || input[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("the create after pending %v", create)
	}
	if strings.Contains(stringOf(create), "in Celsius") {
		t.Fatal("the steer input was sent again")
	}
}

func stringOf(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte(' ')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// Failed: the input comes back; nothing is outstanding, the socket goes
// back with its continuation as after any call.
func TestWebSocketSteerFailed(t *testing.T) {
	for _, outcome := range []string{fakeprovider.SteerFailed, fakeprovider.SteerAcceptedFailed} {
		t.Run(outcome, func(t *testing.T) {
			fake, p := wsFake(t, []fakeprovider.Turn{
				{Text: "Answer with spaces and more", Steer: &fakeprovider.Steer{Outcome: outcome}},
				{Text: "Next."},
			}, nil)
			s, err := p.Stream(context.Background(), steeredQuestion())
			if err != nil {
				t.Fatal(err)
			}
			st := s.(provider.Steerer)
			r, err := readSteered(t, s, func(respID string) {
				if err := st.Steer(respID, "use tabs", nil); err != nil {
					t.Errorf("steer: %v", err)
				}
			})
			if err != nil || r.finish != provider.FinishStop || r.failed != "use tabs" || r.kinds[len(r.kinds)-1] != provider.EventSteerFailed {
				t.Fatalf("read %+v %v", r, err)
			}
			if outcome == fakeprovider.SteerAcceptedFailed && (len(r.ids) != 2 || r.ids[0] != r.ids[1] || r.ids[0] == "") {
				t.Fatalf("ids %v", r.ids)
			}
			if st.Follow(context.Background()) != nil {
				t.Fatal("a follow with nothing outstanding")
			}
			_ = s.Close()
			next := question
			next.Messages = append(next.Messages, provider.Message{Role: provider.RoleAssistant, Text: r.text},
				provider.Message{Role: provider.RoleUser, Text: "use tabs"})
			if _, err := call(t, p, next); err != nil {
				t.Fatal(err)
			}
			frames := steerFrames(fake)
			if len(frames) != 3 || frames[2]["previous_response_id"] != r.created[0] {
				t.Fatalf("frames %v", frames)
			}
		})
	}
}

// A steer after the response's end is not sent, and record does not run;
// a dropped connection after the steer, and a steer never answered, are
// failures of the call or of its follow.
func TestWebSocketSteerEnds(t *testing.T) {
	t.Run("after the end", func(t *testing.T) {
		_, p := wsFake(t, []fakeprovider.Turn{{Text: "Hi."}}, nil)
		s, err := p.Stream(context.Background(), steeredQuestion())
		if err != nil {
			t.Fatal(err)
		}
		r, err := readSteered(t, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = s.(provider.Steerer).Steer(r.created[0], "late", func() error { t.Error("recorded"); return nil })
		if !errors.Is(err, provider.ErrNotSteerable) {
			t.Fatalf("steer after the end: %v", err)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		_, p := wsFake(t, []fakeprovider.Turn{{Text: "Answer with spaces", Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerDrop}}}, nil)
		s, err := p.Stream(context.Background(), steeredQuestion())
		if err != nil {
			t.Fatal(err)
		}
		st := s.(provider.Steerer)
		_, err = readSteered(t, s, func(respID string) { _ = st.Steer(respID, "x", nil) })
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.FailStreamCut || !pe.RequestWritten {
			t.Fatalf("err %v", err)
		}
		if st.Follow(context.Background()) != nil {
			t.Fatal("a follow of a failed stream")
		}
		_ = s.Close()
	})
	t.Run("never answered", func(t *testing.T) {
		_, p := wsFake(t, []fakeprovider.Turn{{Text: "Answer with spaces", Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerSilent}}},
			func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
		s, err := p.Stream(context.Background(), steeredQuestion())
		if err != nil {
			t.Fatal(err)
		}
		st := s.(provider.Steerer)
		if _, err := readSteered(t, s, func(respID string) { _ = st.Steer(respID, "x", nil) }); err != nil {
			t.Fatal(err)
		}
		f := st.Follow(context.Background())
		_ = s.Close()
		if f == nil {
			t.Fatal("no follow")
		}
		_, err = readSteered(t, f, nil)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.FailIdleTimeout {
			t.Fatalf("err %v", err)
		}
		_ = f.Close()
	})
}

// A call that must continue a response its socket no longer has fails
// before anything is sent.
func TestWebSocketContinueResponseMissing(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "Hi."}}, nil)
	req := question
	req.ContinueResponse = "resp_gone"
	_, err := call(t, p, req)
	if !errors.Is(err, provider.ErrCannotContinue) {
		t.Fatalf("err %v", err)
	}
	if _, msgs, _ := handshakes(fake); len(msgs) != 0 {
		t.Fatalf("%d messages sent", len(msgs))
	}
	hp, err := New(Config{BaseURL: fake.BaseURL(fakeprovider.ModeResponses), APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hp.Stream(context.Background(), req); !errors.Is(err, provider.ErrCannotContinue) {
		t.Fatalf("over HTTP: %v", err)
	}
}

// The decoder reads the steering events only for a steered call, and
// returns a failed steer's input given as user messages as text.
func TestDecodeSteerEvents(t *testing.T) {
	msgs := []string{
		`{"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}`,
		`{"type":"response.steer.accepted","sequence_number":4,"steer":{"id":"steer_1","previous_response_id":"resp_1"},"stream_id":"s"}`,
		`{"type":"response.steer.failed","steer":{"previous_response_id":"resp_1","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"}]},{"role":"user","content":"b"}]},"error":{"code":"c","message":"m"}}`,
		`{"type":"response.steer.pending","reason":"waiting_for_required_input","required_input":[]}`,
		`{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"steered"},"output":[]}}`,
	}
	run := func(steer bool) []provider.StreamEvent {
		i := 0
		d := &decoder{lastText: -1, lastReasoning: -1, maxEvent: 1 << 20, steer: steer, msgs: func() ([]byte, io.Reader, error) {
			i++
			return []byte(msgs[i-1]), nil, nil
		}}
		var evs []provider.StreamEvent
		for d.Next() {
			evs = append(evs, d.Event())
		}
		if d.Err() != nil {
			t.Fatal(d.Err())
		}
		return evs
	}
	evs := run(true)
	want := []provider.StreamEvent{
		{Kind: provider.EventResponseCreated, ID: "resp_1"},
		{Kind: provider.EventSteerAccepted, ID: "steer_1"},
		{Kind: provider.EventSteerFailed, Text: "a\n\nb"},
		{Kind: provider.EventSteerPending},
		{Kind: provider.EventFinish, FinishReason: provider.FinishSteered},
	}
	if len(evs) != len(want) {
		t.Fatalf("events %+v", evs)
	}
	for i := range want {
		if evs[i].Kind != want[i].Kind || evs[i].ID != want[i].ID || evs[i].Text != want[i].Text || evs[i].FinishReason != want[i].FinishReason {
			t.Errorf("event %d: %+v, want %+v", i, evs[i], want[i])
		}
	}
	if evs := run(false); len(evs) != 1 || evs[0].Kind != provider.EventFinish {
		t.Fatalf("an unsteered call reported %+v", evs)
	}
}

// A steer that comes after the call's context ended (the run was
// canceled) or after its socket was closed (the idle watch, a cancel
// whose close already ran), but before the consumer saw the stream end,
// is not steerable: nothing can leave, so record must not run (an intent
// recorded then would be unknown for good, and the session blocked,
// though the input never left the host).
func TestWebSocketSteerAfterCancelOrClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(cancel context.CancelFunc, s provider.Stream)
	}{
		{"canceled", func(cancel context.CancelFunc, _ provider.Stream) { cancel() }},
		{"socket closed", func(_ context.CancelFunc, s provider.Stream) { s.(*wsStream).s.close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p := wsFake(t, []fakeprovider.Turn{{Text: "Answer with spaces", Steer: &fakeprovider.Steer{Outcome: fakeprovider.SteerHold}}}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := p.Stream(ctx, steeredQuestion())
			if err != nil {
				t.Fatal(err)
			}
			st := s.(provider.Steerer)
			_, err = readSteered(t, s, func(respID string) {
				tc.stop(cancel, s)
				err := st.Steer(respID, "x", func() error { t.Error("an intent was recorded for a steer that cannot leave"); return nil })
				if !errors.Is(err, provider.ErrNotSteerable) {
					t.Errorf("steer: %v", err)
				}
			})
			if err == nil {
				t.Fatal("the stream ended normally")
			}
			_ = s.Close()
		})
	}
}
