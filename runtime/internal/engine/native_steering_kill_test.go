package engine

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fsmrun "octet.dev/host/fsm/run"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/steer"
)

// The kill -9 test re-executes the test binary with nativeChildEnv set to
// the home directory: TestNativeSteeringKillChild then records a native
// steering intent, dispatches it into a send that never returns, says so
// on stdout, and waits to be killed.
const nativeChildEnv = "OCTET_NATIVE_STEERING_CHILD_HOME"

func TestNativeSteeringKillChild(t *testing.T) {
	home := os.Getenv(nativeChildEnv)
	if home == "" {
		t.Skip("child of TestNativeSteeringKilledAfterIntent only")
	}
	f := &fixture{t: t, home: home, ws: filepath.Join(home, "ws"), prov: &scripted{}}
	f.sessions = filepath.Join(home, "sessions")
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	req := f.req("q")
	req.SessionID = "killed"
	p, rerr := a.prepare(context.Background(), req)
	if rerr != nil {
		t.Fatal(rerr)
	}
	rc := &RunControl{events: make(chan Event, 64), abandon: make(chan struct{}), queue: steer.NewQueue()}
	d := &driver{a: a, p: p, rc: rc, m: fsmrun.New(), recovery: a.recoveryConfig()}
	n := steer.NewNative(d, func(_, _ string, record func() error) error {
		if err := record(); err != nil {
			return err
		}
		os.Stdout.WriteString("dispatched\n")
		time.Sleep(time.Hour) // the process dies here, the steer in flight
		return nil
	})
	_, _ = n.Steer("resp_1", "never twice")
}

// TestNativeSteeringKilledAfterIntent: the host process is killed (SIGKILL)
// after the intent record and before the response.steer frame is written
// (the injected send holds it): the crash point a real socket cannot pin,
// where the server never saw the steer. The record alone decides: a new
// process finds the session unsettled and its usage uncertain, blocks every
// run before any provider I/O, and never replays the input. The kill with
// the steer on a real socket is TestNativeSteeringSocketKilled
// (native_socket_kill_test.go).
func TestNativeSteeringKilledAfterIntent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "ws"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestNativeSteeringKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), nativeChildEnv+"="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "dispatched\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child said %q: %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()

	f := newFixture(t)
	f.home, f.ws, f.sessions = home, filepath.Join(home, "ws"), filepath.Join(home, "sessions")
	a, err := New(Options{Home: home, Getenv: func(string) string { return "" },
		ProviderFactory: func(Route) (Provider, error) { return f.prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	s, err := a.OpenSession(f.sessions, "killed")
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasUnsettledNativeSteering() || !s.HasUncertainUsage() {
		t.Fatalf("after kill -9: unsettled %v uncertain %v", s.HasUnsettledNativeSteering(), s.HasUncertainUsage())
	}
	for _, m := range s.Messages() {
		if strings.Contains(m.Text, "never twice") {
			t.Fatalf("the steer input entered the conversation: %+v", m)
		}
	}
	s.Close()
	req := f.req("resume")
	req.RunID, req.SessionID = "run-2", "killed"
	_, res := f.run(req)
	if res.Status != protocol.StatusBlocked || res.Error == nil || res.Error.Code != protocol.CodeUnsettledNativeSteering {
		t.Fatalf("resumed run %+v", res)
	}
	if n := len(f.prov.requests()); n != 0 {
		t.Fatalf("%d provider requests", n)
	}
}
