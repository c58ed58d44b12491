package engine

import (
	"octet.dev/host/runtime/internal/catalog"
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
// Provider. APIKey is the credential; never log it.
type Route struct {
	ModelID  string // catalog or inline id
	APIModel string // the model name sent to the provider
	Provider string
	Mode     string // openai-compatible | openai-responses | anthropic-messages
	BaseURL  string
	APIKey   string
	Headers  map[string]string
	// SupportsReasoning reports whether the model reasons (Responses routes
	// then carry encrypted reasoning forward).
	SupportsReasoning bool
	// AcceptsPromptCacheKey reports that the route's Chat Completions
	// endpoint is known to accept prompt_cache_key (OpenAI's own API, the
	// built-in openai entries); Responses routes always get one.
	AcceptsPromptCacheKey bool
	// Transport is the catalog entry's transport: "" or "http", or
	// "websocket" for the Responses WebSocket mode (openai-responses
	// routes of ~/.octet/models.json or the built-in catalog; inline
	// routes always use HTTP).
	Transport string
	// AudioOutput asks the route for audio output (an openai-compatible
	// route whose model declares audio among its output modalities).
	AudioOutput bool
	// ImageOutput offers the model the image_generation tool (an
	// openai-responses route whose model declares image among its output
	// modalities).
	ImageOutput bool
}

// ProviderFactory builds the Provider for a route. It returns an error
// (reported as route_invalid, or unsupported for an unknown mode) when it
// cannot.
type ProviderFactory func(Route) (Provider, error)

// errUnsupportedMode marks a route whose wire mode this build cannot serve.
type errUnsupportedMode struct{ mode string }

func (e errUnsupportedMode) Error() string {
	return "provider_mode " + e.mode + " is not served by this build yet"
}

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
	return nil, errUnsupportedMode{r.Mode}
}
