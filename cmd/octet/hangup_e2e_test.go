package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// TestRPCStdoutReaderGone: when the reader of stdout goes away while stdin
// stays open, the rpc mode ends at once with exit 1: mid-run (a stalled
// stream that writes nothing, and an endless one whose writes fail) the
// run is canceled and records its end in the session first; idle after a
// response it just exits.
func TestRPCStdoutReaderGone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakeprovider.Fault
	}{
		{"mid-run stalled", fakeprovider.FaultStall{AfterEvents: 1}},
		{"mid-run streaming", fakeprovider.FaultEndless{Piece: 64}},
		{"after a response", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, done)
			if tc.fault != nil {
				e.fake.InjectFault(tc.fault)
			}
			cmd := e.command(e.args("--mode", "rpc", "--session", "gone-1")...)
			p, stdout := startRPC(t, cmd)
			t.Cleanup(func() { p.stdin.Close() }) // before startRPC's kill
			if tc.fault != nil {
				p.send(`{"type":"prompt","message":"x"}`)
				p.response("prompt")
				waitFor(t, func() bool { return len(e.fake.Requests()) == 1 }, "the model request")
				time.Sleep(100 * time.Millisecond) // into the stream
			} else {
				p.send(`{"type":"get_state"}`)
				p.response("get_state")
			}
			stdout.Close() // stdin stays open
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				if code := exitStatus(err); code != 1 {
					t.Fatalf("exit %d, want 1; stderr:\n%s", code, p.stderr)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("octet --mode rpc did not exit within 5 s of losing its stdout reader; stderr:\n%s", p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "writing to stdout failed") {
				t.Errorf("stderr does not say why:\n%s", p.stderr)
			}
			if tc.fault != nil {
				data, err := os.ReadFile(sessionFile(t, e.home))
				if err != nil || !strings.Contains(string(data), `"type":"run_end"`) {
					t.Fatalf("the session does not record the run's end: %v\n%s", err, data)
				}
			}
		})
	}
}
