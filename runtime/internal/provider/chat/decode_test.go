package chat

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

// sseOf frames each payload as one data: event.
func sseOf(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return b.String()
}

// TestDecodeQuirks covers server behaviours the recorded fixtures do not.
func TestDecodeQuirks(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     summary
		wantKind provider.FailKind // "" for a normal end
	}{
		{
			name: "tool calls without index",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"two","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				`[DONE]`),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "a", Name: "one", Arguments: `{"x":1}`}, {ID: "b", Name: "two", Arguments: `{}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "indexes out of order and from 2, name repeated, id missing",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"late","function":{"name":"b","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"a","arguments":"{\"k\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"a","arguments":"2}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{}"}}]}}]}`,
				`[DONE]`),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "a", Arguments: `{"k":2}`}, {ID: "late", Name: "b", Arguments: `{}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "arguments as an object",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":{"a": [1, 2]}}}]},"finish_reason":"tool_calls"}]}`,
				`[DONE]`),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "c", Name: "f", Arguments: `{"a": [1, 2]}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "tool deltas after finish_reason are ignored",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"junk"}}]}}]}`,
				`[DONE]`),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "c", Name: "f", Arguments: `{}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "reasoning field variants",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"reasoning":"think "}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning_content":"once","reasoning":"once"}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning":{"summary":"not text"},"content":"answer"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":null,"reasoning_content":null,"reasoning":null}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`[DONE]`),
			want: summary{Reasoning: "think once", Text: "answer", Finish: provider.FinishStop},
		},
		{
			name: "other choices are ignored",
			body: sseOf(
				`{"choices":[{"index":1,"delta":{"content":"B","tool_calls":[{"index":0,"id":"x","function":{"name":"n","arguments":"{}"}}]},"finish_reason":"length"},{"index":0,"delta":{"content":"A"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`[DONE]`),
			want: summary{Text: "A", Finish: provider.FinishStop},
		},
		{
			name: "usage null ignored, total computed, DeepSeek cache field",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null,"error":null}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_cache_hit_tokens":4}}`,
				`[DONE]`),
			want: summary{Text: "x", Usage: usage(10, 5, 15, 4, 0), Finish: provider.FinishStop},
		},
		{
			// OpenAI's CompletionUsage reports the prompt tokens read from
			// and written to the cache in prompt_tokens_details.
			name: "cache reads and writes",
			body: sseOf(
				`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":2048,"completion_tokens":7,"total_tokens":2055,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0,"cache_write_tokens":512},"completion_tokens_details":{"reasoning_tokens":3}}}`,
				`[DONE]`),
			want: summary{Text: "x", Usage: &provider.Usage{InputTokens: 2048, OutputTokens: 7, TotalTokens: 2055,
				CacheReadTokens: 1024, CacheWriteTokens: 512, ReasoningTokens: 3}, Finish: provider.FinishStop},
		},
		{
			name: "content_filter is a refusal",
			body: sseOf(`{"choices":[{"index":0,"delta":{"refusal":"No."},"finish_reason":"content_filter"}]}`, `[DONE]`),
			want: summary{Text: "No.", Finish: provider.FinishRefusal},
		},
		{
			name: "function_call finish",
			body: sseOf(`{"choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}`, `[DONE]`),
			want: summary{Finish: provider.FinishToolCalls},
		},
		{
			name: "unknown finish reason",
			body: sseOf(`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"eos_token"}]}`, `[DONE]`),
			want: summary{Text: "x", Finish: provider.FinishOther},
		},
		{
			name: "no finish reason before [DONE]",
			body: sseOf(`{"choices":[{"index":0,"delta":{"content":"x"}}]}`, `[DONE]`),
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "no finish reason, tool calls pending",
			body: sseOf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"i","function":{"name":"n","arguments":"{}"}}]}}]}`, `[DONE]`),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "i", Name: "n", Arguments: "{}"}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "pings, comments, unknown event types, empty data, CRLF",
			body: ": OPENROUTER PROCESSING\r\n\r\nevent: ping\r\ndata: {}\r\n\r\ndata:\r\n\r\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n",
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "[DONE] without its blank line",
			body: sseOf(`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`) + "data: [DONE]",
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "anything after [DONE] is ignored",
			body: sseOf(`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`, `[DONE]`, `not json`),
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name:     "wrong type for content",
			body:     sseOf(`{"choices":[{"index":0,"delta":{"content":5}}]}`, `[DONE]`),
			wantKind: provider.FailDecode,
		},
		{
			name:     "event too large",
			body:     sseOf(`{"choices":[{"index":0,"delta":{"content":"`+strings.Repeat("x", 2<<20)+`"}}]}`, `[DONE]`),
			wantKind: provider.FailDecode,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := drainDecoder(t, []byte(tc.body))
			if tc.wantKind != "" {
				pe := edgetest.AsProviderError(t, err)
				if pe.Kind != tc.wantKind {
					t.Fatalf("kind = %s, want %s (%v)", pe.Kind, tc.wantKind, err)
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

// deltaStream returns n text-delta chunks shaped like the recorded
// gpt-4.1-nano stream (with the usage:null and obfuscation members real
// chunks carry), a finish chunk, a usage chunk and [DONE].
func deltaStream(n int) []byte {
	var b bytes.Buffer
	words := []string{" the", " quick", " brown", " fox", " jumps", "\n\n", " über", " 🦊"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-nano-2025-04-14","service_tier":"default","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"yhjoJbEF"}`+"\n\n", words[i%len(words)])
	}
	b.WriteString(`data: {"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-nano-2025-04-14","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-nano-2025-04-14","choices":[],"usage":{"prompt_tokens":16,"completion_tokens":300,"total_tokens":316}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
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
