package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// result is everything a Reader reports for one stream.
type result struct {
	Events    []Event
	Err       error
	Truncated bool
	Pending   *Event
}

func collect(r *Reader) result {
	var res result
	for r.Next() {
		ev := r.Event()
		ev.Data = bytes.Clone(ev.Data)
		if ev.Data == nil {
			ev.Data = []byte{}
		}
		res.Events = append(res.Events, ev)
	}
	res.Err = r.Err()
	res.Truncated = r.Truncated()
	if p, ok := r.Pending(); ok {
		p.Data = bytes.Clone(p.Data)
		res.Pending = &p
	}
	return res
}

func ev(typ, data, id string) Event { return Event{Type: typ, Data: []byte(data), ID: id} }

var errCmp = cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || errors.Is(b, a) })

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want result
	}{
		{name: "empty", in: "", want: result{}},
		{name: "one event LF", in: "data: hello\n\n", want: result{Events: []Event{ev("", "hello", "")}}},
		{name: "CRLF", in: "data: a\r\ndata: b\r\n\r\n", want: result{Events: []Event{ev("", "a\nb", "")}}},
		{name: "CR only", in: "data: a\rdata: b\r\rdata: c\r\r", want: result{Events: []Event{ev("", "a\nb", ""), ev("", "c", "")}}},
		{name: "mixed line ends", in: "data: a\r\n\ndata: b\r\r\ndata: c\n\r", want: result{Events: []Event{ev("", "a", ""), ev("", "b", ""), ev("", "c", "")}}},
		{name: "no space after colon", in: "data:x\n\n", want: result{Events: []Event{ev("", "x", "")}}},
		{name: "only one space stripped", in: "data:  x \n\n", want: result{Events: []Event{ev("", " x ", "")}}},
		{name: "empty data line", in: "data\n\ndata:\n\n", want: result{Events: []Event{ev("", "", ""), ev("", "", "")}}},
		{name: "data then empty data line", in: "data: a\ndata\n\n", want: result{Events: []Event{ev("", "a\n", "")}}},
		{name: "comments ignored", in: ": ping\n:\ndata: a\n: mid\ndata: b\n\n: tail\n", want: result{Events: []Event{ev("", "a\nb", "")}}},
		{name: "event type", in: "event: add\ndata: 1\n\ndata: 2\n\n", want: result{Events: []Event{ev("add", "1", ""), ev("", "2", "")}}},
		{name: "last event field wins", in: "event: a\nevent: b\ndata: x\n\n", want: result{Events: []Event{ev("b", "x", "")}}},
		{name: "type without data is dropped", in: "event: ping\n\ndata: x\n\n", want: result{Events: []Event{ev("", "x", "")}}},
		{name: "id persists", in: "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", want: result{Events: []Event{ev("", "a", "1"), ev("", "b", "1"), ev("", "c", "")}}},
		{name: "id with NUL ignored", in: "id: 7\n\nid: a\x00b\ndata: x\n\n", want: result{Events: []Event{ev("", "x", "7")}}},
		{name: "unknown field ignored", in: "foo: bar\nDATA: no\ndata: yes\n\n", want: result{Events: []Event{ev("", "yes", "")}}},
		{name: "colon in value", in: "data: {\"a\":1}\n\n", want: result{Events: []Event{ev("", `{"a":1}`, "")}}},
		{name: "BOM stripped", in: "\xEF\xBB\xBFdata: a\n\n", want: result{Events: []Event{ev("", "a", "")}}},
		{name: "second BOM kept", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", want: result{}},
		{name: "final event without blank line", in: "data: a\n\ndata: b\n", want: result{
			Events: []Event{ev("", "a", "")}, Truncated: true, Pending: &Event{Data: []byte("b")},
		}},
		{name: "final line without line end", in: "data: a\n\ndata: [DONE]", want: result{
			Events: []Event{ev("", "a", "")}, Truncated: true, Pending: &Event{Data: []byte("[DONE]")},
		}},
		{name: "trailing comment is not truncation", in: "data: a\n\n: bye", want: result{Events: []Event{ev("", "a", "")}}},
		{name: "trailing type only", in: "data: a\n\nevent: x\n", want: result{Events: []Event{ev("", "a", "")}, Truncated: true}},
		{name: "data exactly at bound", in: "data: 12345\n\n", max: 5, want: result{Events: []Event{ev("", "12345", "")}}},
		{name: "multi-line data at bound", in: "data: 12\ndata: 45\n\n", max: 5, want: result{Events: []Event{ev("", "12\n45", "")}}},
		{name: "data over bound", in: "data: a\n\ndata: 123456\n\n", max: 5, want: result{Events: []Event{ev("", "a", "")}, Err: ErrEventTooLarge}},
		{name: "multi-line over bound", in: "data: 123\ndata: 45\n\n", max: 5, want: result{Err: ErrEventTooLarge}},
		{name: "long comment over bound", in: ": " + strings.Repeat("x", 40) + "\n", max: 5, want: result{Err: ErrEventTooLarge}},
		{name: "long unterminated line over bound", in: "data: " + strings.Repeat("x", 40), max: 5, want: result{Err: ErrEventTooLarge}},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	}
	for _, tc := range tests {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got := collect(NewReader(wrap(strings.NewReader(tc.in)), tc.max))
				if diff := cmp.Diff(tc.want, got, errCmp); diff != "" {
					t.Errorf("input %q (-want +got):\n%s", tc.in, diff)
				}
			})
		}
	}
}

