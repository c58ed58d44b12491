package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
	"octet.dev/host/wire/client"
)

// Scale-out as docs/scale.md describes it: many host processes, one per
// run, sharing one session directory. The session lock (a flock on
// <session>.lock) is what keeps them apart; these tests run the real
// binary against one fake provider.

// hostRun is what one host process saw of one run.
type hostRun struct {
	events []client.Event
	final  *protocol.FinalResult
	err    error
}

// runOn starts the run on c and reads it to its end, without calling
// t.Fatal (it runs on its own goroutine).
func runOn(c *client.Client, req protocol.RunRequest) hostRun {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a hang guard
	defer cancel()
	rs, err := c.Run(ctx, req)
	if err != nil {
		return hostRun{err: fmt.Errorf("Run: %w", err)}
	}
	evs, final, err := rs.Wait(ctx)
	return hostRun{events: evs, final: final, err: err}
}

// checkLifecycle applies the run invariants of spec to one run's events and
// counts its final_result events.
func checkLifecycle(evs []client.Event) error {
	var lc []spec.RunEvent
	finals := 0
	for _, ev := range evs {
		re := spec.RunEvent{Type: ev.Type}
		if ev.Type == "settled" || ev.Type == "final_result" {
			var s struct {
				Status string `json:"status"`
			}
			if err := ev.DecodeInto(&s); err != nil {
				return err
			}
			re.Status = s.Status
		}
		if ev.Type == "final_result" {
			finals++
		}
		lc = append(lc, re)
	}
	if finals != 1 {
		return fmt.Errorf("%d final_result events, want exactly 1", finals)
	}
	if err := spec.RunLifecycle(lc); err != nil {
		return err
	}
	return spec.RunComplete(lc)
}

// startHost starts one host process with its own HOME.
func startHost(t *testing.T, home string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
	defer cancel()
	c, err := client.Start(ctx, client.Config{Path: hostBin, Env: append(os.Environ(), "HOME="+home)})
	if err != nil {
		t.Fatalf("starting a host: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sharedRunReq is a run on session sessionID in dir against fake's Chat
// Completions.
func sharedRunReq(fake *fakeprovider.Server, ws, dir, runID, sessionID, prompt string) protocol.RunRequest {
	str := func(s string) *string { return &s }
	return protocol.RunRequest{RunID: runID, Workspace: ws, Model: "fake-model", Prompt: prompt,
		SessionID: str(sessionID), SessionDir: str(dir), Provider: str("fake"),
		BaseURL: str(fake.BaseURL(fakeprovider.ModeChat)), APIKey: str("fake-key-123456"),
		ProviderMode: str(string(fakeprovider.ModeChat)), Tools: &[]string{}}
}

// sessionMessages opens session id in dir the way an embedder would (which
// takes its lock, so no host may hold it) and returns its conversation as
// "role: text" lines. A torn tail or a file that fails to load is an error.
func sessionMessages(t *testing.T, dir, id string) []string {
	t.Helper()
	agent, err := runtime.New(runtime.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.OpenSession(dir, id)
	if err != nil {
		t.Fatalf("session %s does not load: %v", id, err)
	}
	defer s.Close()
	if s.TornTail() {
		t.Errorf("session %s has a torn tail", id)
	}
	var out []string
	for _, m := range s.Messages() {
		out = append(out, string(m.Role)+": "+m.Text)
	}
	return out
}

// TestEightHostsOneSessionDir runs 8 host processes at once, each on its
// own session in one shared session directory, against one provider. Every
// run must end with exactly one final_result, completed, and every session
// file must hold exactly its own run: its prompt and the answer its host
// reported, intact.
func TestEightHostsOneSessionDir(t *testing.T) {
	const n = 8
	var turns []fakeprovider.Turn
	for i := range n {
		turns = append(turns, fakeprovider.Turn{Text: fmt.Sprintf("answer %d", i), Usage: fakeprovider.Usage{Input: 10, Output: 2}})
	}
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}, APIKey: "fake-key-123456"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	dir := filepath.Join(t.TempDir(), "sessions") // created by the first host that needs it
	ws := t.TempDir()

	hosts := make([]*client.Client, n)
	for i := range hosts {
		hosts[i] = startHost(t, t.TempDir())
	}
	results := make([]hostRun, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range hosts {
		wg.Go(func() {
			<-start
			results[i] = runOn(hosts[i], sharedRunReq(fake, ws, dir, fmt.Sprintf("run-%d", i), fmt.Sprintf("session-%d", i), fmt.Sprintf("prompt %d", i)))
		})
	}
	close(start) // all eight runs at once
	wg.Wait()

	var outputs []string
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("host %d: %v (stderr: %s)", i, r.err, hosts[i].Stderr())
		}
		if err := checkLifecycle(r.events); err != nil {
			t.Errorf("host %d: %v", i, err)
		}
		if r.final.Status != "completed" || r.final.Error != nil {
			t.Errorf("host %d: final_result %+v, want completed", i, r.final)
			continue
		}
		if want := filepath.Join(dir, fmt.Sprintf("session-%d.jsonl", i)); r.final.SessionFile == nil || *r.final.SessionFile != want {
			t.Errorf("host %d: sessionFile %v, want %s", i, r.final.SessionFile, want)
		}
		outputs = append(outputs, r.final.Output)
	}
	// Each turn went to exactly one run.
	slices.Sort(outputs)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("answer %d", i))
	}
	if !slices.Equal(outputs, want) {
		t.Errorf("outputs %q, want each of %q exactly once", outputs, want)
	}
	if got := len(fake.Requests()); got != n {
		t.Errorf("the provider saw %d requests, want %d", got, n)
	}
	for i, c := range hosts {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := c.Shutdown(ctx); err != nil {
			t.Errorf("host %d shutdown: %v", i, err)
		}
		cancel()
	}

	// The directory holds the eight sessions, their lock files, and nothing
	// half-made.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	var wantFiles []string
	for i := range n {
		wantFiles = append(wantFiles, fmt.Sprintf("session-%d.jsonl", i), fmt.Sprintf("session-%d.jsonl.lock", i))
	}
	slices.Sort(wantFiles)
	if !slices.Equal(files, wantFiles) {
		t.Errorf("session dir holds %q, want %q", files, wantFiles)
	}
	for i, r := range results {
		if r.final == nil {
			continue
		}
		got := sessionMessages(t, dir, fmt.Sprintf("session-%d", i))
		want := []string{fmt.Sprintf("user: prompt %d", i), "assistant: " + r.final.Output}
		if !slices.Equal(got, want) {
			t.Errorf("session-%d holds %q, want %q", i, got, want)
		}
	}
}

