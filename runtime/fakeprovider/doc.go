// Package fakeprovider is a loopback fake of the three model APIs octet-host
// streams from — OpenAI Chat Completions, OpenAI Responses and Anthropic
// Messages — for end-to-end tests, ours (DESIGN §3 item 11) and
// applications' own CI. It answers from a script or replays recorded
// streams, and injects the faults the recovery rules of CONTRACT §12 are
// about.
//
// # Endpoints
//
// A Server listens on a loopback address only (127.0.0.1 on a free port by
// default) and serves:
//
//   - POST /v1/chat/completions (ModeChat, provider_mode "openai-compatible"),
//   - POST /v1/responses (ModeResponses, "openai-responses"), and a
//     WebSocket on GET /v1/responses: the Responses WebSocket mode, one
//     response.create message per model request, answered from the same
//     script (see websocket.go: FaultWSRefuse, FaultWSDropHandshake and
//     FaultWSCloseAfterFrame, Request.WebSocket, MethodMessage), with
//     native steering scripted by Turn.Steer (steer.go),
//   - POST /v1/messages (ModeAnthropic, "anthropic-messages"),
//   - POST /backend-api/codex/responses (ModeResponses), the ChatGPT Codex
//     backend a Codex ChatGPT login reaches,
//   - GET /v1/models, listing the script's model ids.
//
// BaseURL gives the base_url to configure for each mode (CONTRACT §8): the
// root plus "/v1" for the OpenAI modes and the root for Anthropic.
// CodexBaseURL gives the Codex backend's, the root plus
// "/backend-api/codex". The backend manages its own output budget: a
// request there with a top-level max_output_tokens gets its 400
// {"detail":"Unsupported parameter: max_output_tokens"}, which the
// platform's /v1/responses accepts. A model
// request must be a JSON object with a "model" and "stream": true (chat and
// Anthropic also need "messages", Anthropic "max_tokens"); anything else
// gets a 400 in the provider's own error envelope. Anthropic requests also
// get the API's prompt-cache checks: cache_control breakpoints (null, or
// {"type":"ephemeral"} with an optional "ttl" of "5m" or "1h") on tools,
// system text blocks, content blocks other than thinking, or the top
// level, at most MaxCacheBreakpoints, no "1h" after a "5m". An Anthropic
// request may not turn thinking on inside an assistant turn, as the API
// refuses: one whose last user message carries tool_result blocks
// continues the turn of the assistant message before it, which must then
// begin with a thinking or redacted_thinking block when thinking is on
// (with thinking off, thinking blocks in the history are ignored).
//
// # Answers
//
// Each model request is answered, in this order of precedence, by a
// fixture queued with ServeFixture for that mode, the fixture set with
// SetFixture for that mode, or the next Turn of the Script. A Turn (text,
// reasoning, refusal, tool calls, usage) is encoded in the wire format of
// the endpoint that received the request, so one script drives any mode;
// its generated images (Responses image_generation_call items with partial
// images) and audio output (Chat delta.audio) appear only in the mode that
// has them.
// Fixtures are the project's recorded provider streams, embedded unchanged
// (see fixtures/LICENSES.md); ".sse" files are replayed byte for byte with
// their recorded status and headers, ".chunks.jsonl" files framed as the
// provider sends them.
//
// A request without a fault consumes its turn or queued fixture; a request
// that gets a fault consumes nothing, so the retry gets the same answer
// (a FaultStall that resumes after its For and completes is the one
// exception: it consumes the turn it sent).
//
// # Faults
//
// InjectFault queues one Fault per request: FaultStatus (an HTTP error such
// as 429 with Retry-After, 5xx, 529, in the provider's envelope),
// FaultErrorEvent (an in-stream error event), FaultRedirect (a 3xx to
// another server, to see whether a client follows it), FaultCutMidStream (the
// connection closes before the terminal event), FaultStall (the stream
// stops until the client gives up), FaultNoHeaders (no answer at all,
// not even headers, until the client gives up), FaultNoRead (the request
// body is never read, so a large one blocks the client's write),
// FaultEndless (a stream of text, reasoning or tool-call arguments that
// never ends),
// FaultResetAfterHeaders (a
// TCP reset after the headers), the WebSocket faults FaultWSRefuse,
// FaultWSDropHandshake and FaultWSCloseAfterFrame, and FaultRefuse (connections are refused until
// Reopen, on the same port).
//
// # Model loading
//
// Script.Loading starts the server in a model-loading phase, the way
// llama.cpp's llama-server answers while it loads its model: the first
// Loading model requests get HTTP 503 with LoadingBody,
// {"error":{"message":"Loading model","type":"unavailable_error","code":503}},
// in every mode, ahead of the key check and of any injected fault, and
// consume nothing; then the server answers normally. LoadingLeft tells how
// many loading answers remain.
//
// # Requests
//
// Requests returns every request received, with its body as received and
// decoded from JSON, and its headers; credential values are redacted, and
// only whether a key was sent and its KeyFingerprint are kept.
//
// # Concurrency
//
// A Server's methods are safe for concurrent use. Concurrent requests take
// distinct turns; the order among them is the order the server dispatches
// them in. Close stops the server and waits for all its goroutines.
//
// The octet-fake-provider command (cmd/octet-fake-provider) runs a Server
// from a script file for use outside Go tests.
package fakeprovider
