package runtime_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// benchDeltas is a Responses event stream of n text deltas, as the data
// of each event (one WebSocket message, or one SSE event).
func benchDeltas(n int) [][]byte {
	const item = "msg_01830d662ab3856501693c32183a488190a612c410a0a39823"
	words := []string{" the", " quick", " brown", " fox", " jumps", " over", " über", " 🦊"}
	evs := [][]byte{[]byte(`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"` + item + `","type":"message","status":"in_progress","content":[],"role":"assistant"}}`)}
	for i := range n {
		evs = append(evs, fmt.Appendf(nil, `{"type":"response.output_text.delta","sequence_number":%d,"item_id":"%s","output_index":0,"content_index":0,"delta":%q,"logprobs":[],"obfuscation":"yhjoJbEF"}`, i+2, item, words[i%len(words)]))
	}
	return append(evs,
		[]byte(`{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"id":"`+item+`","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"..."}],"role":"assistant"}}`),
		[]byte(`{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":16,"input_tokens_details":{"cached_tokens":0},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":316}}}`))
}

// memProvider answers from memory: a WebSocket handshake with 101 and a
// connection whose reads are the events as server frames, a POST with the
// events as server-sent events.
type memProvider struct{ sse, frames []byte }

func newMemProvider(evs [][]byte) *memProvider {
	m := &memProvider{}
	for _, ev := range evs {
		m.sse = append(append(append(m.sse, "data: "...), ev...), "\n\n"...)
		m.frames = append(m.frames, 0x81)
		switch n := len(ev); {
		case n < 126:
			m.frames = append(m.frames, byte(n))
		case n < 1<<16:
			m.frames = binary.BigEndian.AppendUint16(append(m.frames, 126), uint16(n))
		default:
			m.frames = binary.BigEndian.AppendUint64(append(m.frames, 127), uint64(n))
		}
		m.frames = append(m.frames, ev...)
	}
	return m
}

func (m *memProvider) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Upgrade") == "websocket" {
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		return &http.Response{StatusCode: http.StatusSwitchingProtocols, Request: r, Header: http.Header{
			"Upgrade": {"websocket"}, "Connection": {"Upgrade"}, "Sec-Websocket-Accept": {base64.StdEncoding.EncodeToString(sum[:])},
		}, Body: &memConn{r: bytes.NewReader(m.frames)}}, nil
	}
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	return &http.Response{StatusCode: http.StatusOK, Request: r, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m.sse))}, nil
}

type memConn struct{ r *bytes.Reader }

func (c *memConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *memConn) Close() error                { return nil }

// BenchmarkRouteDeltas is the per-delta cost of a whole run of 20,000 text
// deltas through the agent (decoding, redaction, model_delta events) on a
// configured openai-responses route over each transport, the same events
// served from memory. The WebSocket figures are compared with the HTTP
// ones in scripts/bench.
func BenchmarkRouteDeltas(b *testing.B) {
	const n = 20000
	mem := newMemProvider(benchDeltas(n))
	// websocket-native is a route qualified for native steering: every
	// event passes the steering gate (nothing is steered).
	for _, name := range []string{"http", "websocket", "websocket-native"} {
		transport, native, _ := strings.Cut(name, "-")
		b.Run(name, func(b *testing.B) {
			home := b.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
				b.Fatal(err)
			}
			cfg := `{"providers":{"bench":{"base_url":"https://bench.invalid/v1","provider_mode":"openai-responses","transport":"` + transport + `",` +
				`"models":[{"id":"m","context_window_tokens":1000000,"max_output_tokens":100000,"native_steering":` + fmt.Sprint(native != "") + `}]}}}`
			if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
				b.Fatal(err)
			}
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }, HTTPClient: &http.Client{Transport: mem}})
			if err != nil {
				b.Fatal(err)
			}
			ws := b.TempDir()
			var ms0, ms1 goruntime.MemStats
			goruntime.ReadMemStats(&ms0)
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				i++
				rc, err := agent.Run(context.Background(), runtime.RunRequest{RunID: fmt.Sprint("r", i), Workspace: ws, Model: "m", Prompt: "go", Tools: []string{},
					SessionDir: filepath.Join(home, "sessions")})
				if err != nil {
					b.Fatal(err)
				}
				deltas := 0
				for ev := range rc.Events() {
					if _, ok := ev.Data.(*protocol.ModelDelta); ok {
						deltas++
					}
				}
				if res := rc.Wait(); res.Status != "completed" || deltas < n {
					b.Fatalf("%d deltas, result %+v", deltas, res)
				}
			}
			goruntime.ReadMemStats(&ms1)
			deltas := float64(b.N) * n
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deltas, "ns/delta")
			b.ReportMetric(float64(cpuTime()-cpu0)/deltas, "cpu-ns/delta")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/deltas, "allocs/delta")
		})
	}
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
