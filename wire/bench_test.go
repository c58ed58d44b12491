package wire

import (
	"bytes"
	"strings"
	"testing"

	"octet.dev/host/protocol"
)

// runLine1MiB is a run request line just under the 1 MiB frame bound,
// almost all of it prompt text.
func runLine1MiB() []byte {
	head := `{"protocol_version":1,"request_id":"req-1","command":"run","run_id":"run-1","workspace":"/srv/w","model":"gpt-5","tools":["read","grep"],"prompt":"`
	tail := `"}` + "\n"
	prompt := strings.Repeat("Summarize the repository layout; list the packages. ", protocol.MaxFrameBytes/52)
	prompt = prompt[:protocol.MaxFrameBytes-len(head)-len(tail)]
	return []byte(head + prompt + tail)
}

// BenchmarkReadDecodeRun1MiB measures the line reader plus strict decode of
// a 1 MiB run request (target ≥ 300 MB/s, allocations ≈ one copy of the
// frame: the prompt string).
func BenchmarkReadDecodeRun1MiB(b *testing.B) {
	line := runLine1MiB()
	if len(line) != protocol.MaxFrameBytes {
		b.Fatalf("line is %d bytes", len(line))
	}
	r := bytes.NewReader(line)
	lr := NewLineReader(r)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Reset(line)
		l, err := lr.Next()
		if err != nil {
			b.Fatal(err)
		}
		req, derr := Decode(l)
		if derr != nil {
			b.Fatal(derr)
		}
		if len(req.Run.Prompt) < protocol.MaxFrameBytes/2 {
			b.Fatal("short prompt")
		}
	}
}

// BenchmarkDecodeHello measures the per-request overhead of a small line.
func BenchmarkDecodeHello(b *testing.B) {
	line := []byte(`{"protocol_version":1,"request_id":"probe-1","command":"hello"}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmitDelta measures encoding and writing one model_delta frame.
func BenchmarkEmitDelta(b *testing.B) {
	type delta struct {
		Step    int    `json:"step"`
		Channel string `json:"channel"`
		Text    string `json:"text"`
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	s := w.Stream("req-1", "run-1", "")
	d := &delta{Step: 1, Channel: "text", Text: " the quick brown fox"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if buf.Len() > 1<<20 {
			buf.Reset()
		}
		if err := s.Emit(i+1, "model_delta", d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmitModelDelta is BenchmarkEmitDelta with the payload the host
// sends, which encodes itself (Appender): the wire's own cost per frame.
func BenchmarkEmitModelDelta(b *testing.B) {
	var buf bytes.Buffer
	s := NewWriter(&buf).Stream("req-1", "run-1", "session-1")
	d := &protocol.ModelDelta{Step: 1, Channel: protocol.ChannelText, Text: " the quick brown fox"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if buf.Len() > 1<<20 {
			buf.Reset()
		}
		if err := s.Emit(i+1, protocol.TypeModelDelta, d); err != nil {
			b.Fatal(err)
		}
	}
}
