package proptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"octet.dev/host/internal/host"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/wire"
)

// frame is the part of an event the invariants look at.
type frame struct {
	RequestID *string         `json:"request_id"`
	Seq       int             `json:"seq"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
}

var terminalTypes = map[string]bool{"hello": true, "models": true, "shutdown": true, "final_result": true, "protocol_error": true}

// hostUnderTest is an in-process host fed over pipes.
type hostUnderTest struct {
	in   *io.PipeWriter
	out  *wire.LineReader
	done chan error
}

func startHost(t *rapid.T, home string) *hostUnderTest {
	agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := host.New(host.Config{In: inR, Out: outW, Agent: agent, Version: "prop"})
	hu := &hostUnderTest{in: inW, out: wire.NewLineReader(outR), done: make(chan error, 1)}
	go func() {
		err := h.Serve(context.Background())
		outW.Close()
		inR.Close()
		hu.done <- err
	}()
	return hu
}

// send writes one line (in a goroutine: an oversized line is consumed
// while the host discards it).
func (h *hostUnderTest) send(line string) {
	go func() { _, _ = io.WriteString(h.in, line+"\n") }()
}

// readRequest reads the events of one request up to its terminal event and
// checks the per-request invariants: one request_id throughout, seq from 1
// without gaps, exactly one terminal event, last.
func (h *hostUnderTest) readRequest(t *rapid.T, wantID *string) frame {
	seq := 0
	for {
		line, err := h.out.Next()
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		if len(line)+1 > protocol.MaxFrameBytes {
			t.Fatalf("event frame of %d bytes", len(line)+1)
		}
		var f frame
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("event is not JSON: %v: %q", err, line)
		}
		if (f.RequestID == nil) != (wantID == nil) || (f.RequestID != nil && *f.RequestID != *wantID) {
			t.Fatalf("event for request %v, want %v: %s", deref(f.RequestID), deref(wantID), line)
		}
		seq++
		if f.Seq != seq {
			t.Fatalf("seq %d, want %d: %s", f.Seq, seq, line)
		}
		if terminalTypes[f.Type] {
			return f
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// lineKind is one kind of input the model generates.
type lineKind int

const (
	kindHello lineKind = iota
	kindModels
	kindRun
	kindDuplicate
	kindMalformed
	kindOversized
	kindNoID
	kindStream // an accepted run that streams against the fake provider
	kindCount
)

var malformedBodies = []string{
	`"command":"hello","x":1`,
	`"command":"nope"`,
	`"command":"run","workspace":"/w","model":"m","prompt":"p"`,
	`"command":"models","offline":"no"`,
	`"command":"hello","Command":"hello"`,
	`"command":"run","run_id":"r","workspace":"/w","model":"m","prompt":null`,
}

// TestHostProtocolModel feeds random mixes of valid, malformed, oversized
// and duplicate lines; after every step each request has exactly one
// terminal event with a gapless seq, and the host still answers.
func TestHostProtocolModel(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	fake, err := fakeprovider.New(fakeprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	modes := []fakeprovider.Mode{fakeprovider.ModeChat, fakeprovider.ModeResponses, fakeprovider.ModeAnthropic}
	modeNames := map[fakeprovider.Mode]string{fakeprovider.ModeChat: "openai-compatible", fakeprovider.ModeResponses: "openai-responses", fakeprovider.ModeAnthropic: "anthropic-messages"}
	rapid.Check(t, func(t *rapid.T) {
		h := startHost(t, home)
		used := []string{}
		n := 0
		fresh := func() string { n++; id := fmt.Sprintf("q%d", n); used = append(used, id); return id }
		steps := rapid.IntRange(1, 25).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			kind := lineKind(rapid.IntRange(0, int(kindCount)-1).Draw(t, "kind"))
			var line string
			var want *string
			wantType := ""
			switch kind {
			case kindHello:
				id := fresh()
				line, want, wantType = `{"protocol_version":1,"request_id":"`+id+`","command":"hello"}`, &id, "hello"
			case kindModels:
				id := fresh()
				line, want, wantType = `{"protocol_version":1,"request_id":"`+id+`","command":"models","offline":true}`, &id, "models"
			case kindRun:
				id := fresh()
				line, want, wantType = `{"protocol_version":1,"request_id":"`+id+`","command":"run","run_id":"r-`+id+`","workspace":"/nonexistent","model":"m","prompt":"p"}`, &id, "final_result"
			case kindDuplicate:
				if len(used) == 0 {
					continue
				}
				id := rapid.SampledFrom(used).Draw(t, "dup")
				line, want, wantType = `{"protocol_version":1,"request_id":"`+id+`","command":"hello"}`, &id, "protocol_error"
			case kindMalformed:
				id := fresh()
				body := rapid.SampledFrom(malformedBodies).Draw(t, "body")
				line, want, wantType = `{"protocol_version":1,"request_id":"`+id+`",`+body+`}`, &id, "protocol_error"
			case kindOversized:
				size := rapid.IntRange(protocol.MaxFrameBytes, 3*protocol.MaxFrameBytes).Draw(t, "size")
				line, wantType = strings.Repeat("y", size), "protocol_error"
			case kindStream:
				// A real run: accepted, started, a streamed answer in
				// pieces (after a tool call, and after a retried attempt,
				// when drawn), model_step, settled, final_result — a long
				// per-request stream for the seq and terminal checks.
				id := fresh()
				mode := rapid.SampledFrom(modes).Draw(t, "mode")
				answer := fakeprovider.Turn{Text: strings.Repeat("word ", rapid.IntRange(1, 40).Draw(t, "words")), Chunk: rapid.IntRange(1, 16).Draw(t, "chunk")}
				turns := []fakeprovider.Turn{answer}
				if rapid.Bool().Draw(t, "tool") {
					turns = []fakeprovider.Turn{{ToolCalls: []fakeprovider.ToolCall{{ID: "c-" + id, Name: "ls", Arguments: "{}"}}}, answer}
				}
				fake.SetScript(fakeprovider.Script{Turns: turns})
				if rapid.Bool().Draw(t, "retry") {
					fake.InjectFault(fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "1"})
				}
				line = fmt.Sprintf(`{"protocol_version":1,"request_id":%q,"command":"run","run_id":"r-%s","workspace":%q,"model":"m","prompt":"p","provider":"fake","provider_mode":%q,"base_url":%q}`,
					id, id, ws, modeNames[mode], fake.BaseURL(mode))
				want, wantType = &id, "final_result"
			case kindNoID:
				line = rapid.SampledFrom([]string{"", "{", "[]", "null", `{"command":"hello"}`, "\x00"}).Draw(t, "noid")
				wantType = "protocol_error"
			}
			h.send(line)
			f := h.readRequest(t, want)
			if f.Type != wantType {
				t.Fatalf("step %d (%d): terminal %s, want %s: %s", i, kind, f.Type, wantType, f.Data)
			}
			if kind == kindStream && (!strings.Contains(string(f.Data), `"status":"completed"`) || f.Seq < 6) {
				// accepted, started, model_delta, model_step, settled and
				// final_result at the least.
				t.Fatalf("step %d: streaming run ended at seq %d with %s", i, f.Seq, f.Data)
			}
		}
		// The host still answers, then shuts down cleanly.
		id := fresh()
		h.send(`{"protocol_version":1,"request_id":"` + id + `","command":"hello"}`)
		if f := h.readRequest(t, &id); f.Type != "hello" {
			t.Fatalf("final hello answered with %s", f.Type)
		}
		id = fresh()
		h.send(`{"protocol_version":1,"request_id":"` + id + `","command":"shutdown"}`)
		if f := h.readRequest(t, &id); f.Type != "shutdown" {
			t.Fatalf("shutdown answered with %s", f.Type)
		}
		if err := <-h.done; err != nil {
			t.Fatalf("Serve after shutdown: %v", err)
		}
	})
}
