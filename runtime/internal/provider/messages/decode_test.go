package messages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

// sseOf frames each payload as one event named by its JSON type, the way
// the API sends them. A payload that starts with "event:", "data:" or ":"
// is used as is.
func sseOf(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		if strings.HasPrefix(p, "event:") || strings.HasPrefix(p, "data:") || strings.HasPrefix(p, ":") {
			b.WriteString(p)
			b.WriteString("\n\n")
			continue
		}
		typ := p[strings.Index(p, `"type":"`)+len(`"type":"`):]
		typ = typ[:strings.IndexByte(typ, '"')]
		b.WriteString("event: " + typ + "\ndata: " + p + "\n\n")
	}
	return b.String()
}

// Building blocks of synthetic streams.
const (
	msgStart     = `{"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`
	textStart0   = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	stop0        = `{"type":"content_block_stop","index":0}`
	stop1        = `{"type":"content_block_stop","index":1}`
	msgStop      = `{"type":"message_stop"}`
	endTurn      = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`
	toolUseDelta = `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`
	maxTokens    = `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":5}}`
)

func textDelta(i int, s string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, s)
}

func toolStart(i int, id, name string) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name)
}

func jsonDelta(i int, s string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, s)
}

// TestDecodeQuirks covers server behaviours the recorded fixtures do not.
func TestDecodeQuirks(t *testing.T) {
	base := usage(10, 0, 0, 5, 0)
	tests := []struct {
		name     string
		body     string
		want     summary
		wantKind provider.FailKind // "" for a normal end
		wantCode string
	}{
		{
			name: "cache reads and writes count as input",
			body: sseOf(`{"type":"message_start","message":{"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000,"output_tokens":1}}}`,
				textStart0, textDelta(0, "x"), stop0,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":40}}`, msgStop),
			want: summary{Text: "x", Usage: usage(12, 4000, 300, 40, 0), Finish: provider.FinishStop},
		},
		{
			name: "message_delta cache figures replace message_start's, null keeps them",
			body: sseOf(`{"type":"message_start","message":{"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":0,"output_tokens":1}}}`,
				textStart0, textDelta(0, "x"), stop0,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":null,"cache_read_input_tokens":50,"output_tokens":40,"output_tokens_details":null}}`, msgStop),
			want: summary{Text: "x", Usage: usage(12, 50, 300, 40, 0), Finish: provider.FinishStop},
		},
		{
			name: "parallel tool calls",
			body: sseOf(msgStart, textStart0, textDelta(0, "Both."), stop0,
				toolStart(1, "toolu_a", "read"), jsonDelta(1, `{"path":`), jsonDelta(1, ` "a"}`), stop1,
				toolStart(2, "toolu_b", "read"), jsonDelta(2, `{"path": "b"}`), `{"type":"content_block_stop","index":2}`,
				toolUseDelta, msgStop),
			want: summary{Text: "Both.", ToolCalls: []provider.ToolCall{
				{ID: "toolu_a", Name: "read", Arguments: `{"path": "a"}`},
				{ID: "toolu_b", Name: "read", Arguments: `{"path": "b"}`},
			}, Usage: base, Finish: provider.FinishToolCalls},
		},
		{
			name: "max_tokens after a closed tool block drops it, keeps the earlier one",
			body: sseOf(msgStart,
				toolStart(0, "toolu_a", "read"), jsonDelta(0, `{}`), stop0,
				toolStart(1, "toolu_b", "write"), jsonDelta(1, `{"text": "abc"}`), stop1,
				maxTokens, msgStop),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "toolu_a", Name: "read", Arguments: `{}`}}, Usage: base, Finish: provider.FinishLength},
		},
		{
			name: "tool block closed after max_tokens is dropped",
			body: sseOf(msgStart, toolStart(0, "toolu_a", "write"), jsonDelta(0, `{"text": "ab`), maxTokens, stop0, msgStop),
			want: summary{Usage: base, Finish: provider.FinishLength},
		},
		{
			name: "tool block closed after another stop reason is kept",
			body: sseOf(msgStart, toolStart(0, "toolu_a", "read"), jsonDelta(0, `{"path": "a"}`), toolUseDelta, stop0, msgStop),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "toolu_a", Name: "read", Arguments: `{"path": "a"}`}}, Usage: base, Finish: provider.FinishToolCalls},
		},
		{
			name: "max_tokens with text after a complete call keeps the call",
			body: sseOf(msgStart, toolStart(0, "toolu_a", "read"), jsonDelta(0, `{}`), stop0,
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`, textDelta(1, "and then"), maxTokens, msgStop),
			want: summary{Text: "and then", ToolCalls: []provider.ToolCall{{ID: "toolu_a", Name: "read", Arguments: `{}`}}, Usage: base, Finish: provider.FinishLength},
		},
		{
			name: "no message_delta: the held call is released at message_stop",
			body: sseOf(toolStart(0, "toolu_a", "read"), jsonDelta(0, `{"path":"a"}`), stop0, msgStop),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "toolu_a", Name: "read", Arguments: `{"path":"a"}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "tool input whole in content_block_start",
			body: sseOf(msgStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{"path": "a"}}}`,
				stop0, toolUseDelta, msgStop),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "toolu_a", Name: "read", Arguments: `{"path": "a"}`}}, Usage: base, Finish: provider.FinishToolCalls},
		},
		{
			name: "input_json_delta for an unknown or non-tool block is ignored",
			body: sseOf(msgStart, textStart0, jsonDelta(0, `{"x":1}`), jsonDelta(7, `{}`), textDelta(0, "t"), stop0, endTurn, msgStop),
			want: summary{Text: "t", Usage: base, Finish: provider.FinishStop},
		},
		{
			name: "thinking with initial text and a split signature, then redacted thinking",
			body: sseOf(msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"Let","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" me"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"AB"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"CD"}}`, stop0,
				`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}}`, stop1,
				`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Hi"}}`, textDelta(2, "!"),
				`{"type":"content_block_stop","index":2}`, endTurn, msgStop),
			want: summary{Text: "Hi!", Reasoning: "Let me", Usage: base, Finish: provider.FinishStop, Blocks: []provider.ReasoningBlock{
				{Text: "Let me", Signature: "ABCD"},
				{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
			}},
		},
		{
			// Interleaved thinking: each block keeps its own text and
			// signature, in order, around the tool call between them.
			name: "two signed thinking blocks around redacted thinking and a tool call",
			body: sseOf(msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"first"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"S1"}}`, stop0,
				`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"R1"}}`, stop1,
				`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}}`,
				jsonDelta(2, `{}`), `{"type":"content_block_stop","index":2}`,
				`{"type":"content_block_start","index":3,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":" second"}}`,
				`{"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"S2"}}`,
				`{"type":"content_block_stop","index":3}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`, msgStop),
			want: summary{Reasoning: "first second", Usage: base, Finish: provider.FinishToolCalls,
				ToolCalls: []provider.ToolCall{{ID: "toolu_1", Name: "ls", Arguments: "{}"}},
				Blocks: []provider.ReasoningBlock{
					{Text: "first", Signature: "S1"}, {Redacted: "R1"}, {Text: " second", Signature: "S2", AfterToolCalls: 1},
				}},
		},
		{
			name: "signature only (thinking display omitted)",
			body: sseOf(msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}`, stop0,
				endTurn, msgStop),
			want: summary{Usage: base, Finish: provider.FinishStop}.Signed("SIG"),
		},
		{
			name: "thinking without a signature emits none",
			body: sseOf(msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`, stop0,
				endTurn, msgStop),
			want: summary{Reasoning: "hm", Usage: base, Finish: provider.FinishStop},
		},
		{
			name: "untyped events, padded JSON, escaped type, CRLF, comments",
			body: ": keep-alive\r\n\r\ndata: " + msgStart + "   \r\n\r\ndata: {\"type\" : \"content_block_start\" , \"index\" : 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}}\r\n\r\n" +
				"data: " + textDelta(0, "x") + "\r\n\r\ndata: " + stop0 + "\r\n\r\ndata: " + endTurn + "\r\n\r\ndata: {\"type\":\"message\\u005fstop\"}\r\n\r\n",
			want: summary{Text: "x", Usage: base, Finish: provider.FinishStop},
		},
		{
			name: "pings anywhere, unknown events and deltas skipped",
			body: sseOf(`event: ping`+"\n"+`data: {"type": "ping"}`, msgStart, `{"type":"ping"}`, textStart0,
				"event: future_event\ndata: {not json", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`,
				`{"type":"some_new_thing","index":0}`, textDelta(0, "x"),
				`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
				jsonDelta(1, `{"query":"q"}`), stop1, stop0, "event: ping\ndata:", endTurn, msgStop),
			want: summary{Text: "x", Usage: base, Finish: provider.FinishStop},
		},
		{
			name: "anything after message_stop is ignored",
			body: sseOf(msgStart, textStart0, textDelta(0, "x"), stop0, endTurn, msgStop, "event: error\ndata: {}", textDelta(0, "y")),
			want: summary{Text: "x", Usage: base, Finish: provider.FinishStop},
		},
		{
			name: "message_stop without usage anywhere",
			body: sseOf(textStart0, textDelta(0, "x"), stop0, `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, msgStop),
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "stop_sequence",
			body: sseOf(msgStart, `{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"###"},"usage":{"output_tokens":5}}`, msgStop),
			want: summary{Usage: base, Finish: provider.FinishStop},
		},
		{
			name: "pause_turn",
			body: sseOf(msgStart, `{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":5}}`, msgStop),
			want: summary{Usage: base, Finish: provider.FinishOther},
		},
		{
			name: "model_context_window_exceeded",
			body: sseOf(msgStart, `{"type":"message_delta","delta":{"stop_reason":"model_context_window_exceeded"},"usage":{"output_tokens":5}}`, msgStop),
			want: summary{Usage: base, Finish: provider.FinishContextWindow},
		},
		{
			name: "unknown stop reason",
			body: sseOf(msgStart, `{"type":"message_delta","delta":{"stop_reason":"brand_new"},"usage":{"output_tokens":5}}`, msgStop),
			want: summary{Usage: base, Finish: provider.FinishOther},
		},
		{
			name: "refusal after some text",
			body: sseOf(msgStart, textStart0, textDelta(0, "I can't"), stop0,
				`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"type":"refusal"}},"usage":{"output_tokens":5}}`, msgStop),
			want: summary{Text: "I can't", Usage: base, Finish: provider.FinishRefusal},
		},
		{
			name:     "error event with non-JSON data",
			body:     sseOf(msgStart, "event: error\ndata: upstream exploded"),
			wantKind: provider.FailErrorEvent,
		},
		{
			name:     "untyped error event",
			body:     sseOf(msgStart, `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			wantKind: provider.FailErrorEvent, wantCode: "overloaded_error",
		},
		{
			name:     "error event with a string error",
			body:     sseOf(`event: error` + "\n" + `data: {"error":"boom"}`),
			wantKind: provider.FailErrorEvent,
		},
		{
			name:     "wrong type for text",
			body:     sseOf(msgStart, textStart0, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}`, msgStop),
			wantKind: provider.FailDecode,
		},
		{
			name:     "event too large",
			body:     sseOf(msgStart, textStart0, textDelta(0, strings.Repeat("x", 2<<20)), msgStop),
			wantKind: provider.FailDecode,
		},
		{
			name:     "message_stop missing after everything else",
			body:     sseOf(msgStart, textStart0, textDelta(0, "x"), stop0, endTurn),
			wantKind: provider.FailStreamCut,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := drainDecoder(t, []byte(tc.body))
			if tc.wantKind != "" {
				pe := edgetest.AsProviderError(t, err)
				if pe.Kind != tc.wantKind || pe.Code != tc.wantCode {
					t.Fatalf("kind, code = %s, %q, want %s, %q (%v)", pe.Kind, pe.Code, tc.wantKind, tc.wantCode, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Err() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// deltaStream returns a message of n text deltas shaped like the recorded
// claude-3-7-sonnet stream (event lines, padded JSON), with the message
// events around them.
func deltaStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: " + `{"type":"message_start","message":{"model":"claude-3-7-sonnet-20250219","id":"msg_01Hh7yjeiaEaEREnpywjByCo","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":509,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}   }` + "\n\n")
	b.WriteString("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}       }` + "\n\n")
	words := []string{" the", " quick", " brown", " fox", " jumps", "\n\n", " über", " 🦊"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}    }\n\n", words[i%len(words)])
		if i%1000 == 999 {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
	}
	b.WriteString("event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0     }` + "\n\n")
	fmt.Fprintf(&b, "event: message_delta\ndata: "+`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":509,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d}        }`+"\n\n", n)
	b.WriteString("event: message_stop\ndata: " + `{"type":"message_stop"       }` + "\n\n")
	return b.Bytes()
}

// BenchmarkDecodeDeltas measures the per-delta cost of the whole wire
// decoding (SSE framing, JSON, event assembly) of a 20,000-delta stream
// served from memory. One op is one whole stream; ns/delta and
// allocs/delta are the figures to watch.
func BenchmarkDecodeDeltas(b *testing.B) {
	const n = 20000
	edgetest.BenchDecodeDeltas(b, deltaStream(n), n, func(r io.Reader) provider.Stream {
		return providertest.DecoderStream(decodeStream(r, 0))
	})
}

// FuzzDecode feeds arbitrary bodies to the Messages decoder, seeded with
// every recorded fixture: it must never panic or hang, never deliver an
// event after EventFinish, finish exactly when it reports no error, and
// report every failure as a *provider.Error (the recovery classes read its
// facts, CONTRACT §12).
func FuzzDecode(fz *testing.F) {
	for _, tc := range fixtureTests {
		fz.Add(fixtureBody(fz, tc.file))
	}
	fz.Add(deltaStream(3))
	fz.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	fz.Fuzz(func(t *testing.T, body []byte) {
		d := decodeStream(bytes.NewReader(body), 1<<16)
		finished := false
		for d.Next() {
			if finished {
				t.Fatal("event after EventFinish")
			}
			finished = d.Event().Kind == provider.EventFinish
		}
		if finished == (d.Err() != nil) {
			t.Fatalf("finished %v with err %v", finished, d.Err())
		}
		if err := d.Err(); err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v", err, err)
			}
		}
	})
}
