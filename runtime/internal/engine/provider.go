package engine

import (
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/prepare"
	"octet.dev/host/runtime/internal/provider/chat"
	"octet.dev/host/runtime/internal/provider/messages"
	"octet.dev/host/runtime/internal/provider/responses"
	"octet.dev/host/runtime/provider"
)

// The provider seam, for embedders that bring their own provider (and for
// tests): a ProviderFactory builds the Provider of a resolved Route.
type (
	// Provider starts streamed model calls for one route.
	Provider = provider.Provider
	// ProviderRequest is one model call.
	ProviderRequest = provider.Request
	// ProviderStream is a pull iterator over one streamed response.
	ProviderStream = provider.Stream
	// StreamEvent is one decoded piece of a response.
	StreamEvent = provider.StreamEvent
	// Message is one entry of the provider-neutral conversation.
	Message = provider.Message
	// ToolCall is one complete tool call made by the model.
	ToolCall = provider.ToolCall
	// ToolSpec describes a tool offered to the model.
	ToolSpec = provider.ToolSpec
	// ProviderUsage is the token accounting of one call.
	ProviderUsage = provider.Usage
	// ProviderError is a provider failure with the facts recovery needs.
	ProviderError = provider.Error
	// OutputMedia is media a model produced, spooled into a temporary file
	// of ProviderRequest.SpoolDir (its name beginning with ".tmp-"), carried
	// by a StreamMedia event; the run owns the file from then on.
	OutputMedia = provider.OutputMedia
)

// Stream event kinds and finish reasons, re-exported for providers.
const (
	StreamText      = provider.EventText
	StreamReasoning = provider.EventReasoning
	StreamToolCall  = provider.EventToolCall
	StreamUsage     = provider.EventUsage
	StreamFinish    = provider.EventFinish
	StreamMedia     = provider.EventMedia

	FinishStop      = provider.FinishStop
	FinishToolCalls = provider.FinishToolCalls
	FinishLength    = provider.FinishLength
)

// Route is a resolved model route: what a ProviderFactory needs to build a
// Provider (prepare.Route). APIKey is the credential; never log it.
type Route = prepare.Route

// ProviderFactory builds the Provider for a route. It returns an error
// (reported as route_invalid, or unsupported for an unknown mode) when it
// cannot.
type ProviderFactory func(Route) (Provider, error)

// defaultFactory builds the wire-mode providers of this module.
func (a *Agent) defaultFactory(r Route) (Provider, error) {
	switch catalog.Mode(r.Mode) {
	case catalog.ModeOpenAICompatible:
		return chat.New(chat.Config{BaseURL: r.BaseURL, APIKey: r.APIKey, Headers: r.Headers, HTTPClient: a.opts.HTTPClient, IdleTimeout: a.opts.IdleTimeout, Now: a.opts.Now,
			PromptCacheKey: r.AcceptsPromptCacheKey, AudioOutput: r.AudioOutput})
	case catalog.ModeOpenAIResponses:
		// store:false keeps nothing at the provider; encrypted reasoning is
		// requested and carried forward so that reasoning survives turns.
		return responses.New(responses.Config{BaseURL: r.BaseURL, APIKey: r.APIKey, Headers: r.Headers, HTTPClient: a.opts.HTTPClient, IdleTimeout: a.opts.IdleTimeout, Now: a.opts.Now, IncludeEncryptedReasoning: r.SupportsReasoning, Transport: r.Transport,
			ImageGeneration: r.ImageOutput})
	case catalog.ModeAnthropicMessages:
		// The thinking form follows the model generation (catalog.AdaptiveThinking).
		return messages.New(messages.Config{BaseURL: r.BaseURL, APIKey: r.APIKey, Headers: r.Headers, HTTPClient: a.opts.HTTPClient, IdleTimeout: a.opts.IdleTimeout, Now: a.opts.Now,
			AdaptiveThinking: catalog.AdaptiveThinking(r.APIModel)})
	}
	return nil, prepare.UnsupportedModeError{Mode: r.Mode}
}
