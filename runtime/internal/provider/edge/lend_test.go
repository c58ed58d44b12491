package edge

import (
	"context"
	"io"
	"strings"
	"testing"

	"octet.dev/host/runtime/provider"
)

// noLend hides a decoder's Current: a Decoder that does not embed Queue.
type noLend struct{ d Decoder }

func (n noLend) Next() bool                  { return n.d.Next() }
func (n noLend) Event() provider.StreamEvent { return n.d.Event() }
func (n noLend) Err() error                  { return n.d.Err() }
func (n noLend) Finished() bool              { return n.d.Finished() }
func (n noLend) Started() bool               { return n.d.Started() }
func (n noLend) SetOutputLimit(l int)        { n.d.SetOutputLimit(l) }

// TestStreamLendsItsEvent: a stream's Current is its Event, in place when
// the decoder lends it (the edge's decoders embed Queue) and copied when it
// does not, from the first event to the finish.
func TestStreamLendsItsEvent(t *testing.T) {
	body := "data: one\n\ndata: two\n\ndata: three\n\ndata: [END]\n\n"
	for _, lends := range []bool{true, false} {
		mode := *testMode
		if !lends {
			mode.Decode = func(r io.Reader, max int) Decoder { return noLend{newLineDecoder(r, max)} }
		}
		srv := newServer(t, sseBody(body))
		s, err := mode.Stream(context.Background(), testRoute(t, srv, 0), []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*stream).dec.(EventLender); ok != lends {
			t.Fatalf("lends %v: the decoder lends: %v", lends, ok)
		}
		var got []string
		for s.Next() {
			cur := s.(EventLender).Current()
			if ev := s.Event(); *cur != ev {
				t.Fatalf("lends %v: Current %+v, Event %+v", lends, *cur, ev)
			}
			got = append(got, cur.Text+cur.FinishReason)
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(got, ","); g != "one,two,three,stop" {
			t.Fatalf("lends %v: events %s", lends, g)
		}
		if lends && s.(*stream).lend == nil {
			t.Fatal("the stream does not use the decoder's event")
		}
	}
}
