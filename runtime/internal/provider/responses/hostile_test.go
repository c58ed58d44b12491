package responses

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

// The hostile shapes for the Responses decoder; see
// edgetest.CheckHostile for what every one of them must hold.

func openHostile(r io.Reader, maxEventBytes int) edge.Decoder { return decodeStream(r, maxEventBytes) }

const hostileBound = 1 << 16

// hostileEv frames data as an event of its JSON type.
func hostileEv(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

func hostileText(i int, text string) string {
	return hostileEv("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","output_index":%d,"content_index":0,"delta":"%s"}`, i, text))
}

func hostileCallAdded(i int, callID, name string) string {
	return hostileEv("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"type":"function_call","id":"fc_%d","call_id":%s,"name":%s,"arguments":""}}`, i, i, callID, name))
}

func hostileArgs(i int, delta string) string {
	return hostileEv("response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","output_index":%d,"item_id":"fc_%d","delta":%s}`, i, i, delta))
}

func hostileCallDone(i int, callID, name string) string {
	return hostileEv("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":{"type":"function_call","id":"fc_%d","call_id":%s,"name":%s,"status":"completed"}}`, i, i, callID, name))
}

var hostileCompleted = hostileEv("response.completed", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`)

var hostileResponses = []providertest.HostileCase{
	{"endless text in one event", hostileText(0, strings.Repeat("a", hostileBound)) + hostileCompleted, edgetest.WantFailure(provider.FailDecode)},
	{"giant tool arguments in pieces", hostileCallAdded(0, `"call_1"`, `"read"`) +
		strings.Repeat(hostileArgs(0, `"`+strings.Repeat("x", 4000)+`"`), 12) + hostileCallDone(0, `"call_1"`, `"read"`) + hostileCompleted,
		func(t *testing.T, o edgetest.Outcome) {
			if calls := o.ToolCalls(); len(calls) != 1 || len(calls[0].Arguments) != 48000 {
				t.Errorf("calls %d, error %v", len(calls), o.Err)
			}
		}},
	{"duplicate tool-call ids", hostileCallAdded(0, `"dup"`, `"read"`) + hostileCallDone(0, `"dup"`, `"read"`) +
		hostileCallAdded(1, `"dup"`, `"ls"`) + hostileCallDone(1, `"dup"`, `"ls"`) + hostileCompleted, nil},
	{"empty tool-call id", hostileCallAdded(0, `""`, `"read"`) + hostileCallDone(0, `""`, `"read"`) + hostileCompleted, nil},
	{"empty tool name", hostileCallAdded(0, `"c"`, `""`) + hostileCallDone(0, `"c"`, `""`) + hostileCompleted, nil},
	{"tool call done without added", hostileCallDone(3, `null`, `null`) + hostileCompleted, nil},
	{"arguments for no item", hostileArgs(4, `"{}"`) + hostileEv("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","output_index":4,"arguments":"{}"}`) + hostileCompleted, nil},
	{"hostile id bytes", hostileCallAdded(0, `"\u0000\ud800`+"\xff"+`"`, `"re\nad"`) + hostileCallDone(0, `"\u0000"`, `"re\nad"`) + hostileCompleted, nil},
	{"interleaved indices", hostileCallAdded(0, `"a"`, `"read"`) + hostileCallAdded(1, `"b"`, `"ls"`) + hostileArgs(1, `"{\"p\":"`) +
		hostileArgs(0, `"{\"p\":"`) + hostileArgs(0, `"0}"`) + hostileArgs(1, `"1}"`) + hostileCallDone(1, `"b"`, `"ls"`) +
		hostileCallDone(0, `"a"`, `"read"`) + hostileCompleted, nil},
	{"many items", func() string {
		var b strings.Builder
		for i := range 1500 {
			b.WriteString(hostileCallAdded(i, fmt.Sprintf(`"c%d"`, i), `"ls"`))
		}
		return b.String() + hostileCompleted
	}(), nil},
	{"unknown event types", hostileEv("response.future", `{"type":"response.future","x":[1]}`) + "data: {\"type\":\"unheard.of\"}\n\n" +
		"data: [1,2,3]\n\n" + hostileText(0, "ok") + hostileCompleted, func(t *testing.T, o edgetest.Outcome) {
		if o.Err != nil || o.Text() != "ok" {
			t.Errorf("text %q error %v", o.Text(), o.Err)
		}
	}},
	{"truncated JSON then end", "event: response.output_text.delta\ndata: " + `{"type":"response.output_text.delta","output_index":0,"delta":"ab`,
		edgetest.WantFailure(provider.FailStreamCut)},
	{"truncated JSON event", hostileEv("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"ab`) + hostileCompleted,
		edgetest.WantFailure(provider.FailDecode)},
	{"depth bomb in an ignored member", hostileEv("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"x","logprobs":`+edgetest.DepthBomb(20000)+`}`) + hostileCompleted, nil},
	{"depth bomb in the response", hostileEv("response.completed", `{"type":"response.completed","response":{"status":"completed","output":`+edgetest.DepthBomb(20000)+`}}`), nil},
	{"invalid UTF-8 and lone surrogates", hostileText(0, "a\xff\xfeb\\ud800c") + hostileCompleted, func(t *testing.T, o edgetest.Outcome) {
		if o.Err != nil || o.Text() != "a\uFFFD\uFFFDb\uFFFDc" {
			t.Errorf("text %+q error %v", o.Text(), o.Err)
		}
	}},
	{"error after content", hostileText(0, "partial") + hostileEv("error", `{"type":"error","code":"server_error","message":"boom"}`),
		edgetest.WantFailure(provider.FailErrorEvent)},
	{"empty body", "", edgetest.WantFailure(provider.FailStreamCut)},
}

