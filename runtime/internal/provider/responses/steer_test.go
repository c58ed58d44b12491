package responses

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/provider"
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
