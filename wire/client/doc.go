// Package client is a Go client for octet-host, the headless coding-agent
// host driven by native-host protocol 1 (NDJSON on stdin/stdout).
//
// Start launches the host in its own process group (on Linux it also dies
// with the thread that started it), drains its stderr into a bounded buffer
// (Stderr) and validates its hello answer before returning. Requests are
// serial: Models, Run and Shutdown each wait for the previous request's
// terminal event, and a request made meanwhile returns ErrBusy.
//
// One goroutine reads the host's stdout (frames of at most 1 MiB) and checks
// every event against the request in flight: protocol_version 1
// (*ProtocolMismatchError), request_id (*UnknownRequestError), seq starting
// at 1 and increasing by one (*SeqGapError), nothing after the terminal
// event (*SecondTerminalError), run_id and session_id of run events
// (*RunIDMismatchError, *SessionIDMismatchError), the event types each
// command allows (*UnexpectedEventError) and the envelope's syntax
// (*MalformedEventError). All of these wrap ErrProtocolViolation: the host
// broke the protocol, so the client kills its process group and fails every
// later call with the same error. A protocol_error that ends a request is
// returned as *ProtocolError and leaves the client usable.
//
// The vocabulary is package protocol's: requests are protocol.RunRequest,
// answers protocol.Hello, protocol.Models and protocol.FinalResult, and
// Event.Decode turns an event's data into its typed payload (a
// *protocol.ModelDelta for model_delta, a *protocol.ToolFinish for
// tool_finish, …) for a type switch; see the example of Event.Decode.
// Event.DecodeInto decodes into a type of the caller's own, and the raw
// JSON stays available in Event.Data.
//
// A request_id of null is attributed to the request in flight only for a
// protocol_error that is that request's first event: the client writes
// every line of the host's stdin, one per request, and only while no other
// request is in flight, so such an event can only answer the in-flight
// request's line. Any other null request_id is an *UnknownRequestError.
//
// Protocol 1 has no in-band abort: canceling the context of an in-flight
// request kills the host's process group, and the call returns ctx.Err().
// Close closes the host's stdin, waits Config.CloseGrace for it to exit,
// then kills the group; it always reaps the process and stops the client's
// goroutines. Kill kills the group at once.
package client
