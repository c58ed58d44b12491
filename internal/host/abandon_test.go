package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"octet.dev/host/protocol"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// abandonedRunLine is a run whose answer (and so its final_result's output)
// is text of size bytes, streamed in pieces that each fit a frame. Its
// route's output cap (max_output_tokens) lets a call produce that much.
func abandonedRun(t *testing.T, size int) (line string, sessions string) {
	t.Helper()
	text := strings.Repeat("y", size)
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: text, Chunk: 64 << 10}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	sessions = filepath.Join(t.TempDir(), "sessions")
	line = fmt.Sprintf(`{"protocol_version":1,"request_id":"q1","command":"run","run_id":"run-1","workspace":%q,"model":"m","prompt":"go","tools":[],`+
		`"provider":"fake","base_url":%q,"context_window_tokens":400000,"max_output_tokens":100000,"session_dir":%q,"session_id":"s1"}`+"\n", t.TempDir(), fake.BaseURL(fakeprovider.ModeChat), sessions)
	return line, sessions
}

func runEnds(t *testing.T, agent *runtime.Agent, dir string) []runtime.RunEnd {
	t.Helper()
	s, err := agent.OpenSession(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.RunEnds()
}

// TestOversizedFinalResultIsRecorded: a run whose final_result the wire
// replaced by protocol_error output_too_large (its output is over 1 MiB)
// completed as far as the run knows, but its client was told otherwise:
// its session says so, status error and code output_too_large, and a
// resume reports it the same way.
func TestOversizedFinalResultIsRecorded(t *testing.T) {
	line, dir := abandonedRun(t, 1100<<10)
	agent := newTestAgent(t)
	out := serveLines(t, agent, []string{line})
	if !strings.Contains(out, `"type":"protocol_error"`) || !strings.Contains(out, `"code":"output_too_large"`) || strings.Contains(out, `"type":"final_result"`) {
		t.Fatalf("the client did not get output_too_large in place of the final_result:\n%.2000s", out)
	}
	got := runEnds(t, agent, dir)
	if len(got) != 1 || got[0] != (runtime.RunEnd{RunID: "run-1", Status: "error", Code: "output_too_large"}) {
		t.Fatalf("session run ends %+v, want run-1 error output_too_large", got)
	}
	// A second host process resuming the session reads the same.
	if got := runEnds(t, newTestAgent(t), dir); len(got) != 1 || got[0].Code != "output_too_large" {
		t.Errorf("resumed run ends %+v", got)
	}
}

// TestDeliveredRunIsRecordedAsIs: a run whose events all reached stdout
// keeps the status it ended with, without a code when it completed.
func TestDeliveredRunIsRecordedAsIs(t *testing.T) {
	line, dir := abandonedRun(t, 100)
	agent := newTestAgent(t)
	out := serveLines(t, agent, []string{line})
	if !strings.Contains(out, `"type":"final_result"`) {
		t.Fatalf("no final_result:\n%s", out)
	}
	if got := runEnds(t, agent, dir); len(got) != 1 || got[0] != (runtime.RunEnd{RunID: "run-1", Status: "completed"}) {
		t.Fatalf("session run ends %+v", got)
	}
}

// failingOut accepts writes until one carries marker, then fails that and
// every later one.
type failingOut struct {
	mu     sync.Mutex
	marker string
	failed bool
}

func (w *failingOut) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed || strings.Contains(string(p), w.marker) {
		w.failed = true
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

// TestFailedOutputIsRecorded: a run whose final_result could not be
// written to stdout ends in its session with status error and code
// output_failed.
func TestFailedOutputIsRecorded(t *testing.T) {
	line, dir := abandonedRun(t, 100)
	agent := newTestAgent(t)
	inR, inW := io.Pipe()
	go func() {
		defer inW.Close()
		io.WriteString(inW, line)
	}()
	h := New(Config{In: inR, Out: &failingOut{marker: `"type":"final_result"`}, Agent: agent, Version: "test"})
	err := h.Serve(context.Background())
	inR.Close()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code == 0 {
		t.Fatalf("Serve = %v, want an exit for the failed output", err)
	}
	if got := runEnds(t, agent, dir); len(got) != 1 || got[0] != (runtime.RunEnd{RunID: "run-1", Status: "error", Code: protocol.CodeOutputFailed}) {
		t.Fatalf("session run ends %+v, want run-1 error %s", got, protocol.CodeOutputFailed)
	}
}
