package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	rtdebug "runtime/debug"
	"strings"
	"syscall"
	"time"

	octethost "octet.dev/host"

	"octet.dev/host/internal/operator"
	"octet.dev/host/runtime"
	"octet.dev/host/spec/schema"
)

func main() { os.Exit(run(os.Args[1:])) }

// Exit statuses of print mode (RPC mode exits 0 at end of input, 1 when
// its output fails, 2 on a usage error; both exit 128+n on signal n).
const (
	exitCompleted = 0
	exitError     = 1
	exitUsage     = 2
	exitBlocked   = 3
)

// After a signal, shell process groups get shellGrace between SIGTERM and
// SIGKILL, and runs then get cleanupGrace to record their end (as in
// octet-host, CONTRACT §14).
const (
	shellGrace   = 2 * time.Second
	cleanupGrace = 3 * time.Second
)

// config is what the command line asks for, shared by both modes.
type config struct {
	model     string
	workspace string
	session   string // "" starts a new session
	tools     []string
	toolsSet  bool
	maxSteps  *int
	mutation  bool
	route     *runtime.InlineRoute
}

// request builds a run of prompt on session sid.
func (c *config) request(runID, sid, prompt string) runtime.RunRequest {
	req := runtime.RunRequest{RunID: runID, Workspace: c.workspace, Model: c.model, Prompt: prompt, SessionID: sid,
		AllowFileMutation: c.mutation, MaxSteps: c.maxSteps}
	if c.toolsSet {
		req.Tools = append([]string{}, c.tools...)
	}
	if c.route != nil {
		rt := *c.route
		req.Route = &rt
	}
	return req
}

func usageErr(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "octet: "+format+" (see --help)\n", args...)
	return exitUsage
}

