package fakeprovider

import (
	"bytes"
	"net/http"
	"strings"
	"time"
)

// endless plays a FaultEndless: it encodes a turn whose only content is
// one piece of the fault's channel, sends the events before the one that
// carries the piece, then that event forever.
func (s *Server) endless(w http.ResponseWriter, r *http.Request, mode Mode, f FaultEndless, body map[string]any, n int, requestID string) {
	piece := strings.Repeat("x", f.Piece)
	t := Turn{Chunk: -1}
	switch f.Channel {
	case "reasoning":
		t.Reasoning = piece
	case "arguments":
		t.ToolCalls = []ToolCall{{Name: "read", Arguments: `{"path":"` + piece + `"}`}}
		t.Chunk = f.Piece
	default:
		t.Text = piece
	}
	model, _ := body["model"].(string)
	enc := encodeTurn(mode, &encodeParams{turn: &t, model: model, n: n, created: time.Now().Unix()})
	k := 0
	for k < len(enc.events) && !bytes.Contains(enc.events[k], []byte("xxxxxxxx")) {
		k++
	}
	if k == len(enc.events) {
		panic("fakeprovider: FaultEndless: no event carries the piece")
	}
	streamHeader(w.Header(), mode, requestID)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i := 0; ; i++ {
		ev := enc.events[min(i, k)]
		if _, err := w.Write(ev); err != nil {
			return
		}
		if i < k {
			continue
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			if conn, _, err := rc.Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		default:
		}
	}
}
