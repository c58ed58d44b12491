// Package edge is what the wire modes (chat, responses, messages) share
// where a provider route meets the network: everything between net/http and
// a mode's own request body and stream decoding. A mode describes itself in
// a Mode (its name, endpoint, key header, error envelope reading and stream
// decoder) and leaves the rest here:
//
//   - the route settings: Mode.Route checks the base URL, the API key and
//     the custom headers (syntax only: RFC 9110 tokens, no control
//     characters), fills the defaults (DefaultIdleTimeout,
//     DefaultMaxEventBytes, a client with its own transport, time.Now) and
//     builds every request header once;
//   - the call: Mode.Stream posts the encoded request and collects the facts
//     recovery needs (CONTRACT §12, DESIGN §2) as *provider.Error: whether a
//     request byte was written, from net/http/httptrace and never guessed
//     from error strings (FailConnect only when none was); the HTTP status,
//     the mode's error code and message, and RetryAfter (retry-after-ms,
//     then Retry-After); a 2xx application/json answer as FailErrorEvent or
//     FailDecode;
//   - the stream: the body closes itself after the idle timeout without a
//     byte; Close may be called from another goroutine to abort a blocked
//     Next; a decoder failure is completed with the call's facts (idle
//     timeout, cancel, closed, or a cut body: FailStreamCut) and with
//     ContentStarted;
//   - the messages: Scrubber removes the API key, custom header values and
//     masked keys ("sk-abc***xyz") and bounds every message to MaxMessage
//     bytes of valid UTF-8 (CONTRACT §11);
//   - the decoders' common parts: Queue (the events decoded and not yet
//     delivered), the Decoder contract, Failure and ReadFailure, the Lenient
//     json options, the lenient value types (FlexString, TextOnly, ArgText),
//     the error objects both API families send (ErrorObject,
//     ErrorEnvelope), and Scanner, the strict JSON scanner the fast paths
//     are built on.
//
// It does not retry and knows no wire format: recovery.Classify and the
// run driver decide what a failure means, and each mode owns its request
// body, its stream decoding and how its error envelopes read.
//
// Concurrency: a Mode and a Route are read-only and may be shared by any
// number of calls. A stream is used by one goroutine at a time, except
// Close. A Queue, a Scanner and a Decoder belong to one decoder.
package edge
