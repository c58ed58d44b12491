package catalog

import (
	"slices"
	"sort"
	"strings"

	"octet.dev/host/protocol"
)

// Mode is the wire protocol a route speaks.
type Mode string

// The wire modes a route may use.
const (
	// ModeOpenAICompatible is OpenAI Chat Completions (POST .../chat/completions).
	ModeOpenAICompatible Mode = "openai-compatible"
	// ModeOpenAIResponses is the OpenAI Responses API (POST .../responses).
	ModeOpenAIResponses Mode = "openai-responses"
	// ModeAnthropicMessages is the Anthropic Messages API (POST .../v1/messages).
	ModeAnthropicMessages Mode = "anthropic-messages"
)

// Valid reports whether m is one of the three supported wire modes.
func (m Mode) Valid() bool {
	switch m {
	case ModeOpenAICompatible, ModeOpenAIResponses, ModeAnthropicMessages:
		return true
	}
	return false
}

// Input modalities a route may accept. Text is always accepted.
const (
	ModalityText  = "text"
	ModalityImage = "image"
	ModalityAudio = "audio"
)

// Provider names of the built-in catalog.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Default endpoint roots and credential variables of the built-in providers.
const (
	OpenAIBaseURL          = "https://api.openai.com/v1"
	AnthropicBaseURL       = "https://api.anthropic.com"
	OpenAICredentialEnv    = "OPENAI_API_KEY"
	AnthropicCredentialEnv = "ANTHROPIC_API_KEY"
)

// InlineIDPrefix starts every inline route ID. No catalog ID starts with it.
const InlineIDPrefix = "inline-"

// Cost is a route's list price in US dollars per million tokens, at the
// provider's standard (short-context, non-batch) tier for text tokens.
//
// Input is the price of uncached input tokens, Output of output tokens
// (reasoning tokens included), CacheRead of input tokens served from the
// prompt cache, and CacheWrite of input tokens written to it (Anthropic: the
// 5-minute cache write; OpenAI: the 30-minute cache write where the provider
// bills it). A zero CacheRead or CacheWrite means the provider publishes no
// separate rate for that token class. Long-context surcharges, batch and
// priority tiers, and audio or image token rates are not represented.
//
// It is the models inventory's cost object (protocol.Cost); Currency is
// always "USD".
type Cost = protocol.Cost

// CurrencyUSD is the only currency the catalog records.
const CurrencyUSD = "USD"

// Model is one route the host can run.
type Model struct {
	// ID is the catalog identifier a run request names: the provider's model
	// name for built-ins, the configured id (or "provider/id" when that would
	// collide) for configured models, and "inline-" plus a digest for inline
	// routes.
	ID string
	// Provider is "openai", "anthropic", or a configured or inline provider name.
	Provider string
	// Name is the display name.
	Name string
	// APIModel is the model name sent to the provider.
	APIModel string
	// Mode is the wire mode used for this route.
	Mode Mode
	// ContextWindowTokens is the total context window (input plus output).
	ContextWindowTokens int
	// MaxOutputTokens is the largest output a single response may have.
	MaxOutputTokens int
	// InputModalities always includes "text"; it may include "image" and
	// "audio". It states what the model accepts, whatever the wire mode; use
	// EffectiveModalities for what the route accepts.
	InputModalities []string
	// SupportsReasoning reports whether the model produces reasoning and takes
	// a reasoning effort.
	SupportsReasoning bool
	// ReasoningUpdates reports that the model takes a reasoning update
	// inside the conversation (a host message announcing a new effort)
	// while the request's effort stays pinned. Set only by a configured
	// model ("reasoning_updates": true in ~/.octet/models.json), never
	// guessed from a name; false for built-in and inline routes. The route
	// admits RunControl.SetReasoning during a run only when its endpoint
	// declares them too (EndpointReasoningUpdates).
	ReasoningUpdates bool
	// EndpointReasoningUpdates reports that the endpoint serving the route
	// takes reasoning changes during a run: a reasoning update message in
	// the conversation and a new reasoning baseline from one request to
	// the next. Declared by a configured provider ("reasoning_updates":
	// true on the provider in ~/.octet/models.json) and by the built-in
	// OpenAI and Anthropic endpoints; false for inline, Codex and Copilot
	// routes.
	EndpointReasoningUpdates bool
	// ReasoningUltra reports that the route takes the Ultra reasoning
	// mode: a new request baseline during a run ("reasoning_ultra": true,
	// configured models with ReasoningUpdates only; during a run the
	// endpoint must declare reasoning updates too).
	ReasoningUltra bool
	// Cost is nil when the price is unknown.
	Cost *Cost
	// BaseURL is the endpoint root, without a trailing slash.
	BaseURL string
	// CredentialEnv names the environment variable that holds the API key;
	// empty for inline routes, whose key comes with the request.
	CredentialEnv string
	// Inline is true for routes defined inline in a run request.
	Inline bool
	// NativeCompaction reports that the route compacts with the provider's
	// own endpoint (POST base_url/responses/compact) instead of a
	// summarizer call: declared by a ~/.octet/models.json provider or
	// model ("native_compaction": true, openai-responses only); never
	// true for an inline route.
	NativeCompaction bool
	// LifecycleEvents reports that the route's provider opted into
	// provider_lifecycle readiness telemetry ("lifecycle_events": true in
	// ~/.octet/models.json). Only configured providers can: it is false
	// for built-in and inline routes.
	LifecycleEvents bool
	// OutputModalities lists what the model produces besides text: nil
	// for text only; with "audio" for a model that answers with audio (the
	// built-in gpt-audio entries, "output_modalities" in
	// ~/.octet/models.json), with "image" for one that generates images.
	// They are requested only where AudioOutput and ImageOutput report
	// true.
	OutputModalities []string
	// Transport is how the route's calls travel: "" or TransportHTTP for
	// HTTP with server-sent events, TransportWebSocket for the OpenAI
	// Responses WebSocket mode (openai-responses routes only; a refused
	// handshake falls back to HTTP). Set by a configured provider or model
	// ("transport" in ~/.octet/models.json) or a built-in entry; inline
	// routes always use HTTP.
	Transport string
	// NativeSteering reports that the model takes mid-response steering
	// (response.steer) over the Responses WebSocket mode: route metadata
	// ("native_steering": true in ~/.octet/models.json), never inferred
	// from the model's name. It qualifies a route for native steering only
	// together with the rest of NativeSteeringQualified.
	NativeSteering bool
}

