package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"octet.dev/host/protocol"
)

// referenceLines splits in the simple way: by '\n', dropping one '\r' just
// before it (a final line without '\n' keeps its '\r'), marking lines over
// max (newline included) as too large.
func referenceLines(in []byte, max int) []string {
	var out []string
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		var line []byte
		size := 0
		if i < 0 {
			line, size, in = in, len(in)+1, nil // counted as if newline-terminated
		} else {
			line, size, in = in[:i], i+1, in[i+1:]
		}
		if size > max {
			out = append(out, "!too-large")
			continue
		}
		if i >= 0 {
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		out = append(out, string(line))
	}
	return out
}

func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\r\nb", "\n\n\n", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ny\n", "\r\r\n", "abc"} {
		f.Add([]byte(s), uint8(8))
	}
	f.Fuzz(func(t *testing.T, in []byte, m uint8) {
		max := int(m%64) + 2
		lr := NewLineReaderSize(bytes.NewReader(in), max)
		var got []string
		for {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, ErrFrameTooLarge) {
				got = append(got, "!too-large")
				continue
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if len(line)+1 > max {
				t.Fatalf("line of %d bytes over bound %d", len(line), max)
			}
			got = append(got, string(line))
		}
		want := referenceLines(in, max)
		if len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("line %d: got %q, want %q", i, got[i], want[i])
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"protocol_version":1,"request_id":"r","command":"hello"}`,
		`{"protocol_version":1,"request_id":"r","command":"models","offline":true}`,
		`{"protocol_version":1,"request_id":"r","command":"run","run_id":"x","workspace":"/w","model":"m","prompt":"p","tools":["read"],"media":[{"type":"image","path":"a"}],"custom_headers":{"a":"b"},"reasoning":{"effort":"low"},"max_steps":2}`,
		`{"protocol_version":1,"request_id":"r","command":"run","request_id":"r"}`,
		`{"protocol_version":2,"request_id":"r","command":"hello"}`,
		`{"Protocol_Version":1}`, `[]`, `null`, `{"a":`, "{\"a\":\"\xff\"}", ``, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := Decode(line)
		if err != nil {
			if req != nil {
				t.Fatal("both a request and an error")
			}
			if err.Code == "" || len(err.Message) > MaxMessageBytes {
				t.Fatalf("bad error %+v", err)
			}
			if err.RequestID != "" && !ValidID(err.RequestID) {
				t.Fatalf("echoed invalid request_id %q", err.RequestID)
			}
			return
		}
		if !ValidID(req.RequestID) {
			t.Fatalf("accepted invalid request_id %q", req.RequestID)
		}
		switch req.Command {
		case protocol.CommandHello, protocol.CommandShutdown:
		case protocol.CommandModels:
			if req.Models == nil {
				t.Fatal("models without body")
			}
		case protocol.CommandRun:
			if req.Run == nil || !ValidID(req.Run.RunID) {
				t.Fatalf("run without valid run_id: %+v", req.Run)
			}
		default:
			t.Fatalf("accepted unknown command %q", req.Command)
		}
	})
}