func TestReaderLongLineSpansBuffers(t *testing.T) {
	payload := strings.Repeat("abcdefgh", bufferSize/4) // two buffer fills
	in := "data: " + payload + "\r\n\r\ndata: next\r\n\r\n"
	got := collect(NewReader(strings.NewReader(in), 0))
	// Compare by hand: cmp walks a 64 KiB slice element by element.
	if got.Err != nil || len(got.Events) != 2 || string(got.Events[0].Data) != payload || string(got.Events[1].Data) != "next" {
		t.Errorf("got %d events, err %v", len(got.Events), got.Err)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)), 0)
	got := collect(r)
	want := result{Events: []Event{ev("", "a", "")}, Err: boom}
	if diff := cmp.Diff(want, got, errCmp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r.Next() {
		t.Error("Next after an error returned true")
	}
}

func TestReaderRetry(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 1500\nretry: 12x\nretry:\nretry: 99999999999999999999\ndata: a\n\n"), 0)
	for r.Next() {
	}
	d, ok := r.Retry()
	if !ok || d != 1500*time.Millisecond {
		t.Errorf("Retry() = %v, %v; want 1.5s, true", d, ok)
	}
}

func TestReaderDataValidUntilNext(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"), 0)
	if !r.Next() {
		t.Fatal("no first event")
	}
	first := r.Event().Data
	if string(first) != "first" {
		t.Fatalf("first = %q", first)
	}
	if !r.Next() || string(r.Event().Data) != "second" {
		t.Fatalf("second event missing")
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\ndata: a\n\ndata: cut"), 0)
	_ = collect(r)
	r.Reset(strings.NewReader("data: b\n\n"))
	got := collect(r)
	want := result{Events: []Event{ev("", "b", "")}}
	if diff := cmp.Diff(want, got, errCmp); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}
}

