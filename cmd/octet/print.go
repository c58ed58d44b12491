package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// runPrint runs one prompt: the answer (the final_result's output of a
// completed run) goes to out, everything else to the reporter. It returns
// the exit status.
func runPrint(ctx context.Context, agent *runtime.Agent, cfg *config, prompt string, out io.Writer, rep *reporter) int {
	sid := cfg.session
	if sid == "" {
		sid = runtime.NewSessionID()
	}
	rep.sessionID = sid
	rc, err := agent.Run(ctx, cfg.request(runtime.NewSessionID(), sid, prompt))
	if err != nil {
		var re *runtime.RunError
		if errors.As(err, &re) {
			fmt.Fprintf(os.Stderr, "octet: the run was refused: %s: %s\n", re.Code, oneLine(re.Message))
		} else {
			fmt.Fprintf(os.Stderr, "octet: the run was refused: %v\n", err)
		}
		return exitError
	}
	for ev := range rc.Events() {
		rep.event(ev)
	}
	res := rc.Wait() // the session is closed
	rep.finish(res)
	switch res.Status {
	case protocol.StatusCompleted:
		answer := res.Output
		if !strings.HasSuffix(answer, "\n") {
			answer += "\n"
		}
		if _, err := io.WriteString(out, answer); err != nil {
			fmt.Fprintf(os.Stderr, "octet: writing the answer: %v\n", err)
			return exitError
		}
		return exitCompleted
	case protocol.StatusBlocked:
		return exitBlocked
	default:
		return exitError
	}
}
