package responses

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// The read path of the WebSocket transport (wsStream.readMessage) against
// frames served from memory: messages of every size the reused buffer
// meets, fragmented messages with a control frame between fragments,
// binary messages and the read limit's exact bound.

const (
	wsAdded     = `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`
	wsCompleted = `{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":5,"total_tokens":8}}}`
)

// wsDelta is a text delta event.
func wsDelta(t *testing.T, text string) []byte {
	t.Helper()
	q, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":` + string(q) + `}`)
}

// wsDone is the output_item.done event of a message with text.
func wsDone(t *testing.T, text string) []byte {
	t.Helper()
	q, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":` + string(q) + `}],"role":"assistant"}}`)
}

// memWS returns a WebSocket Provider whose socket reads frames from memory.
func memWS(t *testing.T, frames []byte) *Provider {
	t.Helper()
	p, err := New(Config{BaseURL: "https://mem.invalid/v1", APIKey: testKey, Transport: TransportWebSocket,
		HTTPClient: &http.Client{Transport: &memTransport{frames: frames}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Messages shorter and longer than the buffer a stream starts with, one
// of 64 KiB, one longer than the long-event threshold (read as it
// arrives, not buffered whole) and a message in three fragments with a
// ping between two of them all arrive whole and in order; the buffer
// never grows past the threshold.
func TestWebSocketReadSizes(t *testing.T) {
	parts := []string{"a", strings.Repeat("b", 3000), "fragmented ", strings.Repeat("c", 65<<10), strings.Repeat("d", edge.LongDataAt+1000), "z"}
	full := strings.Join(parts, "")
	var fr []byte
	fr = appendFrame(fr, opText, true, []byte(wsAdded))
	fr = appendFrame(fr, opText, true, wsDelta(t, parts[0]))
	fr = appendFrame(fr, opText, true, wsDelta(t, parts[1]))
	frag := wsDelta(t, parts[2])
	fr = appendFrame(fr, opText, false, frag[:10])
	fr = appendFrame(fr, opContinuation, false, frag[10:20])
	fr = appendFrame(fr, opPing, true, []byte("ping"))
	fr = appendFrame(fr, opContinuation, true, frag[20:])
	fr = appendFrame(fr, opText, true, wsDelta(t, parts[3]))
	fr = appendFrame(fr, opText, true, wsDelta(t, parts[4]))
	fr = appendFrame(fr, opText, true, wsDelta(t, parts[5]))
	fr = appendFrame(fr, opText, true, wsDone(t, full))
	fr = appendFrame(fr, opText, true, []byte(wsCompleted))
	p := memWS(t, fr)

	s, err := p.Stream(context.Background(), question)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var texts []string
	for s.Next() {
		if ev := s.Event(); ev.Kind == provider.EventText {
			texts = append(texts, ev.Text)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, "|") != strings.Join(parts, "|") {
		t.Fatalf("got %d texts of lengths %v", len(texts), lengths(texts))
	}
	if c := cap(s.(*wsStream).msg); c > edge.LongDataAt+1 {
		t.Fatalf("the stream kept a buffer of %d bytes", c)
	}
}

func lengths(ss []string) []int {
	n := make([]int, len(ss))
	for i, s := range ss {
		n[i] = len(s)
	}
	return n
}

// A binary message is not an event: the call fails as undecodable, as the
// first message or later.
func TestWebSocketBinaryMessage(t *testing.T) {
	for _, first := range []bool{true, false} {
		var fr []byte
		if !first {
			fr = appendFrame(fr, opText, true, []byte(wsAdded))
			fr = appendFrame(fr, opText, true, wsDelta(t, "hi"))
		}
		fr = appendFrame(fr, opBinary, true, wsDelta(t, "bytes"))
		fr = appendFrame(fr, opText, true, []byte(wsCompleted))
		p := memWS(t, fr)
		_, err := call(t, p, question)
		pe := edgetest.AsProviderError(t, err)
		if pe.Kind != provider.FailDecode || !pe.RequestWritten || pe.ContentStarted == first || !strings.Contains(pe.Message, "binary") {
			t.Fatalf("first %v: %+v", first, pe)
		}
	}
}

// A message of exactly the socket's read limit is read; one byte more is
// refused as larger than the event bound.
func TestWebSocketReadLimitBound(t *testing.T) {
	at := wsDelta(t, strings.Repeat("x", 500))
	over := wsDelta(t, strings.Repeat("y", 501))
	var fr []byte
	fr = appendFrame(fr, opText, true, []byte(wsAdded))
	fr = appendFrame(fr, opText, true, at)
	fr = appendFrame(fr, opText, true, over)
	fr = appendFrame(fr, opText, true, []byte(wsCompleted))
	p := memWS(t, fr)

	s, err := p.Stream(context.Background(), question)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.(*wsStream).s.setReadLimit(int64(len(at)))
	var texts []string
	for s.Next() {
		if ev := s.Event(); ev.Kind == provider.EventText {
			texts = append(texts, ev.Text)
		}
	}
	pe := edgetest.AsProviderError(t, s.Err())
	if len(texts) != 1 || len(texts[0]) != 500 || pe.Kind != provider.FailDecode || !strings.Contains(pe.Message, "larger than the event bound") {
		t.Fatalf("texts %v, %+v", lengths(texts), pe)
	}
}
