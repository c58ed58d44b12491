package spec_test

import (
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/spec"
)

// Frame builders: ev is a non-terminal event, term a terminal one, of
// request id ("" for null) with seq.
func ev(id string, seq int) spec.Frame { return frame(id, seq, "text_delta", false) }

func term(id string, seq int, typ protocol.EventType) spec.Frame { return frame(id, seq, typ, true) }

func frame(id string, seq int, typ protocol.EventType, terminal bool) spec.Frame {
	f := spec.Frame{Seq: seq, Type: typ, Terminal: terminal}
	if id != "" {
		f.RequestID = spec.ID(id)
	}
	return f
}

var predicates = []predicate[spec.Frame]{
	{spec.NameExactlyOneTerminal, spec.ExactlyOneTerminal},
	{spec.NameSeqGapless, spec.SeqGapless},
	{spec.NameNothingAfterShutdown, spec.NothingAfterShutdown},
	{spec.NameSerial, spec.Serial},
	{spec.NameComplete, spec.Complete},
}

// Every transcript runs through every predicate: want maps the predicates
// that must fail to the index of the frame they must blame; all others
// must hold.
var transcripts = []struct {
	name   string
	frames []spec.Frame
	want   map[string]int
}{
	{"empty", nil, nil},
	{"hello", []spec.Frame{term("h", 1, "hello")}, nil},
	{"run", []spec.Frame{ev("r", 1), ev("r", 2), term("r", 3, "final_result")}, nil},
	{"requests in turn", []spec.Frame{
		ev("a", 1), term("a", 2, "final_result"), term("b", 1, "models"), term("c", 1, "hello"),
	}, nil},
	{"duplicate id rejected after the first finished", []spec.Frame{
		ev("a", 1), term("a", 2, "final_result"), term("a", 1, "protocol_error"),
	}, nil},
	{"null ids", []spec.Frame{term("", 1, "protocol_error"), term("", 1, "protocol_error")}, nil},
	{"shutdown last", []spec.Frame{term("a", 1, "hello"), term("s", 1, protocol.TypeShutdown)}, nil},
	{"request in flight (a prefix)", []spec.Frame{
		term("a", 1, "hello"), ev("b", 1), ev("b", 2),
	}, map[string]int{spec.NameComplete: 1}},

	{"second terminal", []spec.Frame{
		ev("a", 1), term("a", 2, "final_result"), term("a", 3, "protocol_error"),
	}, map[string]int{spec.NameExactlyOneTerminal: 2}},
	{"event after terminal", []spec.Frame{
		term("a", 1, "final_result"), ev("a", 2),
	}, map[string]int{spec.NameExactlyOneTerminal: 1}},
	{"null id continued after its terminal", []spec.Frame{
		term("", 1, "protocol_error"), term("", 2, "protocol_error"),
	}, map[string]int{spec.NameExactlyOneTerminal: 1}},
	{"no terminal before the next request", []spec.Frame{
		ev("a", 1), term("b", 1, "hello"),
	}, map[string]int{spec.NameExactlyOneTerminal: 0, spec.NameComplete: 0}},
	{"restart of a request in flight", []spec.Frame{
		ev("a", 1), ev("a", 1), term("a", 2, "final_result"),
	}, map[string]int{spec.NameExactlyOneTerminal: 0, spec.NameComplete: 0}},

	{"gap", []spec.Frame{ev("a", 1), term("a", 3, "final_result")}, map[string]int{spec.NameSeqGapless: 1}},
	{"repeat", []spec.Frame{
		ev("a", 1), ev("a", 2), term("a", 2, "final_result"),
	}, map[string]int{spec.NameSeqGapless: 2}},
	{"starts at 2", []spec.Frame{term("a", 2, "final_result")}, map[string]int{spec.NameSeqGapless: 0}},
	{"starts at 0", []spec.Frame{ev("a", 0), term("a", 1, "final_result")}, map[string]int{
		spec.NameSeqGapless: 0, spec.NameExactlyOneTerminal: 0, spec.NameComplete: 0,
	}},

	{"event after shutdown", []spec.Frame{
		term("s", 1, protocol.TypeShutdown), term("a", 1, "hello"),
	}, map[string]int{spec.NameNothingAfterShutdown: 1}},
	{"null protocol_error after shutdown", []spec.Frame{
		term("s", 1, protocol.TypeShutdown), term("", 1, "protocol_error"),
	}, map[string]int{spec.NameNothingAfterShutdown: 1}},

	{"interleaved", []spec.Frame{
		ev("a", 1), term("b", 1, "hello"), term("a", 2, "final_result"),
	}, map[string]int{spec.NameSerial: 2}},
	{"protocol_error while a run is in flight", []spec.Frame{
		ev("a", 1), term("", 1, "protocol_error"), ev("a", 2), term("a", 3, "final_result"),
	}, map[string]int{spec.NameSerial: 2}},
	{"shutdown answered during a run", []spec.Frame{
		ev("a", 1), term("s", 1, protocol.TypeShutdown), term("a", 2, "final_result"),
	}, map[string]int{spec.NameNothingAfterShutdown: 2, spec.NameSerial: 2}},
}

func TestPredicates(t *testing.T) {
	for _, tt := range transcripts {
		for _, p := range predicates {
			checkVerdict(t, tt.name, p.name, "frame", p.check(tt.frames), tt.want)
		}
	}
}

// The predicates hold on every prefix of a transcript on which they hold.
func TestPrefixes(t *testing.T) {
	for _, tt := range transcripts {
		if spec.All(tt.frames) != nil {
			continue
		}
		for n := range len(tt.frames) {
			if err := spec.All(tt.frames[:n]); err != nil {
				t.Errorf("%s: prefix of %d frames: %v", tt.name, n, err)
			}
		}
	}
}

func TestAllJoins(t *testing.T) {
	frames := []spec.Frame{ev("a", 1), term("s", 1, protocol.TypeShutdown), term("a", 2, "final_result")}
	err := spec.All(frames)
	if err == nil {
		t.Fatal("All: want violations")
	}
	for _, name := range []string{spec.NameNothingAfterShutdown, spec.NameSerial} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("All: %v does not mention %s", err, name)
		}
	}
	for _, name := range []string{spec.NameExactlyOneTerminal, spec.NameSeqGapless} {
		if strings.Contains(err.Error(), name) {
			t.Errorf("All: %v mentions %s", err, name)
		}
	}
}

func TestViolationMessage(t *testing.T) {
	err := spec.SeqGapless([]spec.Frame{ev("a", 1), term("a", 3, "final_result")})
	const want = `spec: SeqGapless violated at frame 1: request "a" (from frame 0): seq 3 after seq 1 at frame 0`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
