// Package provider is the provider seam of the embedding API: the
// provider-neutral conversation and stream types that every wire mode (Chat
// Completions, Responses, Messages) maps to and from, and the Provider
// interface an embedder implements to bring a provider of its own
// (runtime.Options.ProviderFactory). The engine speaks only these types;
// the module's wire modes live in runtime/internal/provider/{chat,responses,
// messages} and own their request building and stream decoding. The
// session file does not use these types: the store keeps its own
// (runtime/internal/store, MessageV1), so a change here never changes the
// file format.
//
// Concurrency: a Stream is used by one goroutine at a time. A Provider may be
// shared by concurrent runs.
package provider
