package main

import (
	"context"
	"errors"
	"fmt"

	"octet.dev/host/runtime/copilot"
)

// The GitHub Copilot device login (runtime/copilot), under its two names.
func init() {
	loginProviders["copilot"] = loginCopilot
	loginProviders["github-copilot"] = loginCopilot
}

// loginCopilot runs the device login or the local logout. The instructions,
// the outcome and any error go to stderr; stdout stays empty. Ctrl-C (or
// SIGTERM) during the login exits 130.
func loginCopilot(r loginRequest) int {
	if r.Logout {
		if err := copilot.Logout("", r.Stderr); err != nil {
			fmt.Fprintf(r.Stderr, "octet: logout: %v\n", err)
			return exitError
		}
		return exitCompleted
	}
	err := copilot.Login(r.Ctx, copilot.LoginOptions{Headless: r.Headless, Out: r.Stderr})
	switch {
	case err == nil:
		return exitCompleted
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(r.Stderr, "octet: login interrupted")
		return 130
	default:
		fmt.Fprintf(r.Stderr, "octet: login: %v\n", err)
		return exitError
	}
}