// TestTwoHostsOneSession runs two host processes on the same session ID at
// once. The first holds the session's lock for its whole run (here: while
// it waits for a provider that refuses connections); the second is refused
// with a single final_result error session_locked and no accepted, and
// writes nothing. The first then completes, the session holds its run
// alone, intact, and the second host can resume it afterwards.
func TestTwoHostsOneSession(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{Text: "first answer"}, {Text: "second answer"},
	}}, APIKey: "fake-key-123456"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	dir := filepath.Join(t.TempDir(), "sessions")
	ws := t.TempDir()
	a, b := startHost(t, t.TempDir()), startHost(t, t.TempDir())

	// A's provider is down: A accepts the run, opens the session and waits
	// for the network, holding the lock, until the fake listens again.
	fake.InjectFault(fakeprovider.FaultRefuse{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a hang guard
	defer cancel()
	rsA, err := a.Run(ctx, sharedRunReq(fake, ws, dir, "run-a", "shared", "prompt a"))
	if err != nil {
		t.Fatal(err)
	}
	var evsA []client.Event
	for {
		ev, err := rsA.Next(ctx)
		if err != nil {
			t.Fatalf("host A before its network wait: %v (events %s; stderr: %s)", err, eventTypes(evsA), a.Stderr())
		}
		evsA = append(evsA, ev)
		if ev.Type == "provider_waiting_for_network" {
			break
		}
	}
	before, err := os.ReadFile(filepath.Join(dir, "shared.jsonl"))
	if err != nil {
		t.Fatal(err)
	}

	rB := runOn(b, sharedRunReq(fake, ws, dir, "run-b", "shared", "prompt b"))
	if rB.err != nil {
		t.Fatalf("host B: %v (stderr: %s)", rB.err, b.Stderr())
	}
	if err := checkLifecycle(rB.events); err != nil {
		t.Errorf("host B: %v", err)
	}
	if rB.final.Status != "error" || rB.final.Error == nil || rB.final.Error.Code != "session_locked" {
		t.Errorf("host B on a session in use: %+v, want error session_locked", rB.final)
	}
	if types := eventTypes(rB.events); types != "final_result" {
		t.Errorf("host B's events: %s, want the final_result alone (no accepted)", types)
	}
	after, err := os.ReadFile(filepath.Join(dir, "shared.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) || strings.Contains(string(after), "prompt b") {
		t.Errorf("the refused host changed the session file")
	}

	// The provider comes back; A completes on its own.
	if err := fake.Reopen(); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := rsA.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("host A: %v (stderr: %s)", err, a.Stderr())
		}
		evsA = append(evsA, ev)
	}
	if err := checkLifecycle(evsA); err != nil {
		t.Errorf("host A: %v", err)
	}
	finalA, err := rsA.Final()
	if err != nil || finalA.Status != "completed" || finalA.Output != "first answer" {
		t.Fatalf("host A: %+v, %v; want completed with the first answer", finalA, err)
	}
	// A's host releases the lock once the run has wound down, just after
	// final_result and before it reads its next request: when it has
	// answered shutdown, the lock is free (reading the session needs it
	// too) and B resumes the same session.
	if err := a.Shutdown(ctx); err != nil {
		t.Fatalf("host A shutdown: %v", err)
	}
	if got, want := sessionMessages(t, dir, "shared"), []string{"user: prompt a", "assistant: first answer"}; !slices.Equal(got, want) {
		t.Errorf("session after A: %q, want %q", got, want)
	}
	rB = runOn(b, sharedRunReq(fake, ws, dir, "run-b2", "shared", "prompt b"))
	if rB.err != nil || rB.final.Status != "completed" {
		t.Fatalf("host B after A: %+v, %v (stderr: %s)", rB.final, rB.err, b.Stderr())
	}
	// As for A: B's lock is free once B has answered shutdown.
	if err := b.Shutdown(ctx); err != nil {
		t.Fatalf("host B shutdown: %v", err)
	}
	want := []string{"user: prompt a", "assistant: first answer", "user: prompt b", "assistant: second answer"}
	if got := sessionMessages(t, dir, "shared"); !slices.Equal(got, want) {
		t.Errorf("session after B: %q, want %q", got, want)
	}
}