// Transports of Model.Transport.
const (
	TransportHTTP      = "http"
	TransportWebSocket = "websocket"
)

// Vision reports whether the route accepts image input.
func (m Model) Vision() bool {
	return slices.Contains(m.InputModalities, ModalityImage)
}

// Audio reports whether the route accepts native audio input: the model
// declares audio and the route speaks OpenAI Chat Completions, the only wire
// mode that carries native audio today (in the AudioFormats).
func (m Model) Audio() bool {
	return slices.Contains(m.InputModalities, ModalityAudio) && m.Mode == ModeOpenAICompatible
}

// AudioOutput reports whether the route asks for audio output: the model
// declares audio among its output modalities and the route speaks OpenAI
// Chat Completions, the only wire mode with audio output.
func (m Model) AudioOutput() bool {
	return slices.Contains(m.OutputModalities, ModalityAudio) && m.Mode == ModeOpenAICompatible
}

// ImageOutput reports whether the route offers the model image generation:
// the model declares image among its output modalities and the route
// speaks OpenAI Responses, the only wire mode with the image_generation
// tool.
func (m Model) ImageOutput() bool {
	return slices.Contains(m.OutputModalities, ModalityImage) && m.Mode == ModeOpenAIResponses
}

// EffectiveModalities returns the route-effective input modalities in the
// order text, image, audio: text always, image when declared, audio only when
// Audio reports true.
func (m Model) EffectiveModalities() []string {
	out := []string{ModalityText}
	if m.Vision() {
		out = append(out, ModalityImage)
	}
	if m.Audio() {
		out = append(out, ModalityAudio)
	}
	return out
}

// Endpoint returns the URL the route posts to.
func (m Model) Endpoint() string {
	return Endpoint(m.Mode, m.BaseURL)
}

// clone returns a deep copy of m.
func (m Model) clone() Model {
	m.InputModalities = slices.Clone(m.InputModalities)
	m.OutputModalities = slices.Clone(m.OutputModalities)
	if m.Cost != nil {
		c := *m.Cost
		m.Cost = &c
	}
	return m
}

// Endpoint returns the URL a route in mode posts to, given its base URL.
// Trailing slashes on baseURL are trimmed. OpenAI Chat Completions posts to
// base+"/chat/completions" and Responses to base+"/responses" (so an OpenAI
// base URL normally ends in "/v1"). Anthropic Messages posts to
// base+"/v1/messages", or base+"/messages" when base already ends in "/v1".
// Endpoint returns "" for an unknown mode.
func Endpoint(mode Mode, baseURL string) string {
	base := strings.TrimRight(baseURL, "/")
	switch mode {
	case ModeOpenAICompatible:
		return base + "/chat/completions"
	case ModeOpenAIResponses:
		return base + "/responses"
	case ModeAnthropicMessages:
		if strings.HasSuffix(base, "/v1") {
			return base + "/messages"
		}
		return base + "/v1/messages"
	}
	return ""
}

// Builtin returns a fresh copy of the built-in catalog, sorted by provider and
// then by ID.
func Builtin() []Model {
	out := make([]Model, len(builtinModels()))
	for i, m := range builtinModels() {
		out[i] = m.clone()
	}
	sortModels(out)
	return out
}

// sortModels orders models by provider, then ID.
func sortModels(ms []Model) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Provider != ms[j].Provider {
			return ms[i].Provider < ms[j].Provider
		}
		return ms[i].ID < ms[j].ID
	})
}

// AudioFormats are the audio formats an audio route accepts, as sniffed
// (OpenAI Chat's input_audio formats).
var AudioFormats = []string{"wav", "mp3"}

// NativeSteeringQualified reports whether a run on m may steer natively:
// an openai-responses route over the WebSocket mode whose
// metadata says the model takes steering (NativeSteering), and a run that
// uses no provider-side compaction (the provider refuses to steer a
// response with automatic compaction) and has no hard cumulative ceiling
// (a steered successor response would run past what the ceiling counted).
// Every other run keeps queued steering.
func (m Model) NativeSteeringQualified(providerCompaction, cumulativeCeiling bool) bool {
	return m.NativeSteering && m.Mode == ModeOpenAIResponses && m.Transport == TransportWebSocket &&
		!m.Inline && !providerCompaction && !cumulativeCeiling
}
