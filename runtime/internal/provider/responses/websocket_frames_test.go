package responses

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"strings"
	"testing"

	"octet.dev/host/runtime/provider"
)

// frameReader against the library's reader: the same bytes from a server
// must yield the same events and the same kind of failure through either,
// and frameReader's own answers to the protocol's errors are checked one
// by one.

// outcome is what a call made of a server's frames.
type outcome struct {
	texts []string
	kind  provider.FailKind
	msg   string
}

func readWith(t testing.TB, library bool, frames []byte) outcome {
	libraryReader = library
	defer func() { libraryReader = false }()
	p, err := New(Config{BaseURL: "https://mem.invalid/v1", APIKey: testKey, Transport: TransportWebSocket,
		HTTPClient: &http.Client{Transport: &memTransport{frames: frames}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var o outcome
	var pe *provider.Error
	s, err := p.Stream(context.Background(), question)
	if err != nil {
		if !errors.As(err, &pe) {
			t.Fatalf("Stream: %v", err)
		}
		o.kind, o.msg = pe.Kind, "Stream: "+pe.Message
		return o
	}
	defer s.Close()
	if got := s.(*wsStream).s.frames != nil; got == library {
		t.Fatalf("frameReader in use: %v, library reader asked: %v", got, library)
	}
	for s.Next() {
		if ev := s.Event(); ev.Kind == provider.EventText {
			o.texts = append(o.texts, ev.Text)
		}
	}
	if errors.As(s.Err(), &pe) {
		o.kind, o.msg = pe.Kind, pe.Message
	}
	return o
}

// frameSpec is one frame a test server sends, with the header bits a
// faulty server may get wrong.
type frameSpec struct {
	op      byte
	fin     bool
	rsv     byte // 0..7, shifted into bits 4..6
	masked  bool
	payload []byte
	wide    bool // the length in the 64-bit form even when short
}

func (f frameSpec) append(out []byte) []byte {
	b0 := f.op | f.rsv<<4
	if f.fin {
		b0 |= 0x80
	}
	var mask byte
	if f.masked {
		mask = 0x80
	}
	n := len(f.payload)
	switch {
	case f.wide:
		out = append(out, b0, mask|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	case n < 126:
		out = append(out, b0, mask|byte(n))
	case n < 1<<16:
		out = append(out, b0, mask|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, b0, mask|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if f.masked {
		out = append(out, 0, 0, 0, 0) // a zero key: the payload reads as it is
	}
	return append(out, f.payload...)
}

func frames(fs ...frameSpec) []byte {
	var out []byte
	for _, f := range fs {
		out = f.append(out)
	}
	return out
}

func text(b []byte) frameSpec { return frameSpec{op: opText, fin: true, payload: b} }

func closeFrame(code int, reason string) frameSpec {
	p := binary.BigEndian.AppendUint16(nil, uint16(code))
	return frameSpec{op: opClose, fin: true, payload: append(p, reason...)}
}

// TestFrameReaderMatchesTheLibrary: well-formed and faulty servers alike
// give the same texts and the same failure kind through both readers;
// where the library names a failure in the message (a close, a cut), the
// message is the same too.
func TestFrameReaderMatchesTheLibrary(t *testing.T) {
	added, done := []byte(wsAdded), []byte(wsCompleted)
	d := func(s string) []byte { return wsDelta(t, s) }
	frag := d("in three parts")
	cases := map[string][]byte{
		"plain": frames(text(added), text(d("one")), text(d("two")), text(done)),
		"fragmented with control frames between": frames(text(added),
			frameSpec{op: opText, payload: frag[:7]}, frameSpec{op: opPing, fin: true, payload: []byte("p")},
			frameSpec{op: opContinuation, payload: frag[7:20]}, frameSpec{op: opPong, fin: true},
			frameSpec{op: opContinuation, fin: true, payload: frag[20:]}, text(done)),
		"16-bit and 64-bit lengths": frames(text(added), text(d(strings.Repeat("m", 300))),
			frameSpec{op: opText, fin: true, wide: true, payload: d("wide")}, text(done)),
		"empty fragments": frames(text(added), frameSpec{op: opText}, frameSpec{op: opContinuation, payload: d("x")},
			frameSpec{op: opContinuation, fin: true}, text(done)),
		"close with a reason":        frames(text(added), text(d("before")), closeFrame(1011, "server error")),
		"close without a status":     frames(text(added), frameSpec{op: opClose, fin: true}),
		"close with an invalid code": frames(text(added), closeFrame(1005, "")),
		"close with a bad reason":    frames(text(added), closeFrame(1000, "\xff")),
		"close of one byte":          frames(text(added), frameSpec{op: opClose, fin: true, payload: []byte{3}}),
		"cut between messages":       frames(text(added), text(d("then nothing"))),
		"cut inside a header":        append(frames(text(added)), 0x81),
		"cut inside a payload":       frames(text(added))[:len(frames(text(added)))-5],
		"binary message":             frames(text(added), frameSpec{op: opBinary, fin: true, payload: []byte{1, 2}}),
		"reserved bit":               frames(text(added), frameSpec{op: opText, fin: true, rsv: 4, payload: d("x")}),
		"masked frame":               frames(text(added), frameSpec{op: opText, fin: true, masked: true, payload: d("x")}),
		"continuation of nothing":    frames(text(added), frameSpec{op: opContinuation, fin: true, payload: d("x")}),
		"message inside a message":   frames(text(added), frameSpec{op: opText, payload: frag[:5]}, text(d("x"))),
		"fragmented ping":            frames(text(added), frameSpec{op: opPing, payload: []byte("p")}),
		"long ping":                  frames(text(added), frameSpec{op: opPing, fin: true, payload: make([]byte, 126)}),
		"unknown opcode":             frames(text(added), frameSpec{op: 0x3, fin: true}),
		"unknown control opcode":     frames(text(added), frameSpec{op: 0xB, fin: true}),
	}
	for name, fr := range cases {
		t.Run(name, func(t *testing.T) {
			lib, own := readWith(t, true, fr), readWith(t, false, fr)
			if strings.Join(lib.texts, "|") != strings.Join(own.texts, "|") || lib.kind != own.kind {
				t.Fatalf("library: %+v\nframeReader: %+v", lib, own)
			}
			if !strings.Contains(lib.msg, "protocol") && !strings.Contains(lib.msg, "websocket: ") && lib.msg != own.msg {
				t.Fatalf("messages differ:\nlibrary:     %q\nframeReader: %q", lib.msg, own.msg)
			}
		})
	}
}

// TestFrameReaderAnswers: a ping is answered with a pong of its payload,
// a close with a close of its code (an empty one when it had none), a
// protocol error with 1002 and what was wrong, and a message over the
// limit with 1009.
func TestFrameReaderAnswers(t *testing.T) {
	added := []byte(wsAdded)
	for _, tc := range []struct {
		name   string
		frames []byte
		limit  int64
		want   []byte // the control frame the client sends (its payload unmasked)
	}{
		{"ping", frames(text(added), frameSpec{op: opPing, fin: true, payload: []byte("are you there")}), 0,
			append([]byte{0x80 | opPong}, "are you there"...)},
		{"close", frames(text(added), closeFrame(1001, "going away")), 0, []byte{0x80 | opClose, 0x03, 0xE9}},
		{"close without a status", frames(text(added), frameSpec{op: opClose, fin: true}), 0, []byte{0x80 | opClose}},
		{"protocol error", frames(text(added), frameSpec{op: opText, fin: true, masked: true, payload: []byte("{}")}), 0,
			append([]byte{0x80 | opClose, 0x03, 0xEA}, "a frame from the server is masked"...)},
		{"over the limit", frames(text(added), text([]byte(wsDelta(t, strings.Repeat("y", 200))))), 150,
			[]byte{0x80 | opClose, 0x03, 0xF1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &recordTransport{frames: tc.frames}
			p, err := New(Config{BaseURL: "https://mem.invalid/v1", APIKey: testKey, Transport: TransportWebSocket, HTTPClient: &http.Client{Transport: rt}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s, err := p.Stream(context.Background(), question)
			if err != nil {
				t.Fatal(err)
			}
			if tc.limit > 0 {
				s.(*wsStream).s.setReadLimit(tc.limit)
			}
			for s.Next() {
			}
			s.Close()
			sent := rt.conn.w.Bytes()
			found := false
			for _, f := range clientFrames(t, sent) {
				if f.fin && string(append([]byte{0x80 | f.op}, f.payload...)) == string(tc.want) {
					found = true
				}
			}
			if !found {
				t.Fatalf("the client did not send % x; it sent % x", tc.want, sent)
			}
		})
	}
}

// FuzzFrameReader: any bytes from a server read the same through
// frameReader and the library's reader (the texts and the failure kind).
func FuzzFrameReader(f *testing.F) {
	added := []byte(wsAdded)
	f.Add(frames(text(added), text([]byte(`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"hi"}`)), text([]byte(wsCompleted))))
	f.Add(frames(text(added), frameSpec{op: opText, payload: []byte(`{"type":`)}, frameSpec{op: opPing, fin: true},
		frameSpec{op: opContinuation, fin: true, payload: []byte(`"response.completed","response":{"id":"r","status":"completed","output":[]}}`)}))
	f.Add(frames(text(added), closeFrame(1000, "bye")))
	f.Add(frames(text(added), frameSpec{op: opText, fin: true, wide: true, payload: []byte("{}")}))
	f.Fuzz(func(t *testing.T, fr []byte) {
		lib, own := readWith(t, true, fr), readWith(t, false, fr)
		if strings.Join(lib.texts, "|") != strings.Join(own.texts, "|") || lib.kind != own.kind {
			t.Fatalf("library: %+v\nframeReader: %+v", lib, own)
		}
	})
}
