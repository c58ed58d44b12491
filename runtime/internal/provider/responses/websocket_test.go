package responses

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// wsFake starts a fake provider with script turns and a WebSocket Provider
// aimed at it.
func wsFake(t *testing.T, turns []fakeprovider.Turn, mod func(*Config)) (*fakeprovider.Server, *Provider) {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{APIKey: testKey, Script: fakeprovider.Script{Turns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	cfg := Config{BaseURL: fake.BaseURL(fakeprovider.ModeResponses), APIKey: testKey, HTTPClient: edgetest.Client(t),
		Transport: TransportWebSocket, Store: false}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return fake, p
}

// handshakes and messages split the fake's record.
func handshakes(fake *fakeprovider.Server) (hs, msgs []fakeprovider.Request, posts int) {
	for _, r := range fake.Requests() {
		switch {
		case r.Method == fakeprovider.MethodMessage:
			msgs = append(msgs, r)
		case r.WebSocket > 0:
			hs = append(hs, r)
		case r.Method == http.MethodPost:
			posts++
		}
	}
	return hs, msgs, posts
}

func call(t *testing.T, p *Provider, req provider.Request) (summary, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return summary{}, err
	}
	defer s.Close()
	sum, _, err := drain(t, s)
	return sum, err
}

var weatherCall = fakeprovider.ToolCall{ID: "call_w1", Name: "weather", Arguments: `{"city":"Paris"}`}

// toolLoop is a user question, the model's tool call, its result: the
// second step of a tool loop.
func toolLoop(first summary) provider.Request {
	return provider.Request{Model: "gpt-5", System: "Be brief.", Messages: []provider.Message{
		{Role: provider.RoleUser, Text: "Weather in Paris?"},
		{Role: provider.RoleAssistant, Text: first.Text, ToolCalls: first.ToolCalls},
		{Role: provider.RoleTool, ToolCallID: first.ToolCalls[0].ID, ToolName: "weather", Text: "sunny"},
	}}
}

var question = provider.Request{Model: "gpt-5", System: "Be brief.", Messages: []provider.Message{{Role: provider.RoleUser, Text: "Weather in Paris?"}}}

func TestWebSocketCreate(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "Sunny in Paris.", Usage: fakeprovider.Usage{Input: 10, Output: 4}}}, nil)
	sum, err := call(t, p, provider.Request{Model: "gpt-5", System: "Be brief.", MaxOutputTokens: 100, ReasoningEffort: "low",
		Messages: question.Messages, Tools: []provider.ToolSpec{{Name: "weather", Parameters: []byte(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Text != "Sunny in Paris." || sum.Finish != provider.FinishStop || sum.Usage == nil || sum.Usage.InputTokens != 10 {
		t.Fatalf("summary %+v", sum)
	}
	hs, msgs, posts := handshakes(fake)
	if len(hs) != 1 || len(msgs) != 1 || posts != 0 {
		t.Fatalf("handshakes %d, messages %d, posts %d", len(hs), len(msgs), posts)
	}
	if !hs[0].HadKey || hs[0].KeySHA256 != fakeprovider.KeyFingerprint(testKey) || hs[0].Path != "/v1/responses" {
		t.Fatalf("handshake %+v", hs[0])
	}
	body := msgs[0].Body
	if body["type"] != "response.create" || body["model"] != "gpt-5" || body["instructions"] != "Be brief." ||
		body["max_output_tokens"] != float64(100) || body["store"] != false || body["tools"] == nil || body["reasoning"] == nil {
		t.Fatalf("frame %v", body)
	}
	for _, k := range []string{"stream", "background", "previous_response_id"} {
		if _, ok := body[k]; ok {
			t.Errorf("frame has %s", k)
		}
	}
	// The frame carries the HTTP body's fields, stream aside.
	httpBody, err := buildRequest(provider.Request{Model: "gpt-5", System: "Be brief.", MaxOutputTokens: 100, ReasoningEffort: "low",
		Messages: question.Messages, Tools: []provider.ToolSpec{{Name: "weather", Parameters: []byte(`{"type":"object"}`)}}}, requestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "instructions", "input", "tools", "reasoning", "max_output_tokens", "store"} {
		if !strings.Contains(string(httpBody), `"`+k+`"`) {
			t.Errorf("HTTP body lacks %s", k)
		}
		if _, ok := body[k]; !ok {
			t.Errorf("frame lacks %s", k)
		}
	}
}

// A multi-step tool loop: one handshake, and the second step continues
// the first response with only the tool result.
func TestWebSocketContinuation(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{
		{Text: "Checking.", ToolCalls: []fakeprovider.ToolCall{weatherCall}},
		{Text: "Sunny."},
		{Text: "You're welcome."},
	}, nil)
	first, err := call(t, p, question)
	if err != nil {
		t.Fatal(err)
	}
	req := toolLoop(first)
	if second, err := call(t, p, req); err != nil || second.Text != "Sunny." {
		t.Fatalf("second step: %+v %v", second, err)
	}
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, Text: "Sunny."},
		provider.Message{Role: provider.RoleUser, Text: "Thanks"})
	if third, err := call(t, p, req); err != nil || third.Text != "You're welcome." {
		t.Fatalf("third step: %+v %v", third, err)
	}
	hs, msgs, posts := handshakes(fake)
	if len(hs) != 1 || len(msgs) != 3 || posts != 0 {
		t.Fatalf("handshakes %d, messages %d, posts %d", len(hs), len(msgs), posts)
	}
	if _, ok := msgs[0].Body["previous_response_id"]; ok {
		t.Fatal("the first frame continues something")
	}
	in := msgs[1].Body["input"].([]any)
	if msgs[1].Body["previous_response_id"] == nil || len(in) != 1 || in[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("second frame: previous_response_id %v, input %v", msgs[1].Body["previous_response_id"], in)
	}
	in = msgs[2].Body["input"].([]any)
	if msgs[2].Body["previous_response_id"] == nil || msgs[2].Body["previous_response_id"] == msgs[1].Body["previous_response_id"] ||
		len(in) != 1 || in[0].(map[string]any)["role"] != "user" {
		t.Fatalf("third frame: previous_response_id %v, input %v", msgs[2].Body["previous_response_id"], in)
	}
}

// A history that differs from what the server holds (here the answer text
// the host kept, as after a redaction) goes whole, on the same socket.
func TestWebSocketChangedHistorySendsAll(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "Checking.", ToolCalls: []fakeprovider.ToolCall{weatherCall}}, {Text: "Sunny."}}, nil)
	first, err := call(t, p, question)
	if err != nil {
		t.Fatal(err)
	}
	first.Text = "Checking [redacted]."
	if _, err := call(t, p, toolLoop(first)); err != nil {
		t.Fatal(err)
	}
	hs, msgs, _ := handshakes(fake)
	if len(hs) != 1 {
		t.Fatalf("%d handshakes", len(hs))
	}
	if _, ok := msgs[1].Body["previous_response_id"]; ok || len(msgs[1].Body["input"].([]any)) != 4 {
		t.Fatalf("second frame %v", msgs[1].Body)
	}
}

