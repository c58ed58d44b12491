package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/wire/client"
)

// This example starts octet-host, runs one prompt while printing the
// model's text as it streams, and shuts the host down. It needs an
// octet-host binary in PATH, so it is compiled but not run.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	c, err := client.Start(ctx, client.Config{
		Path:            "octet-host",
		RequireFeatures: []string{"streaming"},
	})
	if err != nil {
		log.Fatal(err) // includes *client.HandshakeError for an unsuitable host
	}
	defer c.Close() // kills the process group if the host lingers

	sessionID := "customer-42"
	st, err := c.Run(ctx, protocol.RunRequest{
		RunID:     "run-1",
		SessionID: &sessionID,
		Workspace: "/srv/workspace",
		Model:     "gpt-5.6",
		Prompt:    "Summarize MEMORY.md",
		Tools:     &[]string{"read"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for {
		ev, err := st.Next(ctx) // canceling ctx kills the host's process group
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatalf("run failed: %v (host stderr: %s)", err, c.Stderr())
		}
		if channel, text, ok := ev.Delta(); ok && channel == "text" {
			fmt.Print(text)
		}
	}
	final, _ := st.Final()
	fmt.Println("\nstatus:", final.Status, "steps:", final.Steps)

	if err := c.Shutdown(ctx); err != nil {
		log.Print(err)
	}
}
