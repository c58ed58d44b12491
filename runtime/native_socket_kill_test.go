package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// kill -9 with a native steer in flight on a real socket:
// a child process (this test binary, re-executed) runs a real run on a
// qualified WebSocket route against the parent's loopback fake and calls
// RunControl.Steer while the model streams; the parent kills it (SIGKILL)
// once the session file shows the intent record, then opens the session
// in its own process. native_kill_test.go kills a process whose steer
// never reached a socket (between the intent record and the frame).

// The child's environment: the home directory (its models.json names the
// parent's fake) and the workspace.
const (
	socketKillHomeEnv = "OCTET_NATIVE_SOCKET_KILL_HOME"
	socketKillWSEnv   = "OCTET_NATIVE_SOCKET_KILL_WS"
)

// socketKillInput is the steering input the child sends.
const socketKillInput = "never twice, on a socket"

// TestNativeSteeringSocketKillChild is the child: it runs until it is
// killed. Reaching the run's end is a failure (the parent reports it).
func TestNativeSteeringSocketKillChild(t *testing.T) {
	home := os.Getenv(socketKillHomeEnv)
	if home == "" {
		t.Skip("child of TestNativeSteeringSocketKilled only")
	}
	// The idle timeout is long enough that no outcome becomes unknown
	// in this process before the parent kills it.
	a, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }, IdleTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := &nativeRig{agent: a, home: home, ws: os.Getenv(socketKillWSEnv)}
	rc, err := a.Run(context.Background(), r.req("run-1", "indent it", []string{}))
	if err != nil {
		t.Fatal(err)
	}
	steered := false
	for ev := range rc.Events() {
		if d, ok := ev.Data.(*protocol.ModelDelta); ok && d.Channel == protocol.ChannelText && !steered {
			steered = true
			if err := rc.Steer(socketKillInput); err != nil {
				t.Fatalf("Steer: %v", err)
			}
		}
	}
	res := rc.Wait()
	t.Fatalf("the run ended before the kill: %+v %+v", res, res.Error)
}

// sessionRecords returns the types (native_steering records as
// "native_steering/<event>") of the complete lines of a session file, and
// the torn tail: bytes after the last newline. A complete line that is not
// a JSON object fails the test.
func sessionRecords(t *testing.T, file string) (types []string, tail []byte) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	for line := range strings.Lines(string(data[:end])) {
		var rec struct {
			Type  string `json:"type"`
			Event string `json:"event"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Type == "" {
			t.Fatalf("a torn or broken record before the tail: %q (%v)", line, err)
		}
		if rec.Event != "" {
			rec.Type += "/" + rec.Event
		}
		types = append(types, rec.Type)
	}
	return types, data[end:]
}

// TestNativeSteeringSocketKilled: the host process is killed (SIGKILL)
// with a native steer in flight on its WebSocket, after the intent record
// was synced: while the steered response still streams (the fake holds
// it open, never answering the steer), and after it completed while the
// host waits for the steer's outcome (the fake never answers). A new
// process finds the session file whole, the session unsettled and its
// usage uncertain; a new run on it ends blocked before any provider I/O,
// and the input is never replayed.
func TestNativeSteeringSocketKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for _, tc := range []struct {
		name, outcome string
		// ready reports whether the child may be killed, from the types
		// of the session's records.
		ready func(types []string) bool
	}{
		{"streaming", fakeprovider.SteerHold, func(types []string) bool {
			return slices.Contains(types, "native_steering/intent")
		}},
		{"awaiting the outcome", fakeprovider.SteerSilent, func(types []string) bool {
			// The steered answer is committed after the intent: its usage
			// record is the last the child writes before it waits.
			i := slices.Index(types, "native_steering/intent")
			return i >= 0 && slices.Contains(types[i:], "usage")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newNativeRig(t, []fakeprovider.Turn{
				{Text: "I will indent the file with spaces", Usage: fakeprovider.Usage{Input: 100, Output: 8}, Steer: &fakeprovider.Steer{Outcome: tc.outcome}},
				{Text: "never served"},
			}, qualified, nil)
			file := filepath.Join(r.home, "sessions", "steered.jsonl")

			// The hang guard: the child is killed when it expires.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestNativeSteeringSocketKillChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), socketKillHomeEnv+"="+r.home, socketKillWSEnv+"="+r.ws)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
		poll:
			for {
				select {
				case err := <-exited:
					t.Fatalf("the child ended before the kill (%v):\n%s", err, out.String())
				case <-ctx.Done():
					<-exited
					t.Fatalf("the session never showed the intent record:\n%s", out.String())
				case <-tick.C:
					if types, _ := sessionRecords(t, file); tc.ready(types) {
						break poll
					}
				}
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("the child was not killed: %v\n%s", err, out.String())
			}

			// The file: every complete line is a record; a torn tail is
			// allowed, and the store reports it.
			types, tail := sessionRecords(t, file)
			var natives []string
			for _, typ := range types {
				if strings.HasPrefix(typ, "native_steering/") {
					natives = append(natives, typ)
				}
			}
			if !slices.Equal(natives, []string{"native_steering/intent"}) {
				t.Fatalf("records %v", types)
			}
			s, err := r.agent.OpenSession(filepath.Join(r.home, "sessions"), "steered")
			if err != nil {
				t.Fatal(err)
			}
			if s.TornTail() != (len(tail) > 0) {
				t.Fatalf("torn tail %q, the store says %v", tail, s.TornTail())
			}
			if !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() || !s.Statistics().UsageUncertain {
				t.Fatalf("after kill -9: unsettled %v uncertain %v", s.HasUnsettledNativeSteering(), s.HasUncertainUsage())
			}
			for _, m := range s.Messages() {
				if strings.Contains(m.Text, socketKillInput) {
					t.Fatalf("the steer input entered the conversation: %+v", m)
				}
			}
			if tc.outcome == fakeprovider.SteerSilent {
				if msgs := s.Messages(); len(msgs) != 2 || msgs[1].Text != "I will indent the file with spaces" {
					t.Fatalf("the steered answer was not committed: %+v", msgs)
				}
			}
			s.Close()

			// What the fake got from the child: one response.create and at
			// most one response.steer (the kill may come before the frame
			// leaves: the intent is synced first).
			frames := r.frames()
			if len(frames) < 1 || len(frames) > 2 || frames[0]["type"] != "response.create" ||
				len(frames) == 2 && (frames[1]["type"] != "response.steer" || frames[1]["input"] != socketKillInput) {
				t.Fatalf("frames %v", frames)
			}
			before, sockets := len(r.fake.Requests()), r.handshakes()
			evs, res, _ := r.run(t, r.req("run-2", "go on", []string{}), "")
			if res.Status != protocol.StatusBlocked || res.Error == nil || res.Error.Code != protocol.CodeUnsettledNativeSteering ||
				!strings.Contains(res.Error.Message, "start a new session") || res.Steps != 0 {
				t.Fatalf("resumed run %+v %+v", res, res.Error)
			}
			if len(r.fake.Requests()) != before || r.handshakes() != sockets {
				t.Fatal("the blocked run reached the provider")
			}
			if len(events[protocol.ModelDelta](evs)) != 0 || len(events[protocol.SteeringDelivered](evs)) != 0 {
				t.Fatalf("events %v", evs)
			}
			if n := count(t, r.frames(), socketKillInput); n > 1 {
				t.Fatalf("the input went out %d times", n)
			}
		})
	}
}
