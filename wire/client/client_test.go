package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/protocol"
)

func ptr[T any](v T) *T { return &v }

func TestRealHostHello(t *testing.T) {
	c := start(t, realConfig(t))
	h := c.Hello()
	if h.ProtocolVersion != 1 || h.MaxFrameBytes != protocol.MaxFrameBytes || h.MaxConcurrentRuns < 1 {
		t.Fatalf("hello = %+v", h)
	}
	if !h.Features.ProcessGroupAbort || h.Features.InBandAbort {
		t.Fatalf("hello features = %+v", h.Features)
	}
	if h.SDKVersion == "" {
		t.Fatal("empty sdk_version")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	assertGroupGone(t, c.pid)
}

func TestRealHostModels(t *testing.T) {
	c := start(t, realConfig(t))
	ctx := testContext(t)
	for _, offline := range []bool{true, false} {
		md, err := c.Models(ctx, offline)
		if err != nil {
			t.Fatalf("Models(offline=%v): %v", offline, err)
		}
		for _, m := range md.Models {
			if m.ID == "" || !contains(m.InputModalities, "text") {
				t.Errorf("model %+v", m)
			}
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestRealHostRun(t *testing.T) {
	c := start(t, realConfig(t))
	ctx := testContext(t)
	st, err := c.Run(ctx, protocol.RunRequest{
		RunID: "run-1", SessionID: ptr("session-1"), Workspace: t.TempDir(),
		Model: "no-such-model", Prompt: "Reply with OK", Tools: &[]string{},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	events, fr, err := st.Wait(ctx)
	if err != nil {
		t.Fatalf("Wait: %v (events %v)", err, events)
	}
	switch fr.Status {
	case protocol.StatusCompleted, protocol.StatusBlocked, protocol.StatusError:
	default:
		t.Fatalf("status %q", fr.Status)
	}
	if fr.Status == protocol.StatusError && fr.Error == nil {
		t.Fatal("status error without error")
	}
	last := events[len(events)-1]
	if !last.Terminal() || last.RunID != "run-1" || last.SessionID != "session-1" || last.Seq != int64(len(events)) {
		t.Fatalf("last event %+v of %d", last, len(events))
	}
	if _, err := st.Next(ctx); err != io.EOF {
		t.Fatalf("Next after the end: %v, want io.EOF", err)
	}
	// The client is idle again.
	if _, err := c.Models(ctx, true); err != nil {
		t.Fatalf("Models after the run: %v", err)
	}
}

// TestRealHostRunAllFields checks that a run with every optional field set
// is well-formed protocol for the host: its strict decoder answers with a
// final_result, not a protocol_error (unknown_field, invalid_field, …).
func TestRealHostRunAllFields(t *testing.T) {
	c := start(t, realConfig(t))
	ctx := testContext(t)
	missing := filepath.Join(t.TempDir(), "missing-workspace")
	req := protocol.RunRequest{
		RunID: "run-all", Workspace: missing, Model: "local-model", Prompt: "Reply with OK",
		SessionID: ptr("s-all"), SessionDir: ptr(t.TempDir()), SystemPrompt: ptr("Be brief."),
		Tools: &[]string{"read"}, AllowFileMutation: ptr(false), DisplayText: ptr("Reply"),
		Media:    []protocol.Media{{Type: "image", Path: filepath.Join(missing, "a.png")}},
		Provider: ptr("local"), BaseURL: ptr("http://127.0.0.1:9/v1"), APIKey: ptr("secret"),
		CustomHeaders: map[string]string{"x-tenant": "t"}, ProviderMode: ptr("openai-compatible"),
		ContextWindowTokens: ptr[int64](32768), MaxOutputTokens: ptr[int64](4096),
		InputModalities: &[]string{"image"}, Vision: ptr(true), SupportsReasoning: ptr(false),
		History:  []protocol.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}},
		MaxSteps: ptr[int64](3), Reasoning: &protocol.Reasoning{Effort: "low"},
	}
	st, err := c.Run(ctx, req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, fr, err := st.Wait(ctx)
	var pe *ProtocolError
	if errors.As(err, &pe) {
		t.Fatalf("the host rejected the request line: %v", pe)
	}
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if fr.Status != protocol.StatusError {
		t.Fatalf("final_result %+v, want an error for the missing workspace", fr)
	}
}

func TestRealHostShutdown(t *testing.T) {
	c := start(t, realConfig(t))
	ctx := testContext(t)
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := c.Models(ctx, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("Models after Shutdown: %v, want ErrClosed", err)
	}
	if err := c.Shutdown(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Shutdown: %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertGroupGone(t, c.pid)
}

func TestRealHostHandshakeRequirements(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"sdk version", func(c *Config) { c.ExpectedSDKVersion = "0.0.0-never" }, "sdk_version"},
		{"unknown feature", func(c *Config) { c.RequireFeatures = []string{"no_such_feature"} }, "features.no_such_feature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := realConfig(t)
			tt.edit(&cfg)
			c, err := Start(testContext(t), cfg)
			var he *HandshakeError
			if !errors.As(err, &he) || he.Field != tt.field {
				t.Fatalf("Start: %v (%T), want *HandshakeError on %s", err, err, tt.field)
			}
			if c != nil {
				t.Fatal("Start returned a client with an error")
			}
			if errors.Is(err, ErrProtocolViolation) {
				t.Fatal("a handshake refusal is not a protocol violation")
			}
		})
	}
	t.Run("accepted", func(t *testing.T) {
		cfg := realConfig(t)
		cfg.RequireFeatures = []string{"process_group_abort"}
		c := start(t, cfg)
		cfg.ExpectedSDKVersion = c.Hello().SDKVersion
		start(t, cfg)
	})
}

func TestStartMissingBinary(t *testing.T) {
	_, err := Start(testContext(t), Config{Path: filepath.Join(t.TempDir(), "no-such-host")})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Start: %v, want a not-exist error", err)
	}
}

func TestStartNotAHost(t *testing.T) {
	t.Run("exits", func(t *testing.T) {
		_, err := Start(testContext(t), Config{Path: "/bin/sh", Args: []string{"-c", "echo 'not a host' >&2; exit 2"}})
		var he *HostExitedError
		if !errors.As(err, &he) || !strings.Contains(he.Stderr, "not a host") {
			t.Fatalf("Start: %v, want *HostExitedError with the stderr tail", err)
		}
	})
	t.Run("prints text", func(t *testing.T) {
		_, err := Start(testContext(t), Config{Path: "/bin/sh", Args: []string{"-c", "echo hello; sleep 60"}})
		var me *MalformedEventError
		if !errors.As(err, &me) || !errors.Is(err, ErrProtocolViolation) {
			t.Fatalf("Start: %v, want *MalformedEventError", err)
		}
	})
}

func TestFakeRunStream(t *testing.T) {
	c := start(t, fakeConfig(t, "ok"))
	if c.Hello().SDKVersion != fakeSDK {
		t.Fatalf("hello %+v", c.Hello())
	}
	ctx := testContext(t)
	st, err := c.Run(ctx, protocol.RunRequest{RunID: "r1", SessionID: ptr("s1"), Workspace: "/w", Model: "m", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Final(); !errors.Is(err, ErrNotDone) {
		t.Fatalf("Final before the end: %v", err)
	}
	var types []string
	var text strings.Builder
	for {
		ev, err := st.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if ev.RunID != "r1" || ev.SessionID != "s1" || ev.RequestID != st.RequestID() {
			t.Fatalf("event %+v", ev)
		}
		types = append(types, string(ev.Type))
		if ch, s, ok := ev.Delta(); ok && ch == "text" {
			text.WriteString(s)
		}
	}
	want := "accepted started model_delta model_delta some_future_event model_delta settled final_result"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("types %q, want %q", got, want)
	}
	if text.String() != "Hello, world." {
		t.Fatalf("text %q", text.String())
	}
	fr, err := st.Final()
	if err != nil || fr.Status != protocol.StatusCompleted || fr.Output != "Hello, world." {
		t.Fatalf("Final: %+v, %v", fr, err)
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestFakeManyEvents checks backpressure: more events than the stream
// buffers, read slowly at first.
func TestFakeManyEvents(t *testing.T) {
	c := start(t, fakeConfig(t, "many-events"))
	ctx := testContext(t)
	st, err := c.Run(ctx, protocol.RunRequest{RunID: "r1", Workspace: "/w", Model: "m", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	events, fr, err := st.Wait(ctx)
	if err != nil || fr == nil || len(events) != 2001 {
		t.Fatalf("Wait: %d events, %+v, %v", len(events), fr, err)
	}
}

func TestFakeBusy(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	c := start(t, fakeConfig(t, "slow-run", gateEnv+"="+gate))
	ctx := testContext(t)
	st, err := c.Run(ctx, protocol.RunRequest{RunID: "r1", Workspace: "/w", Model: "m", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(ctx, true); !errors.Is(err, ErrBusy) {
		t.Fatalf("Models during a run: %v, want ErrBusy", err)
	}
	if _, err := c.Run(ctx, protocol.RunRequest{RunID: "r2", Workspace: "/w", Model: "m", Prompt: "p"}); !errors.Is(err, ErrBusy) {
		t.Fatalf("Run during a run: %v, want ErrBusy", err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, fr, err := st.Wait(ctx); err != nil || fr.Status != protocol.StatusCompleted {
		t.Fatalf("Wait: %+v, %v", fr, err)
	}
	if _, err := c.Models(ctx, true); err != nil {
		t.Fatalf("Models after the run: %v", err)
	}
}

// TestNoRequestWhileALineIsWritten: a host may answer a request before it
// has read the request's line whole. Until that line is written, another
// request gets ErrBusy, so two lines never interleave on the host's stdin.
func TestNoRequestWhileALineIsWritten(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	answered := make(chan struct{})
	var once sync.Once
	cfg := fakeConfig(t, "early-answer", gateEnv+"="+gate)
	cfg.tap = func(out bool, line []byte) {
		if !out && bytes.Contains(line, []byte("answered early")) {
			once.Do(func() { close(answered) })
		}
	}
	c := start(t, cfg)
	ctx := testContext(t)
	type result struct {
		st  *RunStream
		err error
	}
	done := make(chan result, 1)
	go func() {
		// More than a pipe holds: the write blocks until the host reads.
		st, err := c.Run(ctx, protocol.RunRequest{RunID: "r1", Workspace: "/w", Model: "m", Prompt: strings.Repeat("p", 256<<10)})
		done <- result{st, err}
	}()
	select {
	case <-answered:
	case <-ctx.Done():
		t.Fatal("the fake host did not answer early")
	}
	for { // until the reader has ended the call
		c.mu.Lock()
		idle := c.cur == nil
		c.mu.Unlock()
		if idle {
			break
		}
		time.Sleep(time.Millisecond)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.Models(short, true); !errors.Is(err, ErrBusy) {
		t.Fatalf("Models while the run's line is being written: %v, want ErrBusy", err)
	}
	select {
	case r := <-done:
		t.Fatalf("Run returned (%v) before the host read its line", r.err)
	default:
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-done
	err := r.err
	if err == nil {
		_, _, err = r.st.Wait(ctx)
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Message != "answered early" {
		t.Fatalf("the run ended with %v, want the early protocol_error", err)
	}
	if _, err := c.Models(ctx, true); err != nil {
		t.Fatalf("Models once the line was written: %v", err)
	}
}

func TestInvalidRequestsAreNotSent(t *testing.T) {
	c := start(t, fakeConfig(t, "ok"))
	ctx := testContext(t)
	bad := []protocol.RunRequest{
		{RunID: "a/b", Workspace: "/w", Model: "m", Prompt: "p"},
		{RunID: "", Workspace: "/w", Model: "m", Prompt: "p"},
		{RunID: "r", SessionID: ptr(strings.Repeat("s", 129)), Workspace: "/w", Model: "m", Prompt: "p"},
	}
	for _, req := range bad {
		if _, err := c.Run(ctx, req); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("Run(%q, %v): %v, want ErrInvalidRequest", req.RunID, req.SessionID, err)
		}
	}
	big := protocol.RunRequest{RunID: "r", Workspace: "/w", Model: "m", Prompt: strings.Repeat("p", protocol.MaxFrameBytes)}
	if _, err := c.Run(ctx, big); !errors.Is(err, ErrRequestTooLarge) {
		t.Fatalf("oversized Run: %v, want ErrRequestTooLarge", err)
	}
	if _, err := c.Models(ctx, true); err != nil {
		t.Fatalf("Models after refused requests: %v", err)
	}
}

func TestProtocolErrorKeepsClientUsable(t *testing.T) {
	c := start(t, fakeConfig(t, "protocol-error"))
	ctx := testContext(t)
	_, err := c.Models(ctx, true)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != protocol.CodeInvalidField || errors.Is(err, ErrProtocolViolation) {
		t.Fatalf("Models: %v, want *ProtocolError invalid_field", err)
	}
	if _, err := c.Models(ctx, true); err != nil {
		t.Fatalf("second Models: %v", err)
	}
}

func TestNullIDProtocolErrorIsAttributed(t *testing.T) {
	c := start(t, fakeConfig(t, "null-id-protocol-error"))
	_, err := c.Models(testContext(t), true)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != protocol.CodeFrameTooLarge || errors.Is(err, ErrProtocolViolation) {
		t.Fatalf("Models: %v, want *ProtocolError frame_too_large", err)
	}
}

func TestRunProtocolErrorWithoutRunID(t *testing.T) {
	c := start(t, fakeConfig(t, "run-rejected"))
	ctx := testContext(t)
	st, err := c.Run(ctx, protocol.RunRequest{RunID: "r1", Workspace: "/w", Model: "m", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = st.Wait(ctx)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != protocol.CodeUnknownField {
		t.Fatalf("Wait: %v, want *ProtocolError unknown_field", err)
	}
	if _, err := st.Final(); !errors.As(err, &pe) {
		t.Fatalf("Final: %v", err)
	}
	if _, err := c.Models(ctx, true); err != nil {
		t.Fatalf("Models after a rejected run: %v", err)
	}
}

func TestCloseKillsHostIgnoringStdin(t *testing.T) {
	c := start(t, fakeConfig(t, "ignore-eof"))
	child := childPID(t, c)
	if pgid, err := syscall.Getpgid(child); err != nil || pgid != c.pid {
		t.Fatalf("child %d in group %d (%v), want %d", child, pgid, err, c.pid)
	}
	begin := time.Now()
	err := c.Close()
	if !errors.Is(err, ErrKilled) {
		t.Fatalf("Close: %v, want ErrKilled after the grace", err)
	}
	if d := time.Since(begin); d < c.cfg.CloseGrace+c.cfg.TermGrace || d > 4*time.Second {
		t.Fatalf("Close took %v with graces of %v and %v", d, c.cfg.CloseGrace, c.cfg.TermGrace)
	}
	var ee *exec.ExitError
	if err := c.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait: %v, want killed by SIGKILL", err)
	}
	assertGroupGone(t, c.pid)
	if err := c.Close(); !errors.Is(err, ErrKilled) {
		t.Fatalf("second Close: %v, want the same result", err)
	}
	if _, err := c.Models(testContext(t), true); !errors.Is(err, ErrClosed) {
		t.Fatalf("Models after Close: %v, want ErrClosed", err)
	}
}

func TestKill(t *testing.T) {
	c := start(t, fakeConfig(t, "ignore-eof"))
	childPID(t, c)
	if err := c.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if err := c.Wait(); err == nil {
		t.Fatal("Wait: nil after Kill")
	}
	assertGroupGone(t, c.pid)
	if _, err := c.Models(testContext(t), true); !errors.Is(err, ErrKilled) {
		t.Fatalf("Models after Kill: %v, want ErrKilled", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close after Kill: %v", err)
	}
}

func TestContextCancelKillsGroup(t *testing.T) {
	c := start(t, fakeConfig(t, "hang-on-models"))
	childPID(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Models(ctx, true)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Models: %v, want context.DeadlineExceeded", err)
	}
	assertGroupGone(t, c.pid)
	if _, err := c.Models(testContext(t), true); !errors.Is(err, ErrKilled) {
		t.Fatalf("Models after the cancellation: %v, want ErrKilled", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestContextCancelDuringRun(t *testing.T) {
	// The gate is never opened: the run stays in flight.
	gate := gateEnv + "=" + filepath.Join(t.TempDir(), "gate")
	t.Run("Next", func(t *testing.T) {
		c := start(t, fakeConfig(t, "slow-run", gate))
		st, err := c.Run(testContext(t), protocol.RunRequest{RunID: "r1", Workspace: "/w", Model: "m", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := st.Next(testContext(t)); err != nil || ev.Type != "accepted" {
			t.Fatalf("Next: %+v, %v", ev, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := st.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Next: %v, want context.Canceled", err)
		}
		assertGroupGone(t, c.pid)
		if _, err := st.Next(testContext(t)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Next after the cancellation: %v", err)
		}
	})
	t.Run("Run", func(t *testing.T) {
		// The run's own context bounds it even while nobody calls Next.
		c := start(t, fakeConfig(t, "slow-run", gate))
		ctx, cancel := context.WithCancel(context.Background())
		st, err := c.Run(ctx, protocol.RunRequest{RunID: "r1", Workspace: "/w", Model: "m", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		assertGroupGone(t, c.pid)
		_, _, err = st.Wait(testContext(t))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait: %v, want context.Canceled", err)
		}
	})
	t.Run("already canceled", func(t *testing.T) {
		c := start(t, fakeConfig(t, "ok"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Models(ctx, true); !errors.Is(err, context.Canceled) {
			t.Fatalf("Models: %v", err)
		}
		// Nothing was in flight: the host lives on.
		if _, err := c.Models(testContext(t), true); err != nil {
			t.Fatalf("Models: %v", err)
		}
	})
}

func TestHostExit(t *testing.T) {
	c := start(t, fakeConfig(t, "exit-on-models"))
	_, err := c.Models(testContext(t), true)
	var he *HostExitedError
	var ee *exec.ExitError
	if !errors.As(err, &he) || !errors.Is(err, ErrHostExited) || !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Models: %v, want *HostExitedError with status 3", err)
	}
	if !strings.Contains(he.Stderr, "fatal: boom") {
		t.Fatalf("stderr tail %q", he.Stderr)
	}
	if _, err := c.Models(testContext(t), true); !errors.As(err, &he) {
		t.Fatalf("Models after the exit: %v", err)
	}
	if err := c.Close(); !errors.As(err, &ee) {
		t.Fatalf("Close: %v, want the exit error", err)
	}
}

func TestStderrBounded(t *testing.T) {
	for _, limit := range []int{0, 4096} {
		cfg := fakeConfig(t, "stderr-flood")
		cfg.StderrLimit = limit
		c := start(t, cfg)
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		want := limit
		if want == 0 {
			want = DefaultStderrLimit
		}
		s := c.Stderr()
		if len(s) != want {
			t.Fatalf("limit %d: Stderr holds %d bytes, want %d", limit, len(s), want)
		}
		if !strings.HasSuffix(s, "xxxx\nEND-OF-STDERR\n") {
			t.Fatalf("limit %d: Stderr does not end with the tail: …%q", limit, tail(s, 40))
		}
	}
}

func TestHandshakeRejections(t *testing.T) {
	tests := []struct {
		scenario string
		check    func(error) bool
	}{
		{"hello-mismatch", func(err error) bool {
			var e *ProtocolMismatchError
			return errors.As(err, &e) && e.Got == "2" && errors.Is(err, ErrProtocolViolation)
		}},
		{"hello-inband", func(err error) bool {
			var e *HandshakeError
			return errors.As(err, &e) && e.Field == "features.in_band_abort"
		}},
		{"hello-frame", func(err error) bool {
			var e *HandshakeError
			return errors.As(err, &e) && e.Field == "max_frame_bytes"
		}},
		{"hello-commands", func(err error) bool {
			var e *HandshakeError
			return errors.As(err, &e) && e.Field == "commands"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			c, err := Start(testContext(t), fakeConfig(t, tt.scenario))
			if c != nil || !tt.check(err) {
				t.Fatalf("Start: %v (%T)", err, err)
			}
		})
	}
}