// The idle TTL and the connection limit retire a socket: the next call
// dials again and sends the whole conversation.
func TestWebSocketRetired(t *testing.T) {
	for _, tc := range []struct {
		name    string
		advance time.Duration
	}{
		{"idle TTL", 2 * time.Minute},
		{"connection limit", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
			fake, p := wsFake(t, []fakeprovider.Turn{
				{Text: "Checking.", ToolCalls: []fakeprovider.ToolCall{weatherCall}}, {Text: "Sunny."}, {Text: "More."},
			}, func(c *Config) {
				c.Now = clock.Now
				c.SocketIdleTTL = time.Minute
				c.ConnectionLimit = 60 * time.Minute
			})
			first, err := call(t, p, question)
			if err != nil {
				t.Fatal(err)
			}
			if tc.advance > 0 {
				clock.Add(tc.advance)
			} else {
				// Steps within the TTL, until the socket is an hour old.
				req := toolLoop(first)
				if _, err := call(t, p, req); err != nil {
					t.Fatal(err)
				}
				for range 70 {
					clock.Add(59 * time.Second)
					p.ws.mu.Lock()
					if p.ws.idle != nil {
						p.ws.idle.used = clock.Now()
					}
					p.ws.mu.Unlock()
				}
			}
			if _, err := call(t, p, toolLoop(first)); err != nil {
				t.Fatal(err)
			}
			hs, msgs, _ := handshakes(fake)
			if len(hs) != 2 {
				t.Fatalf("%d handshakes, want a new socket", len(hs))
			}
			last := msgs[len(msgs)-1]
			if _, ok := last.Body["previous_response_id"]; ok || last.WebSocket != 2 || len(last.Body["input"].([]any)) != 4 {
				t.Fatalf("frame on the new socket: %v", last.Body)
			}
		})
	}
}

