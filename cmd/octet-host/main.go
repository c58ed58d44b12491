package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	octethost "octet.dev/host"
	"octet.dev/host/cmd/octet-host/internal/earlysig"
	"octet.dev/host/internal/host"
	"octet.dev/host/internal/operator"
	"octet.dev/host/runtime"
	"octet.dev/host/spec/schema"
)

func main() { os.Exit(run(os.Args[1:])) }

// afterReserve is a test hook (set by the straytest build tag) run once the
// protocol stdout is reserved.
var afterReserve func()

// After a signal, shell process groups get shellGrace between SIGTERM and
// SIGKILL, and runs then get cleanupGrace to record their end.
const (
	shellGrace   = 2 * time.Second
	cleanupGrace = 3 * time.Second
)

func run(args []string) int {
	// The signal handlers are being installed since package
	// initialisation (earlysig); Serve answers no request before they are
	// in place.
	earlysig.Start()
	sigs, handled := earlysig.Signals(), earlysig.Ready()
	fs := flag.NewFlagSet("octet-host", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	showVersion := fs.Bool("version", false, "print the version and exit")
	showSchema := fs.Bool("schema", false, "print the JSON Schema (draft 2020-12) of protocol 1's requests and events and exit")
	logLevel := fs.String("log-level", "info", "stderr log level: trace, debug, info, warn, error, disabled")
	op := operator.Register(fs)
	showDocs := fs.Bool("docs", false, "write the embedded documentation to ${XDG_DATA_HOME:-$HOME/.local/share}/octet/docs/ if needed, print that folder and exit")
	fs.Usage = func() {
		fmt.Fprint(os.Stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "octet-host: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	if *showVersion {
		// --version is not a protocol session: it is the one output to stdout.
		fmt.Fprintf(os.Stdout, "octet-host %s (native-host protocol 1)\n", sdkVersion())
		return 0
	}
	if *showSchema {
		// Like --version: not a protocol session, the one output to stdout.
		if _, err := os.Stdout.Write(schema.JSON()); err != nil {
			fmt.Fprintf(os.Stderr, "octet-host: writing the schema: %v\n", err)
			return 1
		}
		return 0
	}
	if *showDocs {
		// Like --version, not a protocol session: the path is the output.
		agent, err := runtime.New(runtime.Options{Docs: octethost.Docs, Version: sdkVersion()})
		if err == nil {
			var dir string
			if dir, err = agent.DocsDir(); err == nil {
				fmt.Fprintln(os.Stdout, dir)
				return 0
			}
		}
		fmt.Fprintf(os.Stderr, "octet-host: %v\n", err)
		return 1
	}
	lvl, err := zerolog.ParseLevel(*logLevel)
	if err != nil || *logLevel == "" {
		fmt.Fprintf(os.Stderr, "octet-host: invalid --log-level %q\n", *logLevel)
		return 2
	}

	// Non-dumpable from the start: the host's /proc entries (environ, fd)
	// are closed to the processes its tools start (see docs/operations.md,
	// "Commands cannot reach the host"). The shell tool sets it again
	// before its first command, for embedders.
	if err := operator.NonDumpable(); err != nil {
		fmt.Fprintf(os.Stderr, "octet-host: %v\n", err)
		return 1
	}
	proto, err := operator.ReserveStdout()
	if err != nil {
		fmt.Fprintf(os.Stderr, "octet-host: cannot reserve stdout for the protocol: %v\n", err)
		return 1
	}
	log := zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Str("component", "octet-host").Logger()
	// The runtime and the NDJSON adapter log to slog; their records reach
	// the same zerolog logger, so stderr keeps one format.
	slogger := slog.New(newZerologHandler(log))

	// The operator's layers (environment, CLI flags) and settings, as
	// octet has them too.
	opts, err := op.Options(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "octet-host: %v\n", err)
		return 2
	}
	opts.Logger, opts.Docs, opts.Version = slogger, octethost.Docs, sdkVersion()
	agent, err := runtime.New(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "octet-host: %v\n", err)
		return 2
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if afterReserve != nil {
		<-handled
		afterReserve()
	}

	h := host.New(host.Config{In: os.Stdin, Out: proto, Agent: agent, Log: slogger, Version: sdkVersion(), Ready: handled})
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()

	select {
	case err := <-done:
		if err != nil {
			agent.TerminateShells(shellGrace) // a broken stdout leaves nothing behind
		}
		return exitCode(log, err)
	case sig := <-sigs:
		// CONTRACT §14: abort active work, give the registered shell
		// process groups a bounded cleanup time, force-kill survivors
		// (also children that left their group), let the run record its
		// end in the session, and exit with 128 + the signal.
		n := int(sig.(syscall.Signal))
		log.Warn().Str("signal", sig.String()).Msg("signal received; aborting active work")
		cancel()
		deadline := time.Now().Add(cleanupGrace)
		agent.TerminateShells(shellGrace)
		if !agent.WaitRuns(time.Until(deadline)) {
			log.Error().Msg("a run did not end within the cleanup grace")
		}
		if h.Busy() {
			// The run has ended; let Serve write what it still holds,
			// its final_result last, so the caller sees how it ended.
			select {
			case <-done:
			case <-time.After(time.Until(deadline)):
				log.Error().Msg("the last events were not written within the cleanup grace")
			}
		}
		return 128 + n
	}
}

func exitCode(log zerolog.Logger, err error) int {
	if err == nil {
		return 0
	}
	var ee *host.ExitError
	if errors.As(err, &ee) {
		log.Error().Err(ee.Err).Int("exit", ee.Code).Msg("octet-host exiting")
		return ee.Code
	}
	log.Error().Err(err).Msg("octet-host exiting")
	return 1
}

const usage = `octet-host — a headless coding-agent host speaking native-host protocol 1.

Launch it as a subprocess in its own process group and exchange UTF-8 NDJSON
on stdin/stdout: one request object per line in, one event object per line
out. Logs and diagnostics go to stderr. Stop it by closing stdin, by sending
{"command":"shutdown"}, or by signalling its process group.

Usage:
  octet-host [flags]
  octet-host --schema   print the protocol's JSON Schema and exit

Flags:
`
