package host

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestEventsAreNotHeldWhileTheRunWaits: the host writes events that arrive
// together in batches (wire.Stream.Hold), but never keeps one back while
// no other is ready. The provider sends deltas, then waits until the
// client has read every one of them before it ends the answer: a delta
// held back would never reach the client. (The provider gives up after
// half a minute so that such a failure is reported rather than hung.)
func TestEventsAreNotHeldWhileTheRunWaits(t *testing.T) {
	const n = 50
	release := make(chan struct{})
	var gaveUp atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range n {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		}
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(30 * time.Second): // under the stream idle timeout, so no retry
			gaveUp.Store(true)
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := New(Config{In: inR, Out: outW, Agent: newTestAgent(t), Version: "test"})
	go h.Serve(context.Background())
	defer inW.Close()
	go fmt.Fprintf(inW, `{"protocol_version":1,"request_id":"q","command":"run","run_id":"r","workspace":%q,"model":"m","prompt":"go","provider":"p","base_url":%q,"tools":[]}`+"\n",
		t.TempDir(), srv.URL+"/v1")
	out := bufio.NewReader(outR)
	deltas := 0
	for {
		l, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(l, []byte(`"type":"model_delta"`)) {
			if deltas++; deltas == n {
				close(release)
			}
		}
		if bytes.Contains(l, []byte(`"type":"final_result"`)) {
			if !bytes.Contains(l, []byte(`"status":"completed"`)) {
				t.Fatalf("run failed: %s", l)
			}
			break
		}
	}
	if gaveUp.Load() || deltas != n {
		t.Fatalf("the client read %d of %d deltas while the provider waited (gave up: %v)", deltas, n, gaveUp.Load())
	}
}
