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
