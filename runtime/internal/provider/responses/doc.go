// Package responses is the OpenAI Responses wire mode (provider_mode
// "openai-responses", CONTRACT §8 and §11): it turns a provider.Request into
// a streaming POST to BaseURL + "/responses" and decodes the
// text/event-stream answer into provider.StreamEvents.
//
// It owns:
//   - the request body: instructions, input items (user messages,
//     assistant output_text messages, function_call and
//     function_call_output items, and, with Config.IncludeEncryptedReasoning,
//     reasoning items carrying a prior turn's encrypted_content), function
//     tools, reasoning effort with an automatic summary, max_output_tokens,
//     store (false by default) and include;
//   - the stream decoding, by each event's JSON type (the SSE event name is
//     used only when the JSON has none), with the quirks real servers show:
//     output items keyed by output_index because some servers change item
//     ids mid-stream, function-call arguments that arrive as deltas, only
//     in function_call_arguments.done, or only in output_item.done, reasoning
//     as summary deltas or as raw reasoning_text deltas, unknown item and
//     event types (skipped), and text that is only in a done item;
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
// Events are delivered in the order the server sent them. Answer text
// (output_text and refusal deltas, refusals being answer text) and
// reasoning text (summary and reasoning_text deltas) stream as they arrive;
// the text of different output items, and the parts of one reasoning
// summary, are separated by a blank line ("\n\n"), since the neutral
// conversation keeps one text per turn. A reasoning item's encrypted_content
// is an EventReasoning with empty Text and the Signature set, when the item
// is done. A function call is one EventToolCall when its item is done.
// response.completed gives any calls still open, EventUsage, then
// EventFinish (FinishToolCalls when a call was emitted, else FinishStop).
// response.incomplete gives only the open calls whose arguments the server
// marked whole, EventUsage, then EventFinish with FinishLength for
// max_output_tokens, FinishRefusal for content_filter and FinishOther
// otherwise. response.failed and the error event fail the stream with
// FailErrorEvent and the provider's error code. A body that ends before
// response.completed, response.incomplete or response.failed is
// FailStreamCut.
//
// With Config.Transport TransportWebSocket the same requests and events
// travel over the Responses WebSocket mode instead (websocket.go): one
// response.create message per call on a socket the Provider reuses, with
// previous_response_id continuation, and HTTP as the fallback when the
// handshake is refused.
//
// Concurrency: a Provider is safe for concurrent use by many runs. A Stream
// is used by one goroutine at a time, except Close, which may also be called
// from another goroutine to abort a blocked Next (the stream then fails with
// FailCanceled); Close may be called more than once.
package responses
