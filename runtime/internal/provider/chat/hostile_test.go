package chat

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

// The hostile shapes for the Chat Completions decoder; see
// edgetest.CheckHostile for what every one of them must hold.

func openHostile(r io.Reader, maxEventBytes int) edge.Decoder { return decodeStream(r, maxEventBytes) }

// hostileBound is the event bound of the hostile checks: small, so that a
// huge single event stays a cheap fuzz input.
const hostileBound = 1 << 16

func chunkEvent(delta string) string {
	return `data: {"choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
}

func toolDelta(index, id, name, args string) string {
	call := `{"index":` + index
	if id != "" {
		call += `,"id":` + id
	}
	call += `,"function":{"name":` + name + `,"arguments":` + args + `}}`
	return chunkEvent(`{"tool_calls":[` + call + `]}`)
}

const chatDone = "data: [DONE]\n\n"

func finishEvent(reason string) string {
	return `data: {"choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}` + "\n\n"
}

var hostileChat = []providertest.HostileCase{
	{"endless text in one event", chunkEvent(`{"content":"`+strings.Repeat("a", hostileBound)+`"}`) + chatDone,
		edgetest.WantFailure(provider.FailDecode)},
	{"text just under the bound", chunkEvent(`{"content":"`+strings.Repeat("é", (hostileBound-100)/2)+`"}`) + chatDone,
		func(t *testing.T, o edgetest.Outcome) {
			if o.Err != nil || len(o.Text()) != (hostileBound-100)/2*2 {
				t.Errorf("text of %d bytes, error %v", len(o.Text()), o.Err)
			}
		}},
	{"giant tool arguments in pieces", toolDelta("0", `"call_1"`, `"read"`, `""`) +
		strings.Repeat(toolDelta("0", "", `""`, `"`+strings.Repeat("x", 4000)+`"`), 12) + finishEvent("tool_calls") + chatDone,
		func(t *testing.T, o edgetest.Outcome) {
			calls := o.ToolCalls()
			if len(calls) != 1 || len(calls[0].Arguments) != 48000 {
				t.Errorf("calls %d, error %v", len(calls), o.Err)
			}
		}},
	{"duplicate tool-call ids", toolDelta("0", `"dup"`, `"read"`, `"{}"`) + toolDelta("1", `"dup"`, `"ls"`, `"{}"`) + finishEvent("tool_calls") + chatDone, nil},
	{"empty tool-call id and name", toolDelta("0", `""`, `""`, `"{}"`) + finishEvent("tool_calls") + chatDone, nil},
	{"tool call without name", toolDelta("0", `"c1"`, `null`, `"{\"a\":1}"`) + chatDone, nil},
	{"hostile id bytes", toolDelta("0", `"\u0000\ud800\n`+"\xff"+`"`, `"re\u0000ad"`, `"{}"`) + chatDone, nil},
	{"interleaved indices", toolDelta("1", `"b"`, `"ls"`, `"{\"pa"`) + toolDelta("0", `"a"`, `"read"`, `"{\"pa"`) +
		toolDelta("1", "", `""`, `"th\":1}"`) + toolDelta("0", "", `""`, `"th\":0}"`) + toolDelta("7", `"c"`, `"find"`, `"{}"`) + chatDone,
		func(t *testing.T, o edgetest.Outcome) {
			calls := o.ToolCalls()
			if len(calls) != 3 || calls[0].Arguments != `{"path":0}` || calls[1].Arguments != `{"path":1}` {
				t.Errorf("calls %+v, error %v", calls, o.Err)
			}
		}},
	{"huge and negative indices", toolDelta("2147483647", `"a"`, `"read"`, `"{}"`) + toolDelta("-1", `"b"`, `"ls"`, `"{}"`) +
		toolDelta("1e400", `"c"`, `"ls"`, `"{}"`) + chatDone, nil},
	{"many tool calls", func() string {
		var b strings.Builder
		for i := range 2000 {
			b.WriteString(toolDelta(fmt.Sprint(i), "", `"ls"`, `""`))
		}
		return b.String() + chatDone
	}(), nil},
	{"unknown event types", "event: ping\ndata: {}\n\nevent: x\ndata: [DONE]\n\n" + `data: {"object":"something.else","data":[1,2]}` + "\n\n" +
		chunkEvent(`{"content":"ok"}`) + chatDone, func(t *testing.T, o edgetest.Outcome) {
		if o.Err != nil || o.Text() != "ok" {
			t.Errorf("text %q error %v", o.Text(), o.Err)
		}
	}},
	{"truncated JSON then end", `data: {"choices":[{"index":0,"delta":{"content":"ab`, edgetest.WantFailure(provider.FailStreamCut)},
	{"truncated JSON event", `data: {"choices":[{"index":0,"delta":{"content":"ab` + "\n\n" + chatDone, edgetest.WantFailure(provider.FailDecode)},
	{"depth bomb in an ignored member", chunkEvent(`{"content":"x","extra":`+edgetest.DepthBomb(20000)+`}`) + chatDone, nil},
	{"depth bomb as arguments", toolDelta("0", `"a"`, `"read"`, edgetest.DepthBomb(20000)) + chatDone, nil},
	{"depth bomb as reasoning", chunkEvent(`{"reasoning":`+edgetest.DepthBomb(20000)+`}`) + chatDone, nil},
	{"invalid UTF-8 and lone surrogates", chunkEvent(`{"content":"a`+"\xff\xfe"+`b\ud800c\udc00"}`) +
		chunkEvent(`{"reasoning_content":"`+"\xc3"+`"}`) + chatDone, func(t *testing.T, o edgetest.Outcome) {
		if o.Err != nil || o.Text() != "a\uFFFD\uFFFDb\uFFFDc\uFFFD" {
			t.Errorf("text %+q error %v", o.Text(), o.Err)
		}
	}},
	{"error after content", chunkEvent(`{"content":"partial"}`) + `data: {"error":{"message":"boom","code":"server_error"}}` + "\n\n",
		edgetest.WantFailure(provider.FailErrorEvent)},
	{"nothing but [DONE]", chatDone, nil},
	{"empty body", "", edgetest.WantFailure(provider.FailStreamCut)},
}

// hostile is the decoder with its hostile shapes.
var hostile = providertest.Hostile{Open: openHostile, Bound: hostileBound, Cases: hostileChat}

// TestHostileShapes runs every hostile shape through the decoder.
func TestHostileShapes(t *testing.T) { hostile.Run(t) }

// TestEndlessStreams: a provider that never stops, in one event or in
// deltas, costs bounded memory.
func TestEndlessStreams(t *testing.T) {
	t.Run("one event", func(t *testing.T) {
		edgetest.CheckEndlessEvent(t, openHostile, 1<<20, `data: {"choices":[{"index":0,"delta":{"content":"`, "abcdefgh")
	})
	t.Run("tool arguments in one event", func(t *testing.T) {
		edgetest.CheckEndlessEvent(t, openHostile, 1<<20, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"`, "xxxxxxxx")
	})
	t.Run("deltas", func(t *testing.T) {
		edgetest.CheckEndlessDeltas(t, openHostile, "", func(text string) string { return chunkEvent(`{"content":"` + text + `"}`) })
	})
}

// FuzzDecodeHostile feeds the decoder the recorded streams, the hostile
// shapes and what the fuzzer makes of them, reshaped event by event by
// ops (edgetest.Mutate), and checks edgetest.CheckHostile's invariants.
func FuzzDecodeHostile(f *testing.F) {
	hostile.Fuzz(f, "testdata/openai-chat", func(tb testing.TB, _ string, raw []byte) []byte {
		return edgetest.DataEvents(tb, raw)
	})
}

// TestManyToolCallsLinear: thousands of tool calls (each index its own
// call) cost time in proportion to the stream.
func TestManyToolCallsLinear(t *testing.T) {
	edgetest.CheckLinear(t, openHostile, 3000, func(n int) []byte {
		var b strings.Builder
		for i := range n {
			b.WriteString(toolDelta(fmt.Sprint(i), "", `"ls"`, `"{}"`))
		}
		for i := range n {
			b.WriteString(toolDelta(fmt.Sprint(i), "", `""`, `" "`))
		}
		return []byte(b.String() + chatDone)
	})
}
