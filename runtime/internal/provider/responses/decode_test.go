package responses

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

// dataOnly frames each payload as one data: event, without event lines.
func dataOnly(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return b.String()
}

const (
	completed     = `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`
	completedNoU  = `{"type":"response.completed","response":{"status":"completed","usage":null}}`
	callAddedFmt  = `{"type":"response.output_item.added","output_index":%d,"item":{"type":"function_call","id":"%s","call_id":"%s","name":"%s","arguments":""}}`
	argsDeltaFmt  = `{"type":"response.function_call_arguments.delta","output_index":%d,"item_id":"%s","delta":%q}`
	callDoneFmt   = `{"type":"response.output_item.done","output_index":%d,"item":{"type":"function_call","id":"%s","call_id":"%s","name":"%s","arguments":%q,"status":"completed"}}`
	textDeltaFmt  = `{"type":"response.output_text.delta","output_index":%d,"content_index":0,"delta":%q}`
	summaryFmt    = `{"type":"response.reasoning_summary_text.delta","output_index":%d,"summary_index":%d,"delta":%q}`
	reasoningDone = `{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc-xyz"}}`
)

func f(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TestDecodeQuirks covers server behaviours the recorded fixtures do not.
func TestDecodeQuirks(t *testing.T) {
	u15 := usage(10, 5, 15, 0, 0)
	tests := []struct {
		name     string
		body     string
		want     summary
		wantKind provider.FailKind // "" for a normal end
	}{
		{
			name: "parallel function calls, interleaved",
			body: dataOnly(
				f(callAddedFmt, 0, "fc_a", "call_a", "one"),
				f(callAddedFmt, 1, "fc_b", "call_b", "two"),
				f(argsDeltaFmt, 1, "fc_b", `{"y":`),
				f(argsDeltaFmt, 0, "fc_a", `{"x":`),
				f(argsDeltaFmt, 0, "fc_a", `1}`),
				f(argsDeltaFmt, 1, "fc_b", `2}`),
				f(callDoneFmt, 0, "fc_a", "call_a", "one", `{"x":1}`),
				f(callDoneFmt, 1, "fc_b", "call_b", "two", `{"y":2}`),
				completed),
			want: summary{
				ToolCalls: []provider.ToolCall{{ID: "call_a", Name: "one", Arguments: `{"x":1}`}, {ID: "call_b", Name: "two", Arguments: `{"y":2}`}},
				Usage:     u15, Finish: provider.FinishToolCalls,
			},
		},
		{
			name: "item ids rotate between events",
			body: dataOnly(
				f(callAddedFmt, 0, "id-1", "call_a", "one"),
				f(argsDeltaFmt, 0, "id-2", `{"x"`),
				f(argsDeltaFmt, 0, "id-3", `:1}`),
				`{"type":"response.function_call_arguments.done","output_index":0,"item_id":"id-4","arguments":"{\"x\":1}"}`,
				f(callDoneFmt, 0, "id-5", "call_a", "one", `{"x":1}`),
				completed),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "call_a", Name: "one", Arguments: `{"x":1}`}}, Usage: u15, Finish: provider.FinishToolCalls},
		},
		{
			name: "arguments only in output_item.done",
			body: dataOnly(
				f(callAddedFmt, 0, "fc", "call_a", "one"),
				f(callDoneFmt, 0, "fc", "call_a", "one", `{"only":"done"}`),
				completed),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "call_a", Name: "one", Arguments: `{"only":"done"}`}}, Usage: u15, Finish: provider.FinishToolCalls},
		},
		{
			name: "arguments as an object, no call id",
			body: dataOnly(
				`{"type":"response.output_item.added","output_index":3,"item":{"type":"function_call","name":"f"}}`,
				`{"type":"response.output_item.done","output_index":3,"item":{"type":"function_call","name":"f","arguments":{"a": [1, 2]}}}`,
				completed),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "f", Arguments: `{"a": [1, 2]}`}}, Usage: u15, Finish: provider.FinishToolCalls},
		},
		{
			name: "calls never marked done are emitted at completion, in output order",
			body: dataOnly(
				f(callAddedFmt, 2, "fc_b", "call_b", "two"),
				f(argsDeltaFmt, 2, "fc_b", `{}`),
				f(callAddedFmt, 1, "fc_a", "call_a", "one"),
				f(argsDeltaFmt, 1, "fc_a", `{"k":1}`),
				completedNoU),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "call_a", Name: "one", Arguments: `{"k":1}`}, {ID: "call_b", Name: "two", Arguments: `{}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "a repeated done and late deltas change nothing",
			body: dataOnly(
				f(callAddedFmt, 0, "fc", "call_a", "one"),
				f(argsDeltaFmt, 0, "fc", `{}`),
				f(callDoneFmt, 0, "fc", "call_a", "one", `{}`),
				f(argsDeltaFmt, 0, "fc", `junk`),
				f(callDoneFmt, 0, "fc", "call_a", "one", `{}`),
				completedNoU),
			want: summary{ToolCalls: []provider.ToolCall{{ID: "call_a", Name: "one", Arguments: `{}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name: "refusal is answer text",
			body: dataOnly(
				f(textDeltaFmt, 0, "I can't "),
				`{"type":"response.refusal.delta","output_index":0,"content_index":1,"delta":"help with that."}`,
				completedNoU),
			want: summary{Text: "I can't help with that.", Finish: provider.FinishStop},
		},
		{
			name: "reasoning summary parts are separated",
			body: dataOnly(
				f(summaryFmt, 0, 0, "**One**"),
				f(summaryFmt, 0, 0, " first."),
				f(summaryFmt, 0, 1, "**Two**"),
				f(summaryFmt, 0, 1, " second."),
				reasoningDone,
				f(textDeltaFmt, 1, "Answer."),
				completedNoU),
			want: summary{Reasoning: "**One** first.\n\n**Two** second.", Text: "Answer.", Finish: provider.FinishStop}.SignedItem("rs_1", "enc-xyz"),
		},
		{
			name: "text and reasoning only in done items",
			body: dataOnly(
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","summary":[{"type":"summary_text","text":"A."},{"type":"summary_text","text":"B."}],"encrypted_content":null}}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi.","annotations":[]},{"type":"refusal","refusal":" No."}]}}`,
				`{"type":"response.output_item.done","output_index":2,"item":{"type":"reasoning","content":[{"type":"reasoning_text","text":"raw"}]}}`,
				completedNoU),
			want: summary{Reasoning: "A.\n\nB.\n\nraw", Text: "Hi. No.", Finish: provider.FinishStop},
		},
		{
			name: "whole result only in response.completed",
			body: dataOnly(
				`{"type":"response.created","response":{"status":"in_progress","output":[]}}`,
				`{"type":"response.completed","response":{"status":"completed","output":[`+
					`{"type":"reasoning","summary":[],"encrypted_content":"enc"},`+
					`{"type":"message","content":[{"type":"output_text","text":"Done."}]},`+
					`{"type":"function_call","call_id":"c1","name":"n","arguments":"{}"}],`+
					`"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`),
			want: summary{
				Text:      "Done.",
				ToolCalls: []provider.ToolCall{{ID: "c1", Name: "n", Arguments: "{}"}},
				Usage:     u15, Finish: provider.FinishToolCalls,
			}.Signed("enc"),
		},
		{
			name: "unknown events and items of any shape are skipped",
			body: ": keep-alive\n\nevent: ping\ndata: ping\n\n" + dataOnly(
				`{"type":"response.audio.delta","delta":{"not":"text"},"output_index":"x"}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","content":"odd","summary":5,"arguments":{"q":1}}}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","status":"completed"}}`,
				`{"sequence_number":1}`,
				`[1,2,3]`,
				f(textDeltaFmt, 1, "x"),
				completedNoU),
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "JSON type wins over the SSE event name",
			body: "event: message\ndata: " + f(textDeltaFmt, 0, "a") + "\n\n" +
				"event: response.completed\ndata: " + f(textDeltaFmt, 0, "b") + "\n\n" +
				"event: response.output_text.delta\ndata: " + completedNoU + "\n\n",
			want: summary{Text: "ab", Finish: provider.FinishStop},
		},
		{
			name: "escapes, surrogate pairs, lone surrogates, invalid UTF-8",
			body: dataOnly(
				`{"type":"response.output_text.delta","output_index":0,"delta":"caf\u00e9 \ud83e\udd8a \n\"q\"\\ "}`,
				`{"type":"response.output_text.delta","output_index":0,"delta":"lone \ud800 "}`,
				"{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"bad \xff\"}",
				completedNoU),
			want: summary{Text: "café 🦊 \n\"q\"\\ lone \uFFFD bad \uFFFD", Finish: provider.FinishStop},
		},
		{
			name: "type last, members in any order, whitespace, two data lines",
			body: "data: { \"delta\" : \"x\" ,\ndata:  \"logprobs\":[], \"output_index\" : 0 ,\t\"type\" : \"response.output_text.delta\" }\n\n" +
				dataOnly(completedNoU),
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "usage without total, cache write tokens",
			body: dataOnly(`{"type":"response.completed","response":{"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40,"cache_write_tokens":20},` +
				`"output_tokens":30,"output_tokens_details":null}}}`),
			want: summary{Usage: &provider.Usage{InputTokens: 100, OutputTokens: 30, CacheReadTokens: 40, CacheWriteTokens: 20, TotalTokens: 130}, Finish: provider.FinishStop},
		},
		{
			name: "terminal event without its blank line",
			body: dataOnly(f(textDeltaFmt, 0, "x")) + "data: " + completedNoU,
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "anything after the terminal event is not read",
			body: dataOnly(f(textDeltaFmt, 0, "x"), completedNoU, f(textDeltaFmt, 0, "y"), "not json", "[DONE]"),
			want: summary{Text: "x", Finish: provider.FinishStop},
		},
		{
			name: "text of a later message item after a tool call",
			body: dataOnly(
				f(textDeltaFmt, 0, "Looking."),
				f(callAddedFmt, 1, "fc", "call_a", "one"),
				f(callDoneFmt, 1, "fc", "call_a", "one", `{}`),
				f(textDeltaFmt, 2, "Done."),
				completedNoU),
			want: summary{Text: "Looking.\n\nDone.", ToolCalls: []provider.ToolCall{{ID: "call_a", Name: "one", Arguments: `{}`}}, Finish: provider.FinishToolCalls},
		},
		{
			name:     "event too large",
			body:     dataOnly(f(textDeltaFmt, 0, strings.Repeat("x", 2<<20)), completedNoU),
			wantKind: provider.FailDecode,
		},
		{
			name:     "wrong type for output_index",
			body:     dataOnly(`{"type":"response.output_text.delta","output_index":"0","delta":"x"}`, completedNoU),
			wantKind: provider.FailDecode,
		},
		{
			name:     "wrong type for usage",
			body:     dataOnly(`{"type":"response.completed","response":{"usage":{"input_tokens":"many"}}}`),
			wantKind: provider.FailDecode,
		},
		{
			name:     "not JSON in a data-only event",
			body:     dataOnly(`ping`),
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

// deltaStream returns n text-delta events shaped like the recorded
// gpt-5 streams (event line, sequence_number, item_id, logprobs and
// obfuscation members), framed by the usual item events and a
// response.completed with usage.
func deltaStream(n int) []byte {
	var b bytes.Buffer
	const item = "msg_01830d662ab3856501693c32183a488190a612c410a0a39823"
	b.WriteString("event: response.output_item.added\ndata: " +
		`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"` + item + `","type":"message","status":"in_progress","content":[],"role":"assistant"}}` + "\n\n")
	words := []string{" the", " quick", " brown", " fox", " jumps", "\n\n", " über", " 🦊"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "event: response.output_text.delta\ndata: "+
			`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"%s","output_index":0,"content_index":0,"delta":%q,"logprobs":[],"obfuscation":"yhjoJbEF"}`+"\n\n",
			i+3, item, words[i%len(words)])
	}
	b.WriteString("event: response.output_item.done\ndata: " +
		`{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"id":"` + item + `","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"..."}],"role":"assistant"}}` + "\n\n")
	b.WriteString("event: response.completed\ndata: " +
		`{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":16,"input_tokens_details":{"cached_tokens":0},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":316}}}` + "\n\n")
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

// FuzzDecode feeds arbitrary streams to the decoder: it must never panic,
// and must end either with EventFinish and no error or with a
// *provider.Error and no EventFinish.
func FuzzDecode(fz *testing.F) {
	for _, tc := range fixtureCases {
		fz.Add(fixtureBody(fz, tc.file))
	}
	fz.Add([]byte(dataOnly(f(callAddedFmt, 0, "fc", "c", "n"), f(argsDeltaFmt, 0, "fc", "{}"), completed)))
	fz.Add([]byte(dataOnly(f(summaryFmt, 0, 1, "a"), reasoningDone, `{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}`)))
	fz.Fuzz(func(t *testing.T, body []byte) {
		d := decodeStream(bytes.NewReader(body), 1<<16)
		finished := false
		for d.Next() {
			if finished {
				t.Fatal("event after EventFinish")
			}
			finished = d.Event().Kind == provider.EventFinish
		}
		if finished == (d.err != nil) {
			t.Fatalf("finished %v with err %v", finished, d.err)
		}
		if d.err != nil {
			var pe *provider.Error
			if !errors.As(d.err, &pe) {
				t.Fatalf("error %T %v", d.err, d.err)
			}
		}
	})
}
