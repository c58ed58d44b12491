package edgetest

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// recorder is a testing.TB that records the first failure instead of
// failing the test, so that the checks can be shown to fail.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	if !r.failed {
		r.failed, r.msg = true, fmt.Sprintf(format, args...)
	}
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }

// check runs fn against a recorder and returns it once fn is done.
func check(fn func(tb testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

// scripted is a decoder that reads its whole body (the first read's size
// kept in firstRead) and then delivers a fixed list of events and error.
type scripted struct {
	r         io.Reader
	read      bool
	firstRead int
	events    []provider.StreamEvent
	err       error
	next      int
	cur       provider.StreamEvent
	withRead  bool // deliver firstRead as a text event first
}

// SetOutputLimit is part of edge.Decoder; the scripted decoder has no
// budget to keep.
func (s *scripted) SetOutputLimit(int) {}

func (s *scripted) Next() bool {
	if !s.read {
		s.read = true
		buf := make([]byte, 1<<16)
		n, _ := s.r.Read(buf)
		s.firstRead = n
		_, _ = io.Copy(io.Discard, s.r)
		if s.withRead {
			s.events = append([]provider.StreamEvent{{Kind: provider.EventText, Text: fmt.Sprint(n)}}, s.events...)
		}
	}
	if s.next >= len(s.events) {
		return false
	}
	s.cur = s.events[s.next]
	s.next++
	return true
}
func (s *scripted) Event() provider.StreamEvent { return s.cur }
func (s *scripted) Err() error {
	if s.next < len(s.events) {
		return nil
	}
	return s.err
}
func (s *scripted) Finished() bool {
	return s.next == len(s.events) && len(s.events) > 0 && s.events[len(s.events)-1].Kind == provider.EventFinish
}
func (s *scripted) Started() bool { return s.next > 0 }

func opener(events []provider.StreamEvent, err error, withRead bool) OpenDecoder {
	return func(r io.Reader, _ int) edge.Decoder {
		return &scripted{r: r, events: append([]provider.StreamEvent(nil), events...), err: err, withRead: withRead}
	}
}

var (
	finish = provider.StreamEvent{Kind: provider.EventFinish, FinishReason: provider.FinishStop}
	text   = func(s string) provider.StreamEvent { return provider.StreamEvent{Kind: provider.EventText, Text: s} }
	call   = func(id, name string) provider.StreamEvent {
		return provider.StreamEvent{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: id, Name: name, Arguments: "{}"}}
	}
	decodeErr = &provider.Error{Kind: provider.FailDecode, Message: "bad"}
)

// TestCheckHostileFails shows each invariant of CheckHostile failing on a
// decoder that breaks it, and passing on one that does not.
func TestCheckHostileFails(t *testing.T) {
	body := []byte(strings.Repeat("data: x\n\n", 20))
	cases := []struct {
		name string
		open OpenDecoder
		want string // "" for a decoder that keeps every rule
	}{
		{"good", opener([]provider.StreamEvent{text("hi"), call("c1", "read"), finish}, nil, false), ""},
		{"good failure", opener([]provider.StreamEvent{text("hi")}, decodeErr, false), ""},
		{"no name", opener([]provider.StreamEvent{call("c1", ""), finish}, nil, false), "without an id or a name"},
		{"no id", opener([]provider.StreamEvent{call("", "read"), finish}, nil, false), "without an id or a name"},
		{"invalid UTF-8", opener([]provider.StreamEvent{text("a\xff"), finish}, nil, false), "not valid UTF-8"},
		{"growth", opener([]provider.StreamEvent{text(strings.Repeat("z", 1000)), finish}, nil, false), "unbounded growth"},
		{"raw error", opener([]provider.StreamEvent{text("a")}, io.ErrUnexpectedEOF, false), "not a *provider.Error"},
		{"call-only kind", opener(nil, &provider.Error{Kind: provider.FailIdleTimeout}, false), "not a decoding failure"},
		{"finish and error", opener([]provider.StreamEvent{finish}, decodeErr, false), "a normal end needs EventFinish"},
		{"no finish, no error", opener([]provider.StreamEvent{text("a")}, nil, false), "a normal end needs EventFinish"},
		{"after finish", opener([]provider.StreamEvent{finish, text("late")}, nil, false), "after EventFinish"},
		{"bad finish reason", opener([]provider.StreamEvent{{Kind: provider.EventFinish, FinishReason: "done"}}, nil, false), "not a normalized one"},
		{"depends on reads", opener([]provider.StreamEvent{finish}, nil, true), "depends on how the body is read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := check(func(tb testing.TB) { CheckHostile(tb, body, tc.open, 0) })
			switch {
			case tc.want == "" && r.failed:
				t.Errorf("a decoder that keeps the rules failed: %s", r.msg)
			case tc.want != "" && !strings.Contains(r.msg, tc.want):
				t.Errorf("failure %q, want one with %q", r.msg, tc.want)
			}
		})
	}
}

// lineDecoder delivers every event of its body as a text event and, when
// hoard is set, keeps each one, as a decoder that leaks would.
type lineDecoder struct {
	r     io.Reader
	size  int
	cur   provider.StreamEvent
	hoard bool
	kept  []string
}

// SetOutputLimit is part of edge.Decoder; the test decoder keeps no budget.
func (d *lineDecoder) SetOutputLimit(int) {}

func (d *lineDecoder) Next() bool {
	buf := make([]byte, d.size)
	if _, err := io.ReadFull(d.r, buf); err != nil {
		return false
	}
	d.cur = text(string(buf))
	if d.hoard {
		d.kept = append(d.kept, d.cur.Text)
	}
	return true
}
func (d *lineDecoder) Event() provider.StreamEvent { return d.cur }
func (d *lineDecoder) Err() error                  { return nil }
func (d *lineDecoder) Finished() bool              { return false }
func (d *lineDecoder) Started() bool               { return true }

func TestCheckEndlessDeltasFails(t *testing.T) {
	delta := func(s string) string { return s }
	for _, hoard := range []bool{false, true} {
		open := func(r io.Reader, _ int) edge.Decoder {
			return &lineDecoder{r: r, size: len(EndlessDeltaText), hoard: hoard}
		}
		r := check(func(tb testing.TB) { CheckEndlessDeltas(tb, open, "", delta) })
		if r.failed != hoard {
			t.Errorf("hoarding %v: failed %v (%s)", hoard, r.failed, r.msg)
		}
	}
}
