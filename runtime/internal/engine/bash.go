package engine

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/shell"
)

// bashArgs are the bash tool's arguments (CONTRACT §10).
type bashArgs struct {
	Command   string `json:"command"`
	TimeoutMS *int64 `json:"timeout_ms"`
}

// TerminateShells ends every command the agent's runs started: SIGTERM to
// each process group (and to processes that left it), up to grace for them
// to exit, then SIGKILL to survivors (CONTRACT §14). Commands started
// afterwards are refused, and the shell's spare guard is ended. The host
// calls it on HUP, INT, QUIT and TERM.
func (a *Agent) TerminateShells(grace time.Duration) {
	a.shells.TerminateAll(grace)
	shell.ReleaseSpare()
}

// parseBashArgs decodes and checks bash's arguments; the error is the
// message of an invalid_arguments failure.
func parseBashArgs(args []byte) (bashArgs, error) {
	var a bashArgs
	if err := json.Unmarshal(args, &a, json.RejectUnknownMembers(true)); err != nil || a.Command == "" {
		return a, errors.New(`bash takes {"command": string, "timeout_ms"?: integer}`)
	}
	if a.TimeoutMS != nil && *a.TimeoutMS < 1 {
		return a, errors.New("timeout_ms must be at least 1")
	}
	return a, nil
}

// bashTimeout is the command's timeout: the operator's, or the model's
// timeout_ms when shorter. The model may shorten the operator's timeout,
// never extend it. The two are compared in milliseconds, before any
// conversion: the operator's is at most policy.MaxBashTimeoutMS, while the
// model's may be any positive int64 (2^63-1 ms overflows a Duration).
func bashTimeout(operatorMS int64, askedMS *int64) time.Duration {
	ms := operatorMS
	if askedMS != nil && *askedMS < ms {
		ms = *askedMS
	}
	return time.Duration(ms) * time.Millisecond
}

// runBash executes an allowed bash call whose arguments parseBashArgs
// accepted. stream receives progress events; it is called while the
// driver goroutine waits inside shell.Run.
func (d *driver) runBash(ctx context.Context, call ToolCall, args []byte) *protocol.ToolFinish {
	fin := &protocol.ToolFinish{CallID: call.ID, Tool: call.Name}
	a, err := parseBashArgs(args)
	if err != nil {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeInvalidArguments, Message: err.Error()}
		return fin
	}
	pol := d.p.policy
	timeout := bashTimeout(pol.BashTimeoutMS.Value, a.TimeoutMS)
	limit, streamed, noticed := int(pol.MaxOutputBytes.Value), 0, false
	// Progress is bounded like the result: once max_output_bytes have
	// been streamed, one notice replaces the rest.
	progress := func(stream, chunk string) {
		if chunk == "" {
			return
		}
		switch {
		case streamed < limit:
			if len(chunk) > limit-streamed {
				chunk = textutil.Cut(chunk, limit-streamed)
			}
			streamed += len(chunk)
			d.stream(protocol.TypeToolProgress, &protocol.ToolProgress{CallID: call.ID, Tool: call.Name, Stream: stream, Text: chunk})
		case !noticed:
			noticed = true
			d.stream(protocol.TypeToolProgress, &protocol.ToolProgress{CallID: call.ID, Tool: call.Name, Stream: stream,
				Text: "\n[further output is not streamed: max_output_bytes reached; the result keeps its head and tail]\n"})
		}
	}
	// Each output stream is redacted as a stream (redact.go): a
	// credential split across chunks is held back until it is whole.
	reds := map[string]*stream{}
	res, err := shell.Run(ctx, shell.Spec{
		Shell: pol.Shell(), Dir: d.p.req.Workspace, Command: a.Command, Timeout: timeout,
		MaxOutputBytes: int(pol.MaxOutputBytes.Value), Env: childEnv(os.Environ()), Registry: d.a.shells,
		OnOutput: func(st, chunk string) {
			r := reds[st]
			if r == nil {
				r = &stream{r: d.p.red}
				reds[st] = r
			}
			progress(st, r.Push(chunk))
		},
	})
	if shell.Isolation() != shell.IsolationNamespaces {
		fallbackLogged.Do(func() {
			d.a.log.Warn("bash commands run without their own namespaces (process-group fallback): they can see and signal the host's processes",
				"isolation", shell.Isolation(), "reason", shell.FallbackReason())
		})
	}
	for _, st := range slices.Sorted(maps.Keys(reds)) {
		progress(st, reds[st].Flush())
	}
	if err != nil {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeIOError, Message: "the command could not be started"}
		if ctx.Err() != nil {
			fin.Error = &protocol.ErrorData{Code: protocol.CodeCanceled, Message: "the run was canceled"}
		}
		return fin
	}
	fin.Output, fin.Truncated = res.Output, res.Truncated
	code := res.ExitCode
	fin.ExitCode, fin.Signal = &code, res.Signal
	switch {
	case res.TimedOut:
		fin.Error = &protocol.ErrorData{Code: protocol.CodeTimedOut, Message: "the command exceeded its " + timeout.String() + " timeout and was killed"}
	case res.Canceled:
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCanceled, Message: "the run was canceled"}
	case res.Signal != "":
		fin.Error = &protocol.ErrorData{Code: protocol.CodeKilled, Message: "the command was ended by " + res.Signal}
	case res.ExitCode != 0:
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCommandFailed, Message: "exit status " + strconv.Itoa(res.ExitCode)}
	default:
		fin.OK = true
	}
	return fin
}

// fallbackLogged makes the host log once per process that commands run in
// the shell package's fallback (see its documentation, "Isolation").
var fallbackLogged sync.Once

// childEnv is the environment of a command: the host's, without the
// variables that hold credentials, so a command cannot print a key into a
// tool result (CONTRACT §11: keys never appear in events).
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if strings.Contains(up, "API_KEY") || strings.Contains(up, "TOKEN") || strings.Contains(up, "SECRET") || strings.Contains(up, "PASSWORD") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
