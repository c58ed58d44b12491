package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// countLong is a LongData that counts the value's bytes, checks they are
// all 'x', and replaces them by a short summary.
func countLong(t *testing.T, seen *[]string) LongData {
	return func(typ []byte, value io.Reader) ([]byte, error) {
		b, err := io.ReadAll(value)
		if err != nil {
			return nil, err
		}
		if strings.Trim(string(b), "x") != "" {
			t.Errorf("value has %q besides x", strings.Trim(string(b), "x"))
		}
		*seen = append(*seen, string(typ))
		return []byte("long " + strconv.Itoa(len(b))), nil
	}
}

// A data line of several MiB is streamed to the handler, not buffered;
// every line end works, the event before and after are intact, and the
// replacement is the event's data.
func TestLongDataLine(t *testing.T) {
	big := strings.Repeat("x", 3<<20+7)
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		stream := "data: a" + eol + eol + "event: img" + eol + "data: " + big + eol + eol + "data: b" + eol + eol
		var seen []string
		r := NewReader(iotest.HalfReader(strings.NewReader(stream)), 1<<10)
		r.SetLongData(64<<10, 4<<20, countLong(t, &seen))
		res := collect(r)
		if res.Err != nil || len(res.Events) != 3 {
			t.Fatalf("eol %q: %+v", eol, res)
		}
		if string(res.Events[1].Data) != "long "+strconv.Itoa(len(big)) || res.Events[1].Type != "img" || string(res.Events[2].Data) != "b" {
			t.Fatalf("eol %q: events %q %q", eol, res.Events[1].Data, res.Events[2].Data)
		}
		if len(seen) != 1 || seen[0] != "img" {
			t.Fatalf("handler saw %q", seen)
		}
	}
}

// The long-line cap holds, other fields keep the ordinary bound, and
// without a handler a long line is ErrEventTooLarge as before.
func TestLongDataBounds(t *testing.T) {
	var seen []string
	r := NewReader(strings.NewReader("data: "+strings.Repeat("x", 5<<20)+"\n\n"), 1<<10)
	r.SetLongData(64<<10, 4<<20, countLong(t, &seen))
	if res := collect(r); !errors.Is(res.Err, ErrEventTooLarge) {
		t.Fatalf("over the cap: %+v", res.Err)
	}
	r = NewReader(strings.NewReader("event: "+strings.Repeat("x", 100<<10)+"\ndata: a\n\n"), 1<<10)
	r.SetLongData(64<<10, 4<<20, countLong(t, &seen))
	if res := collect(r); !errors.Is(res.Err, ErrEventTooLarge) {
		t.Fatalf("a long event field: %+v", res.Err)
	}
	r = NewReader(strings.NewReader("data: "+strings.Repeat("x", 100<<10)+"\n\n"), 1<<10)
	if res := collect(r); !errors.Is(res.Err, ErrEventTooLarge) {
		t.Fatalf("no handler: %+v", res.Err)
	}
	// A replacement over the ordinary bound is refused too.
	r = NewReader(strings.NewReader("data: "+strings.Repeat("x", 100<<10)+"\n\n"), 1<<10)
	r.SetLongData(64<<10, 4<<20, func([]byte, io.Reader) ([]byte, error) { return bytes.Repeat([]byte("y"), 2<<10), nil })
	if res := collect(r); !errors.Is(res.Err, ErrEventTooLarge) {
		t.Fatalf("long replacement: %+v", res.Err)
	}
}

// A stream cut inside a long line drops the event as truncated; a handler
// error ends the stream with that error.
func TestLongDataCutAndError(t *testing.T) {
	var seen []string
	r := NewReader(strings.NewReader("data: a\n\ndata: "+strings.Repeat("x", 100<<10)), 1<<10)
	r.SetLongData(64<<10, 4<<20, func(_ []byte, v io.Reader) ([]byte, error) {
		_, err := io.ReadAll(v)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut value: %v", err)
		}
		seen = append(seen, "cut")
		return nil, err
	})
	res := collect(r)
	if res.Err != nil || !res.Truncated || len(res.Events) != 1 || len(seen) != 1 {
		t.Fatalf("cut: %+v", res)
	}
	boom := errors.New("boom")
	r = NewReader(strings.NewReader("data: "+strings.Repeat("x", 100<<10)+"\n\ndata: b\n\n"), 1<<10)
	r.SetLongData(64<<10, 4<<20, func([]byte, io.Reader) ([]byte, error) { return nil, boom })
	if res := collect(r); !errors.Is(res.Err, boom) || len(res.Events) != 0 {
		t.Fatalf("handler error: %+v", res)
	}
	// A handler that stops reading early: the rest of the line is skipped.
	r = NewReader(strings.NewReader("data: "+strings.Repeat("x", 100<<10)+"\n\ndata: b\n\n"), 1<<10)
	r.SetLongData(64<<10, 4<<20, func([]byte, io.Reader) ([]byte, error) { return []byte("short"), nil })
	if res := collect(r); res.Err != nil || len(res.Events) != 2 || string(res.Events[0].Data) != "short" {
		t.Fatalf("early stop: %+v", res)
	}
}