// The socket closes by itself after the idle TTL.
func TestWebSocketIdleTTLCloses(t *testing.T) {
	_, p := wsFake(t, []fakeprovider.Turn{{Text: "a"}}, func(c *Config) { c.SocketIdleTTL = 50 * time.Millisecond })
	if _, err := call(t, p, question); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.ws.mu.Lock()
		idle := p.ws.idle
		p.ws.mu.Unlock()
		if idle == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle socket was not closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The server's refusal for the 60-minute limit: the call goes again on a
// new socket, whole.
func TestWebSocketConnectionLimitEvent(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "Checking.", ToolCalls: []fakeprovider.ToolCall{weatherCall}}, {Text: "Sunny."}}, nil)
	first, err := call(t, p, question)
	if err != nil {
		t.Fatal(err)
	}
	fake.InjectFault(fakeprovider.FaultErrorEvent{Type: connectionLimitReached, Message: "Responses websocket connection limit reached (60 minutes)."})
	if sum, err := call(t, p, toolLoop(first)); err != nil || sum.Text != "Sunny." {
		t.Fatalf("%+v %v", sum, err)
	}
	hs, msgs, _ := handshakes(fake)
	if len(hs) != 2 || len(msgs) != 3 {
		t.Fatalf("handshakes %d, messages %d", len(hs), len(msgs))
	}
	if _, ok := msgs[2].Body["previous_response_id"]; ok || msgs[2].WebSocket != 2 {
		t.Fatalf("resent frame %v", msgs[2].Body)
	}
}

// A refused handshake: the call, and the Provider's later calls, go over
// HTTP.
func TestWebSocketFallback(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "one"}, {Text: "two"}}, nil)
	fake.InjectFault(fakeprovider.FaultWSRefuse{})
	for _, want := range []string{"one", "two"} {
		if sum, err := call(t, p, question); err != nil || sum.Text != want {
			t.Fatalf("%+v %v", sum, err)
		}
	}
	hs, msgs, posts := handshakes(fake)
	if len(hs) != 1 || len(msgs) != 0 || posts != 2 || p.WebSocket() {
		t.Fatalf("handshakes %d, messages %d, posts %d", len(hs), len(msgs), posts)
	}
}

