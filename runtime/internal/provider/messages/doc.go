// Package messages is the Anthropic Messages wire mode (provider_mode
// "anthropic-messages", CONTRACT §8 and §11): it turns a provider.Request
// into a streaming POST to the API root + "/v1/messages" (a base URL that
// already ends in "/v1" is not doubled) with the key in "x-api-key" and
// "anthropic-version: 2023-06-01", and decodes the text/event-stream answer
// into provider.StreamEvents.
//
// It owns:
//   - the request body: model, max_tokens (8192 when the request gives
//     none), system, the messages as content blocks, tools, thinking
//     (a budget derived from the reasoning effort, or adaptive thinking with
//     output_config.effort) and stream:true. Assistant turns are sent back as
//     their thinking (only with its signature) and redacted_thinking blocks,
//     unchanged and in order, then text and tool_use blocks; tool
//     results become tool_result blocks of one user message, so that every
//     tool_use is answered in the next user turn. A tool_use left without a
//     result (a canceled run, an output cut) gets a synthetic error result,
//     and a result that answers no tool_use of the previous assistant turn is
//     sent as text, because the API rejects both with 400;
//   - the stream decoding: message_start, content_block_start/delta/stop
//     (text, thinking with its signature, redacted_thinking, tool_use with
//     input_json_delta pieces), message_delta (stop reason and cumulative
//     usage, the latest value of each figure winning), message_stop, ping,
//     error, and unknown events (skipped). Usage follows provider.Usage:
//     InputTokens includes the cache read and cache write tokens;
//   - the reading of its error bodies and error events: Anthropic's error
//     type is the error code (else a gateway's code).
//
// Package edge sends the request and collects the facts recovery needs
// (CONTRACT §12, DESIGN §2): whether a request byte was written
// (net/http/httptrace), the HTTP status and error code, Retry-After /
// retry-after-ms, whether content had started, and the failure kind, all
// reported as *provider.Error.
//
// Events are delivered in the order the server sent them: reasoning and text
// as they arrive, a thinking block's signature as an EventReasoning with
// empty Text when the block stops, a redacted_thinking block as an
// EventReasoning with its Redacted data when it starts, each tool call when its block is known to
// be complete, then EventUsage and EventFinish at message_stop. A stream
// that ends before message_stop is FailStreamCut.
//
// A tool call cut by the output cap is never emitted: a tool_use block still
// open when message_delta reports stop_reason "max_tokens" is dropped, and so
// is the last block of the message when it is a tool_use and the stop reason
// is "max_tokens" (its input may be incomplete even if the server closed the
// block). To know that, a closed tool_use block is held back until the next
// block starts or message_delta arrives.
//
// It does not retry: recovery.Classify and the run driver decide what a
// failure means. Error messages are sanitized and bounded and never contain
// the API key (CONTRACT §11).
//
// Concurrency: a Provider is safe for concurrent use by many runs. A Stream
// is used by one goroutine at a time, except Close, which may also be called
// from another goroutine to abort a blocked Next (the stream then fails with
// FailCanceled); Close may be called more than once.
package messages
