package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

func TestStreamSeqAndTerminal(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	s := w.Stream("req-1", "run-1", "sess")
	if err := s.Emit(1, "accepted", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(2, "started", protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(3, protocol.TypeFinalResult, protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(4, "late", protocol.Empty{}); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("Emit after terminal = %v, want ErrStreamClosed", err)
	}
	n := w.Stream("", "", "")
	if err := n.Fail(1, protocol.CodeInvalidJSON, "bad"); err != nil {
		t.Fatal(err)
	}
	want := `{"protocol_version":1,"request_id":"req-1","seq":1,"type":"accepted","run_id":"run-1","session_id":"sess","data":{"a":1}}
{"protocol_version":1,"request_id":"req-1","seq":2,"type":"started","run_id":"run-1","session_id":"sess","data":{}}
{"protocol_version":1,"request_id":"req-1","seq":3,"type":"final_result","run_id":"run-1","session_id":"sess","data":{}}
{"protocol_version":1,"request_id":null,"seq":1,"type":"protocol_error","data":{"code":"invalid_json","message":"bad"}}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

func TestStreamOutputTooLarge(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterSize(&buf, 200)
	s := w.Stream("r", "", "")
	if err := s.Emit(1, "small", protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	err := s.Emit(2, "model_delta", map[string]string{"text": strings.Repeat("x", 500)})
	if !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("Emit oversized = %v, want ErrOutputTooLarge", err)
	}
	if !s.Done() {
		t.Fatal("after replacement: the stream is not done")
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("wrote %d frames, want 2: %q", len(lines), buf.String())
	}
	want := `{"protocol_version":1,"request_id":"r","seq":2,"type":"protocol_error","data":{"code":"output_too_large","message":"a \"model_delta\" event exceeded the 1048576-byte frame bound and was withheld"}}`
	if lines[1] != want {
		t.Errorf("replacement frame:\n got %s\nwant %s", lines[1], want)
	}
	for _, l := range lines {
		if len(l)+1 > 200 {
			t.Errorf("frame of %d bytes exceeds the bound", len(l)+1)
		}
	}
}

// TestStreamOutputTooLargeAtProtocolBound checks the real 1 MiB bound: an
// event just under it is written, one just over it is replaced.
func TestStreamOutputTooLargeAtProtocolBound(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	s := w.Stream("r", "", "")
	overhead := len(`{"protocol_version":1,"request_id":"r","seq":1,"type":"t","data":""}`) + 1
	if err := s.Emit(1, "t", strings.Repeat("a", protocol.MaxFrameBytes-overhead)); err != nil {
		t.Fatalf("event of exactly the bound: %v", err)
	}
	if buf.Len() != protocol.MaxFrameBytes {
		t.Fatalf("frame is %d bytes, want %d", buf.Len(), protocol.MaxFrameBytes)
	}
	if err := s.Emit(2, "t", strings.Repeat("a", protocol.MaxFrameBytes-overhead+1)); !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("event one byte over: %v", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

func TestWriterErrorIsSticky(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw)
	s := w.Stream("r", "", "")
	if err := s.Emit(1, "a", protocol.Empty{}); err == nil {
		t.Fatal("Emit on a failing writer succeeded")
	}
	if err := w.Stream("q", "", "").Finish(1, "hello", protocol.Empty{}); err == nil {
		t.Fatal("second write succeeded")
	}
	if fw.n != 1 || w.Err() == nil {
		t.Errorf("writes attempted %d, Err %v; want 1 attempt and a sticky error", fw.n, w.Err())
	}
}

func TestWriterInvalidUTF8Replaced(t *testing.T) {
	var buf bytes.Buffer
	s := NewWriter(&buf).Stream("r", "", "")
	if err := s.Finish(1, "t", map[string]string{"text": "a\xffb"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "a\ufffdb") {
		t.Errorf("frame %q does not carry U+FFFD", buf.String())
	}
}

// callWriter records each Write call apart.
type callWriter struct{ calls []string }

func (c *callWriter) Write(p []byte) (int, error) {
	c.calls = append(c.calls, string(p))
	return len(p), nil
}

// hold encodes and holds one event.
func hold(t *testing.T, s *Stream, seq int, typ protocol.EventType, data any) error {
	t.Helper()
	p, err := s.Encode(seq, typ, data, false)
	if err != nil {
		t.Fatal(err)
	}
	return s.Hold(p)
}

// TestStreamHold: held frames are written with the next Write or Flush, in
// order and in one Write call, with the bytes Emit writes one by one; a
// Flush with nothing held writes nothing.
func TestStreamHold(t *testing.T) {
	var one bytes.Buffer
	ref := NewWriter(&one).Stream("r", "run", "")
	var cw callWriter
	s := NewWriter(&cw).Stream("r", "run", "")
	delta := func(i int) *protocol.ModelDelta {
		return &protocol.ModelDelta{Step: 1, Channel: protocol.ChannelText, Text: "tok" + strings.Repeat("é", i)}
	}
	for i := 1; i <= 3; i++ {
		if err := ref.Emit(i, protocol.TypeModelDelta, delta(i)); err != nil {
			t.Fatal(err)
		}
		if err := hold(t, s, i, protocol.TypeModelDelta, delta(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(cw.calls) != 0 {
		t.Fatalf("Hold wrote %q", cw.calls)
	}
	if err := ref.Emit(4, "model_step", protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(4, "model_step", protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	if len(cw.calls) != 1 || cw.calls[0] != one.String() {
		t.Fatalf("Write after Hold: calls %q, want one call of %q", cw.calls, one.String())
	}
	if err := s.Flush(); err != nil || len(cw.calls) != 1 {
		t.Fatalf("Flush with nothing held: %v, %d calls", err, len(cw.calls))
	}
	// Flush writes what is held, once.
	if err := hold(t, s, 5, protocol.TypeModelDelta, delta(5)); err != nil {
		t.Fatal(err)
	}
	if err := ref.Emit(5, protocol.TypeModelDelta, delta(5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cw.calls, ""); len(cw.calls) != 2 || got != one.String() {
		t.Fatalf("after Flush: calls %q, want 2 with %q", cw.calls, one.String())
	}
	// A terminal event is never held, and nothing is accepted after it.
	p, err := s.Encode(6, protocol.TypeFinalResult, protocol.Empty{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(p); err != nil || !s.Done() || len(cw.calls) != 3 {
		t.Fatalf("Hold of the terminal event: %v, done %v, %d calls", err, s.Done(), len(cw.calls))
	}
	if p, _ := s.Encode(7, "late", protocol.Empty{}, false); s.Hold(p) != ErrStreamClosed {
		t.Error("Hold after the terminal event was accepted")
	}
}

// TestStreamHoldBound: the held frames are written once they reach 64 KiB,
// so holding never buffers without bound.
func TestStreamHoldBound(t *testing.T) {
	var cw callWriter
	s := NewWriter(&cw).Stream("r", "", "")
	text := strings.Repeat("x", 1000)
	held := 0
	for seq := 1; len(cw.calls) == 0; seq++ {
		if seq > 100 {
			t.Fatalf("%d bytes held and nothing written", held)
		}
		p, err := s.Encode(seq, "t", text, false)
		if err != nil {
			t.Fatal(err)
		}
		held += len(p.frame)
		if err := s.Hold(p); err != nil {
			t.Fatal(err)
		}
	}
	if len(cw.calls[0]) != held || held < maxHeld || held-maxHeld > 1100 {
		t.Errorf("wrote %d bytes at once after holding %d; the bound is %d", len(cw.calls[0]), held, maxHeld)
	}
}

// TestStreamHoldReplaced: an oversized event given to Hold is replaced by
// the terminal output_too_large, written after the frames held before it.
func TestStreamHoldReplaced(t *testing.T) {
	var cw callWriter
	s := NewWriterSize(&cw, 300).Stream("r", "", "")
	if err := hold(t, s, 1, "small", protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Encode(2, "model_delta", strings.Repeat("x", 500), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(p); !errors.Is(err, ErrOutputTooLarge) || !s.Done() {
		t.Fatalf("Hold of an oversized event: %v, done %v", err, s.Done())
	}
	if len(cw.calls) != 1 || !strings.HasPrefix(cw.calls[0], `{"protocol_version":1,"request_id":"r","seq":1,"type":"small"`) ||
		!strings.Contains(cw.calls[0], "\n"+`{"protocol_version":1,"request_id":"r","seq":2,"type":"protocol_error"`) {
		t.Errorf("calls %q", cw.calls)
	}
}

// TestStreamHoldWriteError: a failed write of held frames is reported by
// the call that wrote them, and sticks.
func TestStreamHoldWriteError(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw)
	s := w.Stream("r", "", "")
	if err := hold(t, s, 1, "a", protocol.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err == nil {
		t.Fatal("Flush on a failing writer succeeded")
	}
	if err := hold(t, s, 2, "a", protocol.Empty{}); err != nil {
		t.Fatal(err) // held: not written yet
	}
	if err := s.Flush(); err == nil || fw.n != 1 {
		t.Fatalf("second Flush: %v after %d writes; want the sticky error and no new write", err, fw.n)
	}
}
