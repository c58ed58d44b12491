package client_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/wire/client"
)

// This example runs a real octet-host (the binary the tests build) against
// a scripted OpenAI-compatible provider on loopback: the model reads a
// file, then answers. Each event is decoded into its protocol payload and
// handled in a type switch.
func ExampleEvent_Decode() {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"NOTES.md"}`}}},
		{Text: "The notes say: ship on Friday."},
	}}})
	if err != nil {
		panic(err)
	}
	defer fake.Close()
	home, err := os.MkdirTemp("", "octet-client-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	workspace := filepath.Join(home, "project")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, "NOTES.md"), []byte("ship on Friday\n"), 0o644); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Start(ctx, client.Config{
		Path: client.HostBinaryForExamples(), // in an application: "octet-host"
		Env:  append(os.Environ(), "HOME="+home),
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	provider, baseURL, sessionDir := "local", fake.BaseURL(fakeprovider.ModeChat), filepath.Join(home, "sessions")
	st, err := c.Run(ctx, protocol.RunRequest{
		RunID: "run-1", Workspace: workspace, Model: "local-model", Prompt: "What do the notes say?",
		Tools: &[]string{"read"}, Provider: &provider, BaseURL: &baseURL, SessionDir: &sessionDir,
	})
	if err != nil {
		panic(err)
	}
	var answer strings.Builder
	for {
		ev, err := st.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		data, err := ev.Decode()
		if err != nil {
			panic(err) // an unknown type (a newer host) or malformed data
		}
		switch d := data.(type) {
		case *protocol.Accepted:
			fmt.Println("accepted:", d.Model.Provider, d.Tools, "edit allowed:", d.EffectiveToolPolicy.AllowEdit.Value)
		case *protocol.ToolStart:
			fmt.Println("tool_start:", d.Tool, string(d.Arguments))
		case *protocol.ToolPolicy:
			fmt.Println("tool_policy:", d.Decision.Effect, d.Decision.Allowed, d.Decision.Authorization)
		case *protocol.ToolFinish:
			fmt.Printf("tool_finish: ok=%v output=%q\n", d.OK, d.Output)
		case *protocol.ModelDelta:
			if d.Channel == protocol.ChannelText {
				answer.WriteString(d.Text)
			}
		case *protocol.ModelStep:
			fmt.Println("model_step:", d.Step)
		case *protocol.Settled:
			fmt.Println("settled:", d.Status)
		case *protocol.FinalResult:
			fmt.Println("final_result:", d.Status, d.Steps, "steps", d.ToolCalls, "tool call")
		}
	}
	fmt.Println("answer:", answer.String())
	if err := c.Shutdown(ctx); err != nil {
		panic(err)
	}
	// Output:
	// accepted: local [read] edit allowed: false
	// model_step: 1
	// tool_start: read {"path":"NOTES.md"}
	// tool_policy: workspace_read true controlled_read
	// tool_finish: ok=true output="     1\tship on Friday"
	// model_step: 2
	// settled: completed
	// final_result: completed 2 steps 1 tool call
	// answer: The notes say: ship on Friday.
}
