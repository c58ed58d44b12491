package messages

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

// The hostile shapes for the Messages decoder; see
// edgetest.CheckHostile for what every one of them must hold.

func openHostile(r io.Reader, maxEventBytes int) edge.Decoder { return decodeStream(r, maxEventBytes) }

const hostileBound = 1 << 16

func hostileEv(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

const hostileStart = "event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}` + "\n\n"

func hostileTextStart(i int) string {
	return hostileEv("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
}

func hostileTextDelta(i int, text string) string {
	return hostileEv("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"%s"}}`, i, text))
}

func hostileToolStart(i int, id, name string) string {
	return hostileEv("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, i, id, name))
}

func hostileInputDelta(i int, partial string) string {
	return hostileEv("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, partial))
}

func hostileStop(i int) string {
	return hostileEv("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

func hostileEnd(reason string) string {
	return hostileEv("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+reason+`"},"usage":{"output_tokens":9}}`) +
		hostileEv("message_stop", `{"type":"message_stop"}`)
}

var hostileMessages = []providertest.HostileCase{
	{"endless text in one event", hostileStart + hostileTextStart(0) + hostileTextDelta(0, strings.Repeat("a", hostileBound)) + hostileStop(0) + hostileEnd("end_turn"),
		edgetest.WantFailure(provider.FailDecode)},
	{"giant tool arguments in pieces", hostileStart + hostileToolStart(0, `"toolu_1"`, `"read"`) +
		strings.Repeat(hostileInputDelta(0, `"`+strings.Repeat("x", 4000)+`"`), 12) + hostileStop(0) + hostileEnd("tool_use"),
		func(t *testing.T, o edgetest.Outcome) {
			if calls := o.ToolCalls(); len(calls) != 1 || len(calls[0].Arguments) != 48000 {
				t.Errorf("calls %d, error %v", len(calls), o.Err)
			}
		}},
	{"duplicate tool-call ids", hostileStart + hostileToolStart(0, `"dup"`, `"read"`) + hostileStop(0) + hostileToolStart(1, `"dup"`, `"ls"`) + hostileStop(1) + hostileEnd("tool_use"), nil},
	{"empty tool-call id", hostileStart + hostileToolStart(0, `""`, `"read"`) + hostileStop(0) + hostileEnd("tool_use"), nil},
	{"empty tool name", hostileStart + hostileToolStart(0, `"toolu_1"`, `""`) + hostileStop(0) + hostileEnd("tool_use"), nil},
	{"null tool name and id", hostileStart + hostileToolStart(0, `null`, `null`) + hostileStop(0) + hostileEnd("tool_use"), nil},
	{"hostile id bytes", hostileStart + hostileToolStart(0, `"\u0000\ud800`+"\xff"+`"`, `"re\nad"`) + hostileStop(0) + hostileEnd("tool_use"), nil},
	{"interleaved indices", hostileStart + hostileToolStart(0, `"a"`, `"read"`) + hostileToolStart(1, `"b"`, `"ls"`) + hostileInputDelta(1, `"{\"p\":"`) +
		hostileInputDelta(0, `"{\"p\":"`) + hostileInputDelta(0, `"0}"`) + hostileInputDelta(1, `"1}"`) + hostileStop(1) + hostileStop(0) + hostileEnd("tool_use"), nil},
	{"deltas for blocks never started", hostileStart + hostileTextDelta(5, "ghost") + hostileInputDelta(7, `"{}"`) + hostileStop(9) + hostileEnd("end_turn"), nil},
	{"a block index reused", hostileStart + hostileTextStart(0) + hostileTextDelta(0, "one") + hostileStop(0) + hostileToolStart(0, `"t"`, `"read"`) +
		hostileInputDelta(0, `"{}"`) + hostileStop(0) + hostileTextDelta(0, "late") + hostileEnd("tool_use"), nil},
	{"many blocks", func() string {
		var b strings.Builder
		b.WriteString(hostileStart)
		for i := range 1500 {
			b.WriteString(hostileToolStart(i, fmt.Sprintf(`"t%d"`, i), `"ls"`) + hostileStop(i))
		}
		return b.String() + hostileEnd("tool_use")
	}(), nil},
	{"unknown event types", hostileStart + hostileEv("future_event", `{"type":"future_event","x":[1]}`) + hostileEv("ping", `{"type":"ping"}`) +
		"data: {\"type\":\"unheard_of\"}\n\n" + hostileTextStart(0) + hostileEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"new_delta","z":1}}`) +
		hostileTextDelta(0, "ok") + hostileStop(0) + hostileEnd("end_turn"), func(t *testing.T, o edgetest.Outcome) {
		if o.Err != nil || o.Text() != "ok" {
			t.Errorf("text %q error %v", o.Text(), o.Err)
		}
	}},
	{"truncated JSON then end", hostileStart + `event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ab`,
		edgetest.WantFailure(provider.FailStreamCut)},
	{"truncated JSON event", hostileStart + hostileEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"te`) + hostileEnd("end_turn"),
		edgetest.WantFailure(provider.FailDecode)},
	{"depth bomb in an ignored member", hostileStart + hostileEv("message_delta", `{"type":"message_delta","delta":{"x":`+edgetest.DepthBomb(20000)+`}}`) + hostileEnd("end_turn"), nil},
	{"depth bomb as tool input", hostileStart + hostileEv("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"read","input":`+edgetest.DepthBomb(20000)+`}}`) +
		hostileStop(0) + hostileEnd("tool_use"), nil},
	{"invalid UTF-8 and lone surrogates", hostileStart + hostileTextStart(0) + hostileTextDelta(0, "a\xff\xfeb\\ud800c") + hostileStop(0) + hostileEnd("end_turn"),
		func(t *testing.T, o edgetest.Outcome) {
			if o.Err != nil || o.Text() != "a\uFFFD\uFFFDb\uFFFDc" {
				t.Errorf("text %+q error %v", o.Text(), o.Err)
			}
		}},
	{"error after content", hostileStart + hostileTextStart(0) + hostileTextDelta(0, "partial") + hostileEv("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		edgetest.WantFailure(provider.FailErrorEvent)},
	{"empty body", "", edgetest.WantFailure(provider.FailStreamCut)},
}

// hostile is the decoder with its hostile shapes.
var hostile = providertest.Hostile{Open: openHostile, Bound: hostileBound, Cases: hostileMessages}

// TestHostileShapes runs every hostile shape through the decoder.
func TestHostileShapes(t *testing.T) { hostile.Run(t) }

// TestEndlessStreams: a provider that never stops, in one event or in
// deltas, costs bounded memory.
func TestEndlessStreams(t *testing.T) {
	t.Run("one event", func(t *testing.T) {
		edgetest.CheckEndlessEvent(t, openHostile, 1<<20, hostileStart+hostileTextStart(0)+"event: content_block_delta\ndata: "+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`, "abcdefgh")
	})
	t.Run("deltas", func(t *testing.T) {
		edgetest.CheckEndlessDeltas(t, openHostile, hostileStart+hostileTextStart(0), func(text string) string { return hostileTextDelta(0, text) })
	})
	t.Run("thinking deltas", func(t *testing.T) {
		start := hostileEv("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		edgetest.CheckEndlessDeltas(t, openHostile, hostileStart+start, func(text string) string {
			return hostileEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`+text+`"}}`)
		})
	})
}

// FuzzDecodeHostile feeds the decoder the recorded streams, the hostile
// shapes and what the fuzzer makes of them, reshaped event by event by
// ops (edgetest.Mutate), and checks edgetest.CheckHostile's invariants.
func FuzzDecodeHostile(f *testing.F) { hostile.Fuzz(f, "testdata/anthropic", edgetest.TypedEvents) }

// TestManyToolCallsLinear: thousands of tool_use blocks cost time in
// proportion to the stream.
func TestManyToolCallsLinear(t *testing.T) {
	edgetest.CheckLinear(t, openHostile, 3000, func(n int) []byte {
		var b strings.Builder
		b.WriteString(hostileStart)
		for i := range n {
			b.WriteString(hostileToolStart(i, fmt.Sprintf(`"t%d"`, i), `"ls"`))
		}
		for i := range n {
			b.WriteString(hostileInputDelta(i, `"{}"`) + hostileStop(i))
		}
		return []byte(b.String() + hostileEnd("tool_use"))
	})
}
