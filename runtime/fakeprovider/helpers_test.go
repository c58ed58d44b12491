package fakeprovider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Event string // the event: field, "" when absent
	Data  string // the data: lines joined with "\n"
}

// parseSSE is a small, independent event-stream parser (WHATWG rules
// reduced to what the providers use): fields "event" and "data", a blank
// line dispatches, comments are ignored, an unterminated last event is
// dropped.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var (
		out   []sseEvent
		cur   sseEvent
		data  []string
		hasDt bool
	)
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if hasDt {
				cur.Data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data, hasDt = sseEvent{}, nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.Event = value
		case "data":
			data = append(data, value)
			hasDt = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("scanning the stream: %v", err)
	}
	return out
}

// decode unmarshals an event's data into a map.
func decode(t *testing.T, ev sseEvent) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		t.Fatalf("event %q data is not a JSON object: %v\n%s", ev.Event, err, ev.Data)
	}
	return m
}

// at walks a decoded JSON value by object keys and array indexes.
func at(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// newServer starts a Server that is closed when the test ends.
func newServer(t *testing.T, sc Script) *Server {
	t.Helper()
	s, err := New(Options{Script: sc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newClient returns a plain net/http client whose idle connections are
// closed when the test ends.
func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// endpoint is the URL a real client posts to for mode (CONTRACT §8).
func endpoint(s *Server, mode Mode) string {
	switch mode {
	case ModeChat:
		return s.BaseURL(mode) + "/chat/completions"
	case ModeResponses:
		return s.BaseURL(mode) + "/responses"
	default:
		return s.BaseURL(mode) + "/v1/messages"
	}
}

// requestBody is a minimal valid streaming request for mode.
func requestBody(mode Mode, model string) map[string]any {
	b := map[string]any{"model": model, "stream": true}
	switch mode {
	case ModeChat:
		b["messages"] = []any{map[string]any{"role": "user", "content": "hi"}}
		b["stream_options"] = map[string]any{"include_usage": true}
	case ModeResponses:
		b["input"] = "hi"
	case ModeAnthropic:
		b["messages"] = []any{map[string]any{"role": "user", "content": "hi"}}
		b["max_tokens"] = 1024
	}
	return b
}

// send posts body (JSON-encoded unless it is a string) to mode's endpoint.
func send(t *testing.T, c *http.Client, s *Server, mode Mode, body any) *http.Response {
	t.Helper()
	return sendCtx(t, context.Background(), c, s, mode, body)
}

func sendCtx(t *testing.T, ctx context.Context, c *http.Client, s *Server, mode Mode, body any) *http.Response {
	t.Helper()
	var raw []byte
	if str, ok := body.(string); ok {
		raw = []byte(str)
	} else {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint(s, mode), bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if mode == ModeAnthropic {
		req.Header.Set("x-api-key", "test-key")
		req.Header.Set("anthropic-version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer test-key")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint(s, mode), err)
	}
	return resp
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return b
}

// summary is what a turn's stream adds up to, whatever the mode.
type summary struct {
	Model     string
	Reasoning string
	Signature string
	Text      string
	Refusal   string
	Calls     []ToolCall
	Stop      string // the mode's own finish/stop/status value
	Usage     Usage
	Terminal  bool // the mode's terminal event came last
}

// summarize decodes a whole stream of mode into a summary, checking the
// wire rules of each format on the way.
func summarize(t *testing.T, mode Mode, body []byte) summary {
	t.Helper()
	evs := parseSSE(t, body)
	if len(evs) == 0 {
		t.Fatal("empty stream")
	}
	var s summary
	switch mode {
	case ModeChat:
		calls := map[int]*ToolCall{}
		for i, ev := range evs {
			if ev.Event != "" {
				t.Errorf("chat event %d has an event: line %q", i, ev.Event)
			}
			if ev.Data == "[DONE]" {
				s.Terminal = i == len(evs)-1
				continue
			}
			m := decode(t, ev)
			s.Model = str(m["model"])
			if u, ok := m["usage"].(map[string]any); ok {
				if ch, _ := m["choices"].([]any); len(ch) != 0 {
					t.Errorf("usage chunk has choices %v", ch)
				}
				s.Usage = Usage{
					Input: num(u["prompt_tokens"]), Output: num(u["completion_tokens"]),
					CacheRead:  num(at(u, "prompt_tokens_details", "cached_tokens")),
					CacheWrite: num(at(u, "prompt_tokens_details", "cache_write_tokens")),
					Reasoning:  num(at(u, "completion_tokens_details", "reasoning_tokens")),
				}
			}
			d := at(m, "choices", 0, "delta")
			s.Reasoning += str(at(d, "reasoning_content"))
			s.Text += str(at(d, "content"))
			s.Refusal += str(at(d, "refusal"))
			for _, tc := range asList(at(d, "tool_calls")) {
				idx := num(at(tc, "index"))
				c := calls[idx]
				if c == nil {
					c = &ToolCall{}
					calls[idx] = c
				}
				if id := str(at(tc, "id")); id != "" {
					c.ID = id
				}
				if n := str(at(tc, "function", "name")); n != "" {
					c.Name = n
				}
				c.Arguments += str(at(tc, "function", "arguments"))
			}
			if f := str(at(m, "choices", 0, "finish_reason")); f != "" {
				s.Stop = f
			}
		}
		for i := 0; i < len(calls); i++ {
			if calls[i] == nil {
				t.Fatalf("tool call indexes are not 0..n-1: %v", calls)
			}
			s.Calls = append(s.Calls, *calls[i])
		}
	case ModeResponses:
		calls := map[string]*ToolCall{}
		var order []string
		for i, ev := range evs {
			m := decode(t, ev)
			if ev.Event != str(m["type"]) {
				t.Errorf("event %d: event: %q but type %q", i, ev.Event, m["type"])
			}
			if got := num(m["sequence_number"]); got != i {
				t.Errorf("event %d has sequence_number %d", i, got)
			}
			switch ev.Event {
			case "response.created":
				s.Model = str(at(m, "response", "model"))
			case "response.reasoning_summary_text.delta":
				s.Reasoning += str(m["delta"])
			case "response.output_text.delta":
				s.Text += str(m["delta"])
			case "response.refusal.delta":
				s.Refusal += str(m["delta"])
			case "response.output_item.added":
				if str(at(m, "item", "type")) == "function_call" {
					id := str(at(m, "item", "id"))
					calls[id] = &ToolCall{ID: str(at(m, "item", "call_id")), Name: str(at(m, "item", "name"))}
					order = append(order, id)
				}
				if str(at(m, "item", "type")) == "reasoning" {
					s.Signature = str(at(m, "item", "encrypted_content"))
				}
			case "response.function_call_arguments.delta":
				calls[str(m["item_id"])].Arguments += str(m["delta"])
			case "response.function_call_arguments.done":
				if got, want := str(m["arguments"]), calls[str(m["item_id"])].Arguments; got != want {
					t.Errorf("arguments.done %q, deltas %q", got, want)
				}
			case "response.completed", "response.incomplete":
				s.Terminal = i == len(evs)-1
				s.Stop = str(at(m, "response", "status"))
				u := at(m, "response", "usage")
				s.Usage = Usage{
					Input: num(at(u, "input_tokens")), Output: num(at(u, "output_tokens")),
					CacheRead:  num(at(u, "input_tokens_details", "cached_tokens")),
					CacheWrite: num(at(u, "input_tokens_details", "cache_write_tokens")),
					Reasoning:  num(at(u, "output_tokens_details", "reasoning_tokens")),
				}
			}
		}
		for _, id := range order {
			s.Calls = append(s.Calls, *calls[id])
		}
	case ModeAnthropic:
		blocks := map[int]map[string]any{}
		var calls []*ToolCall
		callAt := map[int]*ToolCall{}
		open := map[int]bool{}
		for i, ev := range evs {
			m := decode(t, ev)
			if ev.Event != str(m["type"]) {
				t.Errorf("event %d: event: %q but type %q", i, ev.Event, m["type"])
			}
			idx := num(m["index"])
			switch ev.Event {
			case "message_start":
				s.Model = str(at(m, "message", "model"))
				u := at(m, "message", "usage")
				s.Usage.Input = num(at(u, "input_tokens"))
				s.Usage.CacheRead = num(at(u, "cache_read_input_tokens"))
				s.Usage.CacheWrite = num(at(u, "cache_creation_input_tokens"))
			case "content_block_start":
				if open[idx] || blocks[idx] != nil {
					t.Errorf("block %d started twice", idx)
				}
				b, _ := m["content_block"].(map[string]any)
				blocks[idx], open[idx] = b, true
				if str(b["type"]) == "tool_use" {
					c := &ToolCall{ID: str(b["id"]), Name: str(b["name"])}
					calls = append(calls, c)
					callAt[idx] = c
				}
			case "content_block_delta":
				if !open[idx] {
					t.Errorf("delta for block %d, which is not open", idx)
				}
				d := m["delta"]
				switch str(at(d, "type")) {
				case "thinking_delta":
					s.Reasoning += str(at(d, "thinking"))
				case "signature_delta":
					s.Signature += str(at(d, "signature"))
				case "text_delta":
					s.Text += str(at(d, "text"))
				case "input_json_delta":
					callAt[idx].Arguments += str(at(d, "partial_json"))
				}
			case "content_block_stop":
				open[idx] = false
			case "message_delta":
				s.Stop = str(at(m, "delta", "stop_reason"))
				u := m["usage"]
				s.Usage.Output = num(at(u, "output_tokens"))
				s.Usage.Reasoning = num(at(u, "output_tokens_details", "thinking_tokens"))
			case "message_stop":
				s.Terminal = i == len(evs)-1
			}
		}
		for _, c := range calls {
			s.Calls = append(s.Calls, *c)
		}
	}
	return s
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
