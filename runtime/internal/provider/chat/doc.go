// Package chat is the OpenAI Chat Completions wire mode (provider_mode
// "openai-compatible", CONTRACT §8 and §11): it turns a provider.Request into
// a streaming POST to BaseURL + "/chat/completions" and decodes the
// text/event-stream answer into provider.StreamEvents.
//
// It owns:
//   - the request body (messages, tools, stream_options.include_usage,
//     max_completion_tokens, reasoning_effort);
//   - the stream decoding, with the quirks real servers show (tool-call
//     indexes that start at 1, whole tool calls in one delta, usage on the
//     finish chunk or in a choices:[] chunk, reasoning in
//     delta.reasoning_content or delta.reasoning, n>1 choices, refusals);
//   - the reading of its error bodies and error events: an OpenAI-style
//     envelope, whose code (else its type) is the error code.
//
// Package edge sends the request and collects the facts recovery needs
// (CONTRACT §12, DESIGN §2): whether a request byte was written
// (net/http/httptrace), the HTTP status and error code, Retry-After /
// retry-after-ms, whether content had started, and the failure kind, all
// reported as *provider.Error.
//
// It does not retry: recovery.Classify and the run driver decide what a
// failure means. Error messages are sanitized and bounded and never contain
// the API key (CONTRACT §11).
//
// Events are delivered in the order the server sent them: reasoning and
// text as they arrive, the assembled tool calls (in index order) when choice
// 0 finishes, usage whenever a usage object arrives, and EventFinish only
// after "data: [DONE]". A body that ends before [DONE] is FailStreamCut.
//
// Concurrency: a Provider is safe for concurrent use by many runs. A Stream
// is used by one goroutine at a time, except Close, which may also be called
// from another goroutine to abort a blocked Next (the stream then fails with
// FailCanceled); Close may be called more than once.
package chat
