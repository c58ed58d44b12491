package runtime_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// Example embeds the runtime in a Go application: one run against an
// OpenAI-compatible route (here the fake provider on loopback), its events
// read in order, then its result.
func Example() {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"NOTES.md"}`}}},
		{Text: "The notes say: ship on Friday."},
	}}})
	if err != nil {
		panic(err)
	}
	defer fake.Close()
	home, _ := os.MkdirTemp("", "octet-example")
	defer os.RemoveAll(home)
	workspace := filepath.Join(home, "project")
	os.MkdirAll(workspace, 0o755)
	os.WriteFile(filepath.Join(workspace, "NOTES.md"), []byte("ship on Friday\n"), 0o644)

	agent, err := runtime.New(runtime.Options{Home: home})
	if err != nil {
		panic(err)
	}
	agent.SetMaxRetries(2)
	rc, err := agent.Run(context.Background(), runtime.RunRequest{
		RunID: "run-1", Workspace: workspace, Model: "local-model", Prompt: "What do the notes say?",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "notes",
		Route: &runtime.InlineRoute{Provider: "local", BaseURL: fake.BaseURL(fakeprovider.ModeChat)},
	})
	if err != nil {
		panic(err) // a *runtime.RunError: the request was refused, nothing ran
	}
	for ev := range rc.Events() {
		switch d := ev.Data.(type) {
		case *protocol.ToolStart:
			fmt.Println("tool:", d.Tool)
		case *protocol.ModelDelta:
			fmt.Print(d.Text)
		}
	}
	res := rc.Wait()
	fmt.Println()
	fmt.Println(res.Status, res.Steps, "steps", res.ToolCalls, "tool call")
	// Output:
	// tool: read
	// The notes say: ship on Friday.
	// completed 2 steps 1 tool call
}

// ExampleOptions_logger gives the runtime a log/slog logger. At
// runtime.LevelTrace it logs every state machine transition of a run; this
// handler names that level TRACE and drops the time, and the example
// prints the run machine's lines up to the machine's states before and
// after (from_state, to_state: JSON, for fsm/tracecheck).
func ExampleOptions_logger() {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "hi"}}}})
	if err != nil {
		panic(err)
	}
	defer fake.Close()
	home, _ := os.MkdirTemp("", "octet-example")
	defer os.RemoveAll(home)

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
		Level: runtime.LevelTrace,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			switch {
			case len(groups) == 0 && a.Key == slog.TimeKey:
				return slog.Attr{}
			case len(groups) == 0 && a.Key == slog.LevelKey && a.Value.Any() == runtime.LevelTrace:
				return slog.String(slog.LevelKey, "TRACE")
			}
			return a
		},
	}))
	agent, err := runtime.New(runtime.Options{Home: home, Logger: logger})
	if err != nil {
		panic(err)
	}
	rc, err := agent.Run(context.Background(), runtime.RunRequest{
		RunID: "run-1", Workspace: home, Model: "local-model", Prompt: "Say hi.",
		SessionDir: filepath.Join(home, "sessions"),
		Route:      &runtime.InlineRoute{Provider: "local", BaseURL: fake.BaseURL(fakeprovider.ModeChat)},
	})
	if err != nil {
		panic(err)
	}
	for range rc.Events() {
	}
	rc.Wait()
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "machine=run ") {
			line, _, _ = strings.Cut(line, " from_state=")
			fmt.Println(line)
		}
	}
	// Output:
	// level=TRACE msg="state machine transition" run_id=run-1 machine=run trigger=accept from=received to=accepted
	// level=TRACE msg="state machine transition" run_id=run-1 machine=run trigger=start from=accepted to=started
	// level=TRACE msg="state machine transition" run_id=run-1 machine=run trigger=stream from=started to=streaming
	// level=TRACE msg="state machine transition" run_id=run-1 machine=run trigger=stream from=streaming to=streaming
	// level=TRACE msg="state machine transition" run_id=run-1 machine=run trigger=settle from=streaming to=settled
	// level=TRACE msg="state machine transition" run_id=run-1 machine=run trigger=finalize from=settled to=final
}
