package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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