// Failures before the frame is written are pre-send; after it, the call
// may have been billed.
func TestWebSocketRecoveryFacts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   fakeprovider.Fault
		kind    provider.FailKind
		written bool
		started bool
	}{
		{"handshake dropped", fakeprovider.FaultWSDropHandshake{}, provider.FailStreamCut, false, false},
		{"closed after the frame", fakeprovider.FaultWSCloseAfterFrame{}, provider.FailStreamCut, true, false},
		{"cut mid-stream", fakeprovider.FaultCutMidStream{AfterEvents: 7}, provider.FailStreamCut, true, true},
		{"close frame mid-stream", fakeprovider.FaultCutMidStream{AfterEvents: 7, Graceful: true}, provider.FailStreamCut, true, true},
		{"error event", fakeprovider.FaultErrorEvent{Type: "server_error"}, provider.FailErrorEvent, true, false},
		{"stall", fakeprovider.FaultStall{AfterEvents: 7}, provider.FailIdleTimeout, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, p := wsFake(t, []fakeprovider.Turn{{Text: "Sunny in Paris today, as every day.", Chunk: 4}}, func(c *Config) {
				c.IdleTimeout = 300 * time.Millisecond
			})
			fake.InjectFault(tc.fault)
			_, err := call(t, p, question)
			pe := edgetest.AsProviderError(t, err)
			if pe.Kind != tc.kind || pe.RequestWritten != tc.written || pe.ContentStarted != tc.started {
				t.Fatalf("got %s written=%v started=%v (%v), want %s written=%v started=%v",
					pe.Kind, pe.RequestWritten, pe.ContentStarted, pe, tc.kind, tc.written, tc.started)
			}
			if strings.Contains(pe.Error(), testKey) {
				t.Fatal("the key is in the error")
			}
			// The retry gets the turn, on a new socket.
			if sum, err := call(t, p, question); err != nil || !strings.HasPrefix(sum.Text, "Sunny") {
				t.Fatalf("retry: %+v %v", sum, err)
			}
		})
	}
}

func TestWebSocketRefusedAddress(t *testing.T) {
	p, err := New(Config{BaseURL: "http://" + edgetest.RefusedAddr(t) + "/v1", Transport: TransportWebSocket, HTTPClient: edgetest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), question)
	if pe := edgetest.AsProviderError(t, err); pe.Kind != provider.FailConnect || pe.RequestWritten {
		t.Fatalf("%+v", pe)
	}
}

func TestWebSocketCancelAndClose(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "Sunny in Paris today.", Chunk: 4}, {Text: "again"}}, nil)
	fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 3})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	for s.Next() {
	}
	if pe := edgetest.AsProviderError(t, s.Err()); pe.Kind != provider.FailCanceled || !pe.RequestWritten {
		t.Fatalf("%+v", pe)
	}
	_ = s.Close()
	if sum, err := call(t, p, question); err != nil || sum.Text == "" {
		t.Fatalf("after cancel: %+v %v", sum, err)
	}
}

func TestWebSocketConfig(t *testing.T) {
	if _, err := New(Config{BaseURL: "https://api.example.com/v1", Transport: "carrier-pigeon"}); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Fatalf("bad transport: %v", err)
	}
	if got := wsURL("https://api.example.com/v1/responses"); got != "wss://api.example.com/v1/responses" {
		t.Fatal(got)
	}
	if got := wsURL("http://127.0.0.1:9/v1/responses"); got != "ws://127.0.0.1:9/v1/responses" {
		t.Fatal(got)
	}
	p, err := New(Config{BaseURL: "https://api.example.com/v1"})
	if err != nil || p.WebSocket() {
		t.Fatal("HTTP by default")
	}
	if !errors.Is(p.Close(), nil) {
		t.Fatal("Close of an HTTP provider")
	}
}

// A message over the event bound fails the call as undecodable, as an
// oversized SSE event does.
func TestWebSocketMessageTooLarge(t *testing.T) {
	_, p := wsFake(t, []fakeprovider.Turn{{Text: strings.Repeat("long answer ", 40)}}, func(c *Config) { c.MaxEventBytes = 256 })
	_, err := call(t, p, question)
	if pe := edgetest.AsProviderError(t, err); pe.Kind != provider.FailDecode || !pe.RequestWritten {
		t.Fatalf("%+v", pe)
	}
}

// After Close, calls still work, each on a socket of its own.
func TestWebSocketAfterClose(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "a"}, {Text: "b"}}, nil)
	if _, err := call(t, p, question); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	if sum, err := call(t, p, question); err != nil || sum.Text != "b" {
		t.Fatalf("%+v %v", sum, err)
	}
	p.ws.mu.Lock()
	idle := p.ws.idle
	p.ws.mu.Unlock()
	if hs, _, _ := handshakes(fake); len(hs) != 2 || idle != nil {
		t.Fatalf("%d handshakes, idle socket %v", len(hs), idle != nil)
	}
}
