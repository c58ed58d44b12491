package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"octet.dev/host/runtime/fakeprovider"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// urls is the line printed once the server listens.
type urls struct {
	Root              string `json:"root"`
	OpenAICompatible  string `json:"openai_compatible"`
	OpenAIResponses   string `json:"openai_responses"`
	AnthropicMessages string `json:"anthropic_messages"`
}

// run is the command without the process: it serves until ctx ends or
// stdin reaches EOF and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("octet-fake-provider", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "loopback `host:port` to listen on")
	scriptPath := fs.String("script", "", "JSON `file` with the script (a fakeprovider.Script)")
	fixture := fs.String("fixture", "", "answer every request of a mode with a recorded fixture, `mode/name`")
	watchStdin := fs.Bool("stdin", true, "exit when standard input reaches end of file")
	list := fs.Bool("list", false, "print the recorded fixtures, mode/name per line, and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "octet-fake-provider: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *list {
		for _, m := range fakeprovider.Modes() {
			for _, name := range fakeprovider.Fixtures(m) {
				fmt.Fprintf(stdout, "%s/%s\n", m, name)
			}
		}
		return 0
	}
	if *scriptPath == "" && *fixture == "" {
		fmt.Fprintln(stderr, "octet-fake-provider: give -script or -fixture (or both)")
		return 2
	}

	var opts fakeprovider.Options
	opts.Addr = *addr
	// Nothing reads the requests of the command's server (Requests is the
	// library's): a bound keeps a fake that answers for hours, as -fixture
	// does, from holding every body it was sent.
	opts.KeepRequests = 16
	if *scriptPath != "" {
		data, err := os.ReadFile(*scriptPath)
		if err != nil {
			fmt.Fprintf(stderr, "octet-fake-provider: %v\n", err)
			return 1
		}
		if opts.Script, err = fakeprovider.ParseScript(data); err != nil {
			fmt.Fprintf(stderr, "octet-fake-provider: %s: %v\n", *scriptPath, err)
			return 2
		}
	}
	srv, err := fakeprovider.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "octet-fake-provider: %v\n", err)
		return 2
	}
	defer srv.Close()
	if *fixture != "" {
		modeName, name, ok := strings.Cut(*fixture, "/")
		mode, err := fakeprovider.ParseMode(modeName)
		if err == nil && !ok {
			err = errors.New("-fixture must be mode/name")
		}
		if err == nil {
			err = srv.SetFixture(mode, name)
		}
		if err != nil {
			fmt.Fprintf(stderr, "octet-fake-provider: %v\n", err)
			return 2
		}
	}

	line, _ := json.Marshal(urls{
		Root:              srv.URL(),
		OpenAICompatible:  srv.BaseURL(fakeprovider.ModeChat),
		OpenAIResponses:   srv.BaseURL(fakeprovider.ModeResponses),
		AnthropicMessages: srv.BaseURL(fakeprovider.ModeAnthropic),
	})
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		fmt.Fprintf(stderr, "octet-fake-provider: writing the URLs: %v\n", err)
		return 1
	}

	eof := make(chan struct{})
	if *watchStdin {
		go func() {
			// Ends with the process when stdin never closes.
			_, _ = io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	select {
	case <-ctx.Done():
	case <-eof:
	}
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "octet-fake-provider: %v\n", err)
		return 1
	}
	return 0
}