// reference decodes in the most direct way the WHATWG text reads, with the
// same bounds as Reader, for differential fuzzing.
func reference(in []byte, maxEventBytes int) result {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	in = bytes.TrimPrefix(in, utf8BOM)
	var (
		res          result
		data, typ    []byte
		id           string
		fields       int
		hasData      bool
		lineLimitErr = func(n int) bool { return n > maxEventBytes+fieldAllowance }
	)
	// field processes one field line; false when it makes the event too
	// large.
	field := func(line []byte) bool {
		fields++
		name, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(name) {
		case "data":
			if len(data)+len(value) > maxEventBytes {
				return false
			}
			data = append(append(data, value...), '\n')
			hasData = true
		case "event":
			typ = append(typ[:0], value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				id = string(value)
			}
		}
		return true
	}
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			// Final line without a line end.
			if lineLimitErr(len(in)) {
				res.Err = ErrEventTooLarge
				return res
			}
			if in[0] != ':' && !field(in) {
				res.Err = ErrEventTooLarge
				return res
			}
			break
		}
		line := in[:i]
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			in = in[i+2:]
		} else {
			in = in[i+1:]
		}
		if lineLimitErr(len(line)) {
			res.Err = ErrEventTooLarge
			return res
		}
		switch {
		case len(line) == 0:
			fields = 0
			if hasData {
				res.Events = append(res.Events, Event{Type: string(typ), Data: bytes.Clone(data[:len(data)-1]), ID: id})
			}
			data, typ, hasData = data[:0], typ[:0], false
		case line[0] == ':':
		default:
			if !field(line) {
				res.Err = ErrEventTooLarge
				return res
			}
		}
	}
	res.Truncated = fields > 0
	if res.Truncated && hasData {
		res.Pending = &Event{Type: string(typ), Data: bytes.Clone(data[:len(data)-1]), ID: id}
	}
	for i := range res.Events {
		if res.Events[i].Data == nil {
			res.Events[i].Data = []byte{}
		}
	}
	if res.Pending != nil && res.Pending.Data == nil {
		res.Pending.Data = []byte{}
	}
	return res
}

func FuzzReader(f *testing.F) {
	seeds := []string{
		"",
		"data: hello\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		"event: x\nid: 1\nretry: 10\ndata: {\"k\":1}\n\n",
		": comment\n\ndata\n\n",
		"\xEF\xBB\xBFdata: bom\n\n",
		"data: cut",
		"data: a\n\ndata: b\n",
		"id: \x00\ndata: x\n\n",
		"data: " + strings.Repeat("z", 300) + "\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(8))
	}
	f.Fuzz(func(t *testing.T, in []byte, bound uint16) {
		maxEventBytes := int(bound % 512) // small bounds exercise the limit
		if bound == 0 {
			maxEventBytes = 0
		}
		effective := maxEventBytes
		if effective <= 0 {
			effective = DefaultMaxEventBytes
		}
		var byChunks []result
		for _, wrap := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
		} {
			r := NewReader(wrap(bytes.NewReader(in)), maxEventBytes)
			res := collect(r)
			for _, e := range res.Events {
				if len(e.Data) > effective {
					t.Fatalf("event data %d bytes > bound %d", len(e.Data), effective)
				}
			}
			if res.Err != nil && !errors.Is(res.Err, ErrEventTooLarge) {
				t.Fatalf("unexpected error %v", res.Err)
			}
			byChunks = append(byChunks, res)
		}
		if diff := cmp.Diff(byChunks[0], byChunks[1], errCmp); diff != "" {
			t.Fatalf("whole vs one-byte reads differ (-whole +onebyte):\n%s", diff)
		}
		if diff := cmp.Diff(reference(in, maxEventBytes), byChunks[0], errCmp); diff != "" {
			t.Fatalf("reference vs Reader (-reference +reader):\n%s", diff)
		}
	})
}

// chatLikeStream returns n Chat Completions-style events and a [DONE].
func chatLikeStream(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		b.WriteString(`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}`)
		b.WriteString("\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkReader(b *testing.B) {
	const n = 20000
	in := chatLikeStream(n)
	r := NewReader(bytes.NewReader(in), 0)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(bytes.NewReader(in))
		count := 0
		for r.Next() {
			count++
		}
		if r.Err() != nil || count != n+1 {
			b.Fatalf("count %d err %v", count, r.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+1)), "ns/event")
}
