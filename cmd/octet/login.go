package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// loginRequest is what a provider's login or logout gets.
type loginRequest struct {
	Ctx      context.Context // canceled by SIGINT/SIGTERM
	Provider string          // as given on the command line
	Logout   bool            // --logout rather than --login
	Headless bool            // never open a browser; instructions to Stderr
	Stdout   io.Writer
	Stderr   io.Writer
}

// loginProviders maps a provider name (and its aliases) to the function
// that performs --login and --logout for it. It returns the process's
// exit status. The GitHub Copilot device login registers itself here (as
// "copilot" and "github-copilot"); until then every name is unknown.
var loginProviders = map[string]func(loginRequest) int{}

// errUnknownProvider is the message for a name no provider registered.
var errUnknownProvider = errors.New("unknown provider")

// runLogin serves --login NAME and --logout NAME.
func runLogin(login, logout string, set map[string]bool, headless bool) int {
	if set["login"] && set["logout"] {
		return usageErr("--login and --logout exclude each other")
	}
	if set["logout"] && set["headless"] {
		return usageErr("--headless goes with --login")
	}
	for name := range set {
		switch name {
		case "login", "logout", "headless", "log-level":
		default:
			return usageErr("--%s does not go with --login or --logout", name)
		}
	}
	name := login
	if set["logout"] {
		name = logout
	}
	fn, ok := loginProviders[strings.ToLower(name)]
	if !ok {
		known := make([]string, 0, len(loginProviders))
		for k := range loginProviders {
			known = append(known, k)
		}
		slices.Sort(known)
		list := "none in this build"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		fmt.Fprintf(os.Stderr, "octet: %v %q (providers with a login: %s)\n", errUnknownProvider, name, list)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return fn(loginRequest{Ctx: ctx, Provider: name, Logout: set["logout"], Headless: headless, Stdout: os.Stdout, Stderr: os.Stderr})
}
