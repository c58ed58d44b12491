package responses

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"runtime"
	"syscall"
	"testing"

	"octet.dev/host/runtime/provider"
)

// memTransport answers every request from memory: a WebSocket handshake
// with 101 and a connection whose reads are frames, a POST with an event
// stream. It lets BenchmarkTransportDeltas compare the two transports'
// client cost without a network or a server in the measurement.
type memTransport struct{ sse, frames []byte }

func (m *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
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

// memConn is a connection whose reads come from r and whose writes are
// dropped.
type memConn struct{ r *bytes.Reader }

func (c *memConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *memConn) Close() error                { return nil }

// serverFrames encodes the data of each SSE event of stream as one
// unmasked text frame, as a server sends it.
func serverFrames(stream []byte) []byte {
	var out []byte
	for ev := range bytes.SplitSeq(stream, []byte("\n\n")) {
		if data := sseData(ev); len(data) > 0 {
			out = appendFrame(out, opText, true, data)
		}
	}
	return out
}

// appendFrame appends one unmasked server frame to out.
func appendFrame(out []byte, op byte, fin bool, payload []byte) []byte {
	if fin {
		op |= 0x80
	}
	out = append(out, op)
	switch n := len(payload); {
	case n < 126:
		out = append(out, byte(n))
	case n < 1<<16:
		out = binary.BigEndian.AppendUint16(append(out, 126), uint16(n))
	default:
		out = binary.BigEndian.AppendUint64(append(out, 127), uint64(n))
	}
	return append(out, payload...)
}

func sseData(ev []byte) []byte {
	for line := range bytes.SplitSeq(ev, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return d
		}
	}
	return nil
}

// BenchmarkTransportDeltas measures the per-delta client cost of one whole
// call of 20,000 text deltas through Provider.Stream over each transport,
// the same events from memory: HTTP with server-sent events, and the
// WebSocket transport (handshake, response.create, one message per event).
// The WebSocket figure must stay within 10% of the SSE one.
func BenchmarkTransportDeltas(b *testing.B) {
	const n = 20000
	stream := deltaStream(n)
	mt := &memTransport{sse: stream, frames: serverFrames(stream)}
	for _, transport := range []string{TransportHTTP, TransportWebSocket} {
		b.Run(transport, func(b *testing.B) {
			p, err := New(Config{BaseURL: "https://bench.invalid/v1", APIKey: "k", Transport: transport,
				HTTPClient: &http.Client{Transport: mt}})
			if err != nil {
				b.Fatal(err)
			}
			var ms0, ms1 runtime.MemStats
			b.ReportAllocs()
			runtime.ReadMemStats(&ms0)
			cpu0 := cpuTime()
			for b.Loop() {
				s, err := p.Stream(context.Background(), question)
				if err != nil {
					b.Fatal(err)
				}
				texts := 0
				for s.Next() {
					if s.Event().Kind == provider.EventText {
						texts++
					}
				}
				if err := s.Err(); err != nil || texts != n {
					b.Fatalf("texts %d err %v", texts, err)
				}
				_ = s.Close()
				_ = p.Close() // the next call dials: the frames start over
			}
			runtime.ReadMemStats(&ms1)
			deltas := float64(b.N) * n
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deltas, "ns/delta")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/deltas, "allocs/delta")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpuTime()-cpu0)/deltas, "cpu-ns/delta")
		})
	}
}

// BenchmarkWebSocketLibraryRead is the part of the WebSocket figure of
// BenchmarkTransportDeltas that is gorilla/websocket's own: the same frames
// read one message at a time through Conn.NextReader into a reused
// buffer, as wsStream.readMessage reads them, with no decoding, on a
// socket opened as the transport opens it (dialSocket). A message costs
// NextReader (the frame header from the library's buffered reader, and
// one small allocation: the message's reader) and two Reads (its bytes,
// then io.EOF).
func BenchmarkWebSocketLibraryRead(b *testing.B) {
	const n = 20000
	client := &http.Client{Transport: &memTransport{frames: serverFrames(deltaStream(n))}}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		c, _, err := dialSocket(context.Background(), client, "https://bench.invalid/v1/responses", http.Header{})
		if err != nil {
			b.Fatal(err)
		}
		c.SetReadLimit(1 << 20)
		msgs := 0
		for {
			_, r, err := c.NextReader()
			if err != nil {
				break
			}
			buf = buf[:0]
			for {
				m, err := r.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+m]
				if err != nil {
					break
				}
			}
			msgs++
		}
		_ = c.Close()
		if msgs != n+3 {
			b.Fatalf("%d messages", msgs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*n), "ns/delta")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
