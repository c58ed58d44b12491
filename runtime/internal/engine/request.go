package engine

import (
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/prepare"
)

// The request's types are package prepare's, which checks them; these are
// the engine's names for them.
type (
	// RunRequest is one run of the agent (CONTRACT §8).
	RunRequest = prepare.RunRequest
	// InlineRoute is a provider route defined in the request (CONTRACT §8).
	InlineRoute = prepare.InlineRoute
	// RunError is a run refused before it was accepted (CONTRACT §8).
	RunError = prepare.RunError
)

// Limits of CONTRACT §8.
const (
	MaxPromptBytes      = prepare.MaxPromptBytes
	MaxDisplayTextBytes = prepare.MaxDisplayTextBytes
	MaxHeaderEntries    = prepare.MaxHeaderEntries
	MaxHeaderBytes      = prepare.MaxHeaderBytes
	DefaultMaxSteps     = prepare.DefaultMaxSteps
	MaxMaxSteps         = prepare.MaxMaxSteps
)

// refuse is prepare.Refuse with its message bounded (bound): the engine's
// refusals do not all leave through prepare.Prepare.
func refuse(code protocol.Code, format string, args ...string) *RunError {
	e := prepare.Refuse(code, format, args...)
	e.Message = bound(e.Message)
	return e
}

// bound cuts a message to 1 KiB at a rune boundary.
func bound(s string) string { return prepare.Bound(s) }

// scrub removes a credential from a message.
func scrub(msg, key string) string { return prepare.Scrub(msg, key) }