// hostile is the decoder with its hostile shapes.
var hostile = providertest.Hostile{Open: openHostile, Bound: hostileBound, Cases: hostileResponses}

// TestHostileShapes runs every hostile shape through the decoder.
func TestHostileShapes(t *testing.T) { hostile.Run(t) }

// TestEndlessStreams: a provider that never stops, in one event or in
// deltas, costs bounded memory.
func TestEndlessStreams(t *testing.T) {
	t.Run("one event", func(t *testing.T) {
		edgetest.CheckEndlessEvent(t, openHostile, 1<<20, "event: response.output_text.delta\ndata: "+`{"type":"response.output_text.delta","output_index":0,"delta":"`, "abcdefgh")
	})
	t.Run("deltas", func(t *testing.T) {
		edgetest.CheckEndlessDeltas(t, openHostile, "", func(text string) string { return hostileText(0, text) })
	})
	t.Run("reasoning deltas", func(t *testing.T) {
		edgetest.CheckEndlessDeltas(t, openHostile, "", func(text string) string {
			return hostileEv("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"`+text+`"}`)
		})
	})
}

// FuzzDecodeHostile feeds the decoder the recorded streams, the hostile
// shapes and what the fuzzer makes of them, reshaped event by event by
// ops (edgetest.Mutate), and checks edgetest.CheckHostile's invariants.
func FuzzDecodeHostile(f *testing.F) {
	hostile.Fuzz(f, "testdata/openai-responses", edgetest.TypedEvents)
}

// TestManyToolCallsLinear: thousands of function-call items cost time in
// proportion to the stream.
func TestManyToolCallsLinear(t *testing.T) {
	edgetest.CheckLinear(t, openHostile, 3000, func(n int) []byte {
		var b strings.Builder
		for i := range n {
			b.WriteString(hostileCallAdded(i, fmt.Sprintf(`"c%d"`, i), `"ls"`))
		}
		for i := range n {
			b.WriteString(hostileArgs(i, `"{}"`))
		}
		return []byte(b.String() + hostileCompleted)
	})
}
