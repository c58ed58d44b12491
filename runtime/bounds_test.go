package runtime_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/provider"
)

// fakeRun runs one prompt against fake in mode, with every tool, and
// returns its events and result.
func fakeRun(t *testing.T, fake *fakeprovider.Server, mode fakeprovider.Mode, maxOutput int) ([]runtime.Event, protocol.FinalResult) {
	t.Helper()
	home := t.TempDir()
	agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := agent.Run(context.Background(), runtime.RunRequest{
		RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "p",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "bounds",
		Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(mode), Mode: string(mode),
			MaxOutputTokens: optional(maxOutput)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	return evs, rc.Wait()
}

// An endless stream of text or reasoning ends the step with a
// provider_error once the response produced more than its output limit,
// and the run ends with one final result; what the
// run held of it stays within the limit.
func TestEndlessStreamEndsTheStep(t *testing.T) {
	const maxOutput = 100_000 // a limit of 1.6 MB
	limit := provider.OutputLimit(maxOutput)
	for _, mode := range fakeprovider.Modes() {
		for _, channel := range []string{"text", "reasoning"} {
			t.Run(string(mode)+"/"+channel, func(t *testing.T) {
				fake, err := fakeprovider.New(fakeprovider.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer fake.Close()
				fake.InjectFault(fakeprovider.FaultEndless{Channel: channel})
				evs, res := fakeRun(t, fake, mode, maxOutput)
				if res.Status != "error" || res.Error == nil || res.Error.Code != "provider_error" ||
					!strings.Contains(res.Error.Message, "more than 1600000 bytes") {
					t.Fatalf("result %+v %+v", res, res.Error)
				}
				streamed, retries := 0, 0
				for _, ev := range evs {
					switch d := ev.Data.(type) {
					case *protocol.ModelDelta:
						streamed += len(d.Text)
					case *protocol.ProviderRetry:
						retries++
					}
				}
				if retries != 0 || len(fake.Requests()) != 1 {
					t.Errorf("%d retries, %d requests: an endless stream is not retried", retries, len(fake.Requests()))
				}
				// The step stopped within one event of the limit.
				if streamed < limit-(16<<10) || streamed > limit+(16<<10) || len(res.Output) > limit+(16<<10) {
					t.Errorf("streamed %d bytes, output %d, limit %d", streamed, len(res.Output), limit)
				}
			})
		}
	}
}

// A tool call whose arguments are larger than any frame could carry is
// answered with invalid_arguments and the run goes on:
// the decoder drops the arguments as they arrive, tool_start says so, and
// the next request replays the call with "{}". (Responses is left out: its
// arguments.done event repeats the whole arguments in one event, which the
// event bound refuses first.)
func TestHugeToolArgumentsAreInvalid(t *testing.T) {
	const size = 3 << 20
	for _, mode := range []fakeprovider.Mode{fakeprovider.ModeChat, fakeprovider.ModeAnthropic} {
		t.Run(string(mode), func(t *testing.T) {
			huge := `{"path":"` + strings.Repeat("a", size-11) + `"}`
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{ToolCalls: []fakeprovider.ToolCall{{ID: "call_big", Name: "read", Arguments: huge}}, Chunk: 32 << 10},
				{Text: "done"},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			evs, res := fakeRun(t, fake, mode, 0)
			if res.Status != "completed" || res.Output != "done" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			var start *protocol.ToolStart
			var fin *protocol.ToolFinish
			for _, ev := range evs {
				switch d := ev.Data.(type) {
				case *protocol.ToolStart:
					start = d
				case *protocol.ToolFinish:
					fin = d
				}
			}
			if start == nil || !strings.Contains(string(start.Arguments), "3145728 bytes") || len(start.Arguments) > 1024 {
				t.Fatalf("tool_start %+v", start)
			}
			if fin == nil || fin.OK || fin.Error == nil || fin.Error.Code != "invalid_arguments" || !strings.Contains(fin.Error.Message, "3145728 bytes") {
				t.Fatalf("tool_finish %+v", fin)
			}
			reqs := fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			next := reqs[1].Body["messages"]
			raw := strings.Join(strings.Fields(fmtJSON(next)), "")
			if strings.Contains(raw, "aaaa") || !strings.Contains(raw, "invalid_arguments") {
				t.Errorf("the next request does not replay the call without its arguments: %.400s", raw)
			}
		})
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// optional returns nil for 0 (the route's default) and &n otherwise.
func optional(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