func run(args []string) int {
	fs := flag.NewFlagSet("octet", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	prompt := fs.String("p", "", "print mode: run `PROMPT` and print the answer (\"-\" reads the prompt from stdin)")
	mode := fs.String("mode", "print", "`print` (with -p) or rpc (JSON commands on stdin, JSON lines on stdout)")
	model := fs.String("model", "", "the model: a catalog id, or the model name of an inline route (--base-url)")
	workspace := fs.String("workspace", "", "the workspace directory (default: the current directory)")
	session := fs.String("session", "", "resume (or create) the session `ID`; default: a new session")
	tools := fs.String("tools", "", "comma-separated tools to register (default: all; \"\" for none)")
	maxSteps := fs.Int("max-steps", 0, "bound on model calls per run, 1..1000 (default 50); a run that reaches it ends blocked")
	mutation := fs.Bool("allow-file-mutation", false, "pre-authorize the edit and write tools for the run (source host_request)")
	baseURL := fs.String("base-url", "", "inline route: the provider's base URL (the model is then --model on that route)")
	provider := fs.String("provider", "", "inline route: the provider name (default: derived by the runtime)")
	providerMode := fs.String("provider-mode", "", "inline route: openai-compatible (default), openai-responses or anthropic-messages")
	apiKeyEnv := fs.String("api-key-env", "", "inline route: the environment variable `NAME` holding the API key")
	logLevel := fs.String("log-level", "warn", "runtime diagnostics on stderr: debug, info, warn, error, disabled")
	showVersion := fs.Bool("version", false, "print the version and exit")
	login := fs.String("login", "", "log in to `PROVIDER` (see docs/copilot-and-codex.md) and exit")
	logout := fs.String("logout", "", "delete the local credential of `PROVIDER` and exit")
	headless := fs.Bool("headless", false, "with --login: never open a browser; print the instructions to stderr")
	showSchema := fs.Bool("schema", false, "with --mode rpc: print the JSON Schema (draft 2020-12) of the RPC mode's lines and exit")
	showDocs := fs.Bool("docs", false, "write the embedded documentation to ${XDG_DATA_HOME:-$HOME/.local/share}/octet/docs/ if needed, print that folder and exit")
	op := operator.Register(fs)
	fs.Usage = func() {
		fmt.Fprint(os.Stderr, usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitCompleted
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if *showVersion {
		fmt.Fprintf(os.Stdout, "octet %s\n", versionString())
		return exitCompleted
	}
	if *showDocs {
		// The same documentation, in the same folder, as octet-host --docs.
		agent, err := runtime.New(runtime.Options{Docs: octethost.Docs, Version: versionString()})
		if err == nil {
			var dir string
			if dir, err = agent.DocsDir(); err == nil {
				fmt.Fprintln(os.Stdout, dir)
				return exitCompleted
			}
		}
		fmt.Fprintf(os.Stderr, "octet: %v\n", err)
		return exitError
	}
	if set["login"] || set["logout"] {
		return runLogin(*login, *logout, set, *headless)
	}
	if set["headless"] {
		return usageErr("--headless goes with --login")
	}
	if set["schema"] && *mode != "rpc" {
		return usageErr("--schema goes with --mode rpc")
	}

	var cfg config
	switch *mode {
	case "print":
		if !set["p"] {
			return usageErr("nothing to do: give -p PROMPT, or --mode rpc")
		}
	case "rpc":
		if set["p"] {
			return usageErr("-p is for print mode; in RPC mode prompts come as commands on stdin")
		}
		if *showSchema {
			if _, err := os.Stdout.Write(schema.RPCJSON()); err != nil {
				fmt.Fprintf(os.Stderr, "octet: writing the schema: %v\n", err)
				return exitError
			}
			return exitCompleted
		}
	default:
		return usageErr("--mode must be print or rpc, not %q", *mode)
	}
	if *model == "" {
		return usageErr("--model is required")
	}
	cfg.model = *model
	ws := *workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(os.Stderr, "octet: no current directory for the workspace: %v\n", err)
			return exitError
		}
		ws = wd
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return usageErr("--workspace %q: %v", ws, err)
	}
	cfg.workspace = abs
	cfg.session = *session
	if set["session"] && *session == "" {
		return usageErr("--session needs an ID")
	}
	if set["tools"] {
		cfg.toolsSet = true
		cfg.tools = []string{}
		for t := range strings.SplitSeq(*tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				cfg.tools = append(cfg.tools, t)
			}
		}
	}
	if set["max-steps"] {
		if *maxSteps < 1 || *maxSteps > runtime.MaxMaxSteps {
			return usageErr("--max-steps must be 1..%d", runtime.MaxMaxSteps)
		}
		cfg.maxSteps = new(*maxSteps)
	}
	cfg.mutation = *mutation
	if set["base-url"] || set["provider"] || set["provider-mode"] || set["api-key-env"] {
		// Any route flag makes an inline route, so that one given without
		// --base-url is refused (route_invalid) rather than ignored.
		cfg.route = &runtime.InlineRoute{BaseURL: *baseURL, Provider: *provider, Mode: *providerMode}
		if set["api-key-env"] {
			key := os.Getenv(*apiKeyEnv)
			if *apiKeyEnv == "" || key == "" {
				return usageErr("--api-key-env names %q, which is unset or empty", *apiKeyEnv)
			}
			cfg.route.APIKey = key
		}
	}

	level, ok := logLevels[*logLevel]
	if !ok {
		return usageErr("invalid --log-level %q", *logLevel)
	}
	opts, err := op.Options(os.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	// Runs offer the octet-docs skill, as the host's do.
	opts.Docs, opts.Version = octethost.Docs, versionString()
	if *logLevel == "disabled" {
		opts.Logger = nil
	}
	agent, err := runtime.New(opts)
	if err != nil {
		return usageErr("%v", err)
	}

	var stdin io.Reader = os.Stdin
	var text string
	if *mode == "print" {
		text = *prompt
		if text == "-" {
			b, err := io.ReadAll(io.LimitReader(stdin, runtime.MaxPromptBytes+1))
			if err != nil {
				fmt.Fprintf(os.Stderr, "octet: reading the prompt from stdin: %v\n", err)
				return exitError
			}
			if len(b) > runtime.MaxPromptBytes {
				return usageErr("the prompt on stdin exceeds %d bytes", runtime.MaxPromptBytes)
			}
			text = strings.TrimRight(string(b), "\n")
		}
		if strings.TrimSpace(text) == "" {
			return usageErr("the prompt is empty")
		}
	}

	// As octet-host: non-dumpable, and the answer's stream reserved so that
	// no stray write (a library, a child process) can reach it.
	if err := operator.NonDumpable(); err != nil {
		fmt.Fprintf(os.Stderr, "octet: %v\n", err)
		return exitError
	}
	out, err := operator.ReserveStdout()
	if err != nil {
		fmt.Fprintf(os.Stderr, "octet: cannot reserve stdout: %v\n", err)
		return exitError
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM)
	// A closed stdout or stderr must be a write error, never death.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	done := make(chan int, 1)
	var rpc *rpcServer
	if *mode == "print" {
		go func() { done <- runPrint(ctx, agent, &cfg, text, out, newReporter(os.Stderr, isTerminal(os.Stderr))) }()
	} else {
		rpc = newRPCServer(agent, &cfg, out)
		go func() { done <- rpc.serve(ctx, stdin) }()
	}
	select {
	case code := <-done:
		return code
	case sig := <-sigs:
		// Abort the run, give shell process groups their grace, let the
		// run record its end in the session (closing it), then exit
		// 128 + the signal.
		n := int(sig.(syscall.Signal))
		cancel()
		deadline := time.Now().Add(cleanupGrace)
		agent.TerminateShells(shellGrace)
		if !agent.WaitRuns(time.Until(deadline)) {
			fmt.Fprintln(os.Stderr, "octet: the run did not end within the cleanup grace")
		}
		if rpc != nil {
			rpc.waitForwarded(time.Until(deadline)) // its final_result is written
		} else {
			select {
			case <-done:
			case <-time.After(time.Until(deadline)):
			}
		}
		fmt.Fprintf(os.Stderr, "octet: stopped by %s\n", sig)
		return 128 + n
	}
}

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
	"disabled": slog.LevelError + 100,
}

// versionString is the -X main.version a release build stamps in
// (scripts/release), else the main module's version as the go command
// recorded it.
func versionString() string {
	if version != "" {
		return version
	}
	if info, ok := rtdebug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return strings.TrimPrefix(info.Main.Version, "v")
	}
	return "(devel)"
}

var version string

const usageText = `octet — a coding agent in the terminal, sharing octet-host's runtime.

Usage:
  octet -p PROMPT --model MODEL [flags]     run one prompt; the answer goes to stdout
  octet -p - --model MODEL [flags]          read the prompt from stdin
  octet --mode rpc --model MODEL [flags]    JSON commands on stdin, JSON lines on stdout
  octet --mode rpc --schema                 print the JSON Schema of the RPC mode's lines
  octet --login PROVIDER [--headless]       log in, then exit
  octet --logout PROVIDER                   delete the local credential, then exit

Print mode exits 0 when the run completed, 1 on an error, 2 on a usage
error, 3 when the run was blocked (for example by --max-steps), and 128+n
when stopped by signal n (the run is canceled and its session closed
first). Progress and diagnostics go to stderr.

Tools run under the operator's policy, as in octet-host: no file mutation
and no shell unless allowed (--allow-file-mutation; --allow-shell with
--allow-process; OCTET_* variables; ~/.octet/settings.json).

Flags:
`
