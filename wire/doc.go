// Package wire is the byte level of native-host protocol 1: it turns lines
// into requests and events into lines, and knows nothing of runs.
//
// LineReader reads newline-terminated frames with a hard bound (1 MiB
// including the newline): an overlong line is skipped to its newline in
// bounded chunks and reported as ErrFrameTooLarge, so memory stays flat.
// Decode parses one request line strictly (exact-case member names, no
// duplicates, no unknown members, exact JSON types, no null, required
// members present, no defaults filled in) into a Request whose bodies are
// package protocol's types, or a DecodeError with the protocol error code.
//
// Writer is the one writer of protocol frames: each event is one line,
// written whole in one Write call, never dropped; an event over the bound
// is replaced by a terminal protocol_error output_too_large
// (ErrOutputTooLarge). A Stream writes the events of one request and
// enforces that nothing follows its terminal event; it does not count seq,
// which the caller takes from the protocol session machine (fsm/session).
//
// Package wire/client is the Go client built on the same codec.
package wire
