package client

import (
	"context"
	"errors"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/wire"
)

// TestViolations drives fake hosts that break the protocol after a valid
// hello. Each violation must be typed, wrap ErrProtocolViolation, kill the
// host's process group and poison the client.
func TestViolations(t *testing.T) {
	models := func(ctx context.Context, c *Client) error {
		_, err := c.Models(ctx, true)
		return err
	}
	run := func(ctx context.Context, c *Client) error {
		st, err := c.Run(ctx, protocol.RunRequest{RunID: "run-1", SessionID: ptr("session-1"), Workspace: "/w", Model: "m", Prompt: "p"})
		if err != nil {
			return err
		}
		_, _, err = st.Wait(ctx)
		return err
	}
	// modelsTwice succeeds on the first terminal event; the late second
	// one poisons the client, so the next request fails.
	modelsTwice := func(ctx context.Context, c *Client) error {
		if _, err := c.Models(ctx, true); err != nil {
			return errors.New("first Models failed: " + err.Error())
		}
		_, err := c.Models(ctx, true)
		return err
	}
	is := func(target any) func(error) bool {
		return func(err error) bool { return errors.As(err, target) }
	}
	tests := []struct {
		scenario string
		do       func(context.Context, *Client) error
		check    func(error) bool
	}{
		{"models-mismatch", models, func(err error) bool {
			var e *ProtocolMismatchError
			return errors.As(err, &e) && e.Got == `"1"`
		}},
		{"unknown-id", models, func(err error) bool {
			var e *UnknownRequestError
			return errors.As(err, &e) && e.RequestID == "someone-else" && e.InFlight != ""
		}},
		{"null-id", models, func(err error) bool {
			var e *UnknownRequestError
			return errors.As(err, &e) && e.RequestID == ""
		}},
		{"seq-start", models, func(err error) bool {
			var e *SeqGapError
			return errors.As(err, &e) && e.Want == 1 && e.Got == 2
		}},
		{"seq-gap", run, func(err error) bool {
			var e *SeqGapError
			return errors.As(err, &e) && e.Want == 2 && e.Got == 3
		}},
		{"second-terminal", modelsTwice, func(err error) bool {
			var e *SecondTerminalError
			return errors.As(err, &e) && e.Type == "models"
		}},
		{"wrong-terminal", models, is(new(*UnexpectedEventError))},
		{"run-id", run, func(err error) bool {
			var e *RunIDMismatchError
			return errors.As(err, &e) && e.Want == "run-1" && e.Got == "another-run"
		}},
		{"run-id-missing", run, func(err error) bool {
			var e *RunIDMismatchError
			return errors.As(err, &e) && e.Got == ""
		}},
		{"session-id", run, func(err error) bool {
			var e *SessionIDMismatchError
			return errors.As(err, &e) && e.Want == "session-1" && e.Got == "another-session"
		}},
		{"oversized", models, func(err error) bool {
			var e *MalformedEventError
			return errors.As(err, &e) && errors.Is(err, wire.ErrFrameTooLarge)
		}},
		{"non-json", models, is(new(*MalformedEventError))},
		{"not-object", models, is(new(*MalformedEventError))},
		{"duplicate-member", models, is(new(*MalformedEventError))},
		{"bad-models-data", models, is(new(*MalformedEventError))},
		{"bad-status", run, is(new(*MalformedEventError))},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			t.Parallel()
			c := start(t, fakeConfig(t, tt.scenario))
			ctx := testContext(t)
			err := tt.do(ctx, c)
			if !errors.Is(err, ErrProtocolViolation) || !tt.check(err) {
				t.Fatalf("got %v (%T)", err, err)
			}
			assertGroupGone(t, c.pid)
			// Poisoned: every later call fails with the same violation.
			_, again := c.Models(ctx, true)
			if !tt.check(again) {
				t.Fatalf("later Models: %v, want the violation again", again)
			}
			if _, err := c.Run(ctx, protocol.RunRequest{RunID: "r2", Workspace: "/w", Model: "m", Prompt: "p"}); !tt.check(err) {
				t.Fatalf("later Run: %v, want the violation again", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close after a violation: %v", err)
			}
		})
	}
}
