// Package discovery lists the models that configured OpenAI-compatible
// endpoints (llama.cpp, vLLM, Ollama, LM Studio, gateways) serve right now:
// the live discovery behind the models command when offline is false
// (CONTRACT §7).
//
// Discover sends one GET BaseURL+"/models" per Endpoint, all concurrently,
// each bounded by a short timeout, reads at most MaxBodyBytes of the answer,
// decoding it as it arrives and keeping at most MaxModelsPerEndpoint models
// (memory holds those and one entry's JSON, however long the list; the
// models left out are counted in a discovery_truncated Issue). It decodes
// leniently: OpenAI's {"object":"list","data":[...]} list
// (which Ollama, LM Studio, vLLM and most gateways return), llama.cpp's extra
// Ollama-style "models" array, and a bare JSON array of model objects.
// Unknown members are ignored. A context window is reported when the server
// states one: vLLM's max_model_len, llama.cpp's meta.n_ctx_train, or the
// context_length / context_window / max_context_length members some gateways
// use.
//
// A failing endpoint never fails the call: it becomes an Issue with the code
// discovery_failed (unreachable, refused, non-2xx), discovery_timeout (no
// complete answer within the timeout) or discovery_invalid (not a model
// list, or too large); a list cut short at MaxModelsPerEndpoint adds a
// discovery_truncated Issue beside its models; the constants are package
// protocol's. Issue
// messages are sanitized: the endpoint's API key never appears in them, even
// when the server echoes it, and they are at most MaxMessageBytes of valid
// UTF-8 without control characters. There are no retries.
//
// The package reads no configuration and no credentials: the caller passes
// the endpoints, with their keys already resolved. FromCatalog derives them
// from the routes of a catalog.Catalog.
//
// Concurrency: Discover may be called from several goroutines at once. It
// returns only after every request it started has finished, so it leaves no
// goroutine behind; idle keep-alive connections stay with the caller's
// http.Client transport.
package discovery
