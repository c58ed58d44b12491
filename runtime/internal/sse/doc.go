// Package sse decodes a text/event-stream body as a pull iterator.
//
// It owns the framing of Server-Sent Events only: line ends (LF, CR, CRLF),
// fields (data, event, id, retry), comments, and dispatch at a blank line, as
// the WHATWG HTML "event stream interpretation" rules describe. It knows
// nothing of the JSON inside events, of HTTP, or of timeouts: the provider
// packages wrap the response body to add an idle timeout (DESIGN §2) and give
// the wrapped body to NewReader.
//
// Usage:
//
//	r := sse.NewReader(body, maxEventBytes)
//	for r.Next() {
//		ev := r.Event() // ev.Data is valid until the next call to Next
//	}
//	if err := r.Err(); err != nil { ... } // a read error or ErrEventTooLarge
//	if r.Truncated() { ... }               // the body ended inside an event
//
// Memory is bounded: no line and no event's data may exceed maxEventBytes
// (plus a small allowance for a line's field name), so a hostile or broken
// server cannot make the reader buffer without limit. The one exception is
// opt-in (SetLongData): a data line longer than a threshold is handed, as a
// stream, to a handler that keeps what it needs and returns the data to use
// in its place, up to a stated cap per line (the Responses decoder streams
// generated images this way: edge.Divert, at most 32 MiB a line).
//
// Concurrency: a Reader is used by one goroutine at a time. It allocates
// nothing per event in the steady state except when an event's type or id
// changes.
package sse
