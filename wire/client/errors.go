package client

import (
	"errors"
	"fmt"
	"strconv"

	"octet.dev/host/protocol"
)

// ErrProtocolViolation is wrapped by every error that reports the host
// breaking native-host protocol 1. After a violation the client is poisoned:
// the host's process group has been killed and every later call fails.
var ErrProtocolViolation = errors.New("client: the host broke native-host protocol 1")

// ErrBusy is returned by a request made while another request is in flight.
// Protocol 1 serves one request at a time (max_concurrent_runs is 1); the
// client refuses to interleave rather than queue.
var ErrBusy = errors.New("client: another request is in flight")

// ErrClosed is returned by calls made after Close or after a successful
// Shutdown, and by a request that was in flight when Close was called.
var ErrClosed = errors.New("client: the client is closed")

// ErrKilled is wrapped by the error of calls made after the client killed
// the host's process group: after Kill, or after a context canceled an
// in-flight request.
var ErrKilled = errors.New("client: the host's process group was killed")

// ErrHostExited is wrapped by *HostExitedError.
var ErrHostExited = errors.New("client: the host exited")

// ErrInvalidRequest is wrapped by the error of a request the client refuses
// to send because the host would reject it as malformed protocol (an invalid
// run_id or session_id, say).
var ErrInvalidRequest = errors.New("client: invalid request")

// ErrRequestTooLarge is wrapped by the error of a request whose line would
// exceed protocol.MaxFrameBytes including its newline. Such a request is not
// sent.
var ErrRequestTooLarge = errors.New("client: request exceeds the 1048576-byte frame bound")

// ErrNotDone is returned by RunStream.Final before the run's terminal event
// has been read.
var ErrNotDone = errors.New("client: the run has not ended yet")

// violation is embedded by the error types that report a protocol
// violation, so that errors.Is(err, ErrProtocolViolation) holds for them.
type violation struct{}

// Is reports whether target is ErrProtocolViolation.
func (violation) Is(target error) bool { return target == ErrProtocolViolation }

// ProtocolMismatchError reports an event whose protocol_version is not the
// number 1. Got is the member's raw JSON text, or "" when it was absent.
type ProtocolMismatchError struct {
	violation
	Got string
}

func (e *ProtocolMismatchError) Error() string {
	if e.Got == "" {
		return "client: protocol mismatch: event without protocol_version (want 1)"
	}
	return "client: protocol mismatch: event protocol_version " + e.Got + " (want 1)"
}

// UnknownRequestError reports an event whose request_id names no request in
// flight. RequestID is "" for a null request_id; InFlight is the ID of the
// request in flight, or "" when the client was idle.
type UnknownRequestError struct {
	violation
	RequestID string
	InFlight  string
}

func (e *UnknownRequestError) Error() string {
	id := "null"
	if e.RequestID != "" {
		id = strconv.Quote(e.RequestID)
	}
	if e.InFlight == "" {
		return "client: event for unknown request_id " + id + " while no request is in flight"
	}
	return "client: event for unknown request_id " + id + " while request " + strconv.Quote(e.InFlight) + " is in flight"
}

// SeqGapError reports an event whose seq is not one more than the previous
// event's of the same request (or not 1 for the first event).
type SeqGapError struct {
	violation
	RequestID string
	Want, Got int64
}

func (e *SeqGapError) Error() string {
	return fmt.Sprintf("client: seq gap in request %q: got seq %d, want %d", e.RequestID, e.Got, e.Want)
}

// SecondTerminalError reports an event for a request that has already
// received its terminal event. Type is the late event's type.
type SecondTerminalError struct {
	violation
	RequestID string
	Type      protocol.EventType
}

func (e *SecondTerminalError) Error() string {
	return fmt.Sprintf("client: %q event for request %q after its terminal event", e.Type, e.RequestID)
}

// RunIDMismatchError reports a run event whose run_id is not the run's.
// Got is "" when the event carried no run_id.
type RunIDMismatchError struct {
	violation
	RequestID string
	Want, Got string
}

func (e *RunIDMismatchError) Error() string {
	return fmt.Sprintf("client: run_id mismatch in request %q: got %q, want %q", e.RequestID, e.Got, e.Want)
}

// SessionIDMismatchError reports a run event that does not echo the
// session_id the run request supplied. Got is "" when the event carried none.
type SessionIDMismatchError struct {
	violation
	RequestID string
	Want, Got string
}

func (e *SessionIDMismatchError) Error() string {
	return fmt.Sprintf("client: session_id mismatch in request %q: got %q, want %q", e.RequestID, e.Got, e.Want)
}

// UnexpectedEventError reports an event type the request's command does not
// allow: hello, models and shutdown are answered by exactly one event of the
// same name or a protocol_error.
type UnexpectedEventError struct {
	violation
	RequestID string
	Command   string
	Type      protocol.EventType
}

func (e *UnexpectedEventError) Error() string {
	return fmt.Sprintf("client: unexpected %q event for %s request %q", e.Type, e.Command, e.RequestID)
}

// MalformedEventError reports a line from the host that is not a valid
// protocol-1 event: not JSON, not an object, a missing or mistyped envelope
// member, terminal data of the wrong shape, or a line over the frame bound
// (Err is then wire.ErrFrameTooLarge).
type MalformedEventError struct {
	Reason string
	Err    error
}

func (e *MalformedEventError) Error() string {
	if e.Err != nil {
		return "client: malformed event: " + e.Reason + ": " + e.Err.Error()
	}
	return "client: malformed event: " + e.Reason
}

// Unwrap returns ErrProtocolViolation and the underlying error, if any.
func (e *MalformedEventError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrProtocolViolation, e.Err}
	}
	return []error{ErrProtocolViolation}
}

// ProtocolError is a protocol_error event that ended a request: the host
// rejected the request as malformed protocol, or replaced an oversized event
// (code output_too_large). It is not a violation: the client stays usable.
type ProtocolError struct {
	RequestID string
	Code      protocol.Code
	Message   string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("client: request %q: protocol_error %s: %s", e.RequestID, e.Code, e.Message)
}

// HandshakeError reports a hello answer that the client does not accept:
// a value other than the protocol requires, a missing command, an SDK
// version other than Config.ExpectedSDKVersion, or a required feature that
// is not true.
type HandshakeError struct {
	Field  string
	Reason string
	Hello  protocol.Hello
}

func (e *HandshakeError) Error() string {
	return "client: hello rejected: " + e.Field + ": " + e.Reason
}

// HostExitedError reports that the host's stdout ended, normally because the
// host exited, while the client still expected events or was idle. Err is
// the process's exit error (nil for status 0, else an *exec.ExitError) and
// Stderr the retained tail of its standard error.
type HostExitedError struct {
	Err    error
	Stderr string
}

func (e *HostExitedError) Error() string {
	status := "status 0"
	if e.Err != nil {
		status = e.Err.Error()
	}
	msg := "client: the host exited unexpectedly (" + status + ")"
	if e.Stderr != "" {
		msg += "; stderr tail: " + tail(e.Stderr, 512)
	}
	return msg
}

// Unwrap returns ErrHostExited and the exit error, if any.
func (e *HostExitedError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrHostExited, e.Err}
	}
	return []error{ErrHostExited}
}

// tail returns at most the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
