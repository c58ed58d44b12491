package runtime_test

import (
	"context"
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestAbandonWithIsRecorded: a consumer that abandons a run's events says
// why (AbandonWith); the run ends with status error and that code, in its
// result and in its session's run_end, whether it abandons mid-run or
// after the final_result (ConfirmDelivery: the run holds its session until
// Wait or AbandonWith). Without a reason, and without ConfirmDelivery after
// the end, nothing is rewritten.
func TestAbandonWithIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		confirm bool
		at      protocol.EventType // the event type the consumer abandons at
		code    protocol.Code
		want    runtime.RunEnd
	}{
		{"mid-run", true, protocol.TypeModelDelta, protocol.CodeOutputTooLarge, runtime.RunEnd{RunID: "run-1", Status: "error", Code: protocol.CodeOutputTooLarge}},
		{"the final_result", true, protocol.TypeFinalResult, protocol.CodeOutputFailed, runtime.RunEnd{RunID: "run-1", Status: "error", Code: protocol.CodeOutputFailed}},
		{"the final_result, unconfirmed", false, protocol.TypeFinalResult, protocol.CodeOutputFailed, runtime.RunEnd{RunID: "run-1", Status: "completed"}},
		{"without a reason", true, protocol.TypeFinalResult, "", runtime.RunEnd{RunID: "run-1", Status: "completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "one two three four five six seven", Chunk: 4}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			home := t.TempDir()
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, "sessions")
			rc, err := agent.Run(context.Background(), runtime.RunRequest{
				RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "p", Tools: []string{},
				SessionDir: dir, SessionID: "s", ConfirmDelivery: tc.confirm,
				Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeChat)},
			})
			if err != nil {
				t.Fatal(err)
			}
			abandoned := false
			for ev := range rc.Events() {
				if ev.Type == tc.at && !abandoned {
					abandoned = true
					rc.AbandonWith(tc.code, "the consumer could not deliver "+string(ev.Type))
				}
			}
			res := rc.Wait()
			if res.Status != tc.want.Status || (tc.want.Code != "") != (res.Error != nil) || (res.Error != nil && res.Error.Code != tc.want.Code) {
				t.Errorf("result %+v %+v, want %+v", res, res.Error, tc.want)
			}
			s, err := agent.OpenSession(dir, "s")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.RunEnds(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("session run ends %+v, want %+v", got, tc.want)
			}
		})
	}
}
