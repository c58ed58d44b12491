package catalog

import "sync"

// Built-in catalog, reviewed against the providers' public documentation as
// stored on 2026-11-29. Each entry's comment names the public page the
// figures came from (by page title). Prices are USD per million tokens at the
// standard short-context tier; see Cost. Where a price could not be confirmed
// on an official page, Cost is nil and the comment says what is missing.
//
// Wire mode for OpenAI models: OpenAI's Chat Completions endpoint refuses
// function tools combined with a reasoning effort other than "none" from the
// GPT-5.4 generation on, and codex and pro models are served by the Responses
// API only, so every OpenAI model from GPT-5.4 on uses openai-responses. Older
// chat models and the audio models use openai-compatible (Chat Completions,
// the only mode that carries native audio input).
//
// Models shut down before 2026-11-29 are left out (o4-mini, gpt-4.1-nano,
// gpt-5-codex, claude-opus-4-1, claude-opus-4, claude-sonnet-4), as is
// claude-sonnet-4-5, which retires on 2026-11-30.

// The built-in endpoints declare reasoning updates
// (Model.EndpointReasoningUpdates): OpenAI's Responses and Chat Completions
// APIs and Anthropic's Messages API take a reasoning change during a run,
// as a message in the conversation (a developer item, a system message, a
// text block of the user turn) and as a new reasoning baseline from one
// request to the next (on Messages, a thinking mode turned on or off
// waits for a new assistant turn; the engine holds it). No built-in model
// declares them (Model.ReasoningUpdates), so no built-in route is
// qualified for reasoning changes during a run until one does.
const builtinEndpointReasoningUpdates = true

var (
	textImage = []string{ModalityText, ModalityImage}
	textAudio = []string{ModalityText, ModalityAudio}
)

// openai returns a built-in OpenAI route.
func openai(id, name string, mode Mode, window, output int, modalities []string, reasoning bool, cost *Cost) Model {
	return Model{
		ID:                  id,
		Provider:            ProviderOpenAI,
		Name:                name,
		APIModel:            id,
		Mode:                mode,
		ContextWindowTokens: window,
		MaxOutputTokens:     output,
		InputModalities:     modalities,
		SupportsReasoning:   reasoning,
		Cost:                cost,
		BaseURL:             OpenAIBaseURL,
		CredentialEnv:       OpenAICredentialEnv,

		EndpointReasoningUpdates: builtinEndpointReasoningUpdates,
	}
}

// audioOut marks a built-in route whose model answers with audio too
// (Chat Completions audio output).
func audioOut(m Model) Model {
	m.OutputModalities = textAudio
	return m
}

// anthropic returns a built-in Anthropic route. Every current Claude model
// takes text and image input and supports extended or adaptive thinking.
func anthropic(id, name string, window, output int, cost *Cost) Model {
	return Model{
		ID:                  id,
		Provider:            ProviderAnthropic,
		Name:                name,
		APIModel:            id,
		Mode:                ModeAnthropicMessages,
		ContextWindowTokens: window,
		MaxOutputTokens:     output,
		InputModalities:     textImage,
		SupportsReasoning:   true,
		Cost:                cost,
		BaseURL:             AnthropicBaseURL,
		CredentialEnv:       AnthropicCredentialEnv,

		EndpointReasoningUpdates: builtinEndpointReasoningUpdates,
	}
}

// usd returns a Cost: input, output, cache read and cache write prices.
func usd(input, output, cacheRead, cacheWrite float64) *Cost {
	return &Cost{Input: input, Output: output, CacheRead: cacheRead, CacheWrite: cacheWrite, Currency: CurrencyUSD}
}

// builtinModels is the built-in table, built on first use rather than at
// package init (a hello never needs it).
var builtinModels = sync.OnceValue(builtinTable)

func builtinTable() []Model {
	return []Model{
		// ---- OpenAI: GPT-6 generation ----

		// Source: OpenAI API docs "Models" (flagship table, Nov 2026):
		// 1.05M context, 128K output, $8 in / $40 out. Cost nil: the cached-input
		// and cache-write rates were not found on an official page (secondary
		// reports say $0.40 cached input).
		openai("gpt-6.2-astra", "GPT-6.2 Astra", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, nil),

		// Source: OpenAI API docs model page "GPT-6.2 Sol".
		openai("gpt-6.2-sol", "GPT-6.2 Sol", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(2, 10, 0.10, 2.50)),

		// Source: OpenAI API docs model page "GPT-6.1 Terra".
		openai("gpt-6.1-terra", "GPT-6.1 Terra", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(1, 5, 0.05, 1.25)),

		// Source: limits from the OpenAI "Using GPT-6" guide and model listings;
		// prices as quoted from the "GPT-6.1 Sol" model page by LiteLLM's "Day 0
		// Support: GPT-6.1 Sol" post and Apidog's GPT-6.1 Sol API guide (the
		// official page itself was not in the index).
		openai("gpt-6.1-sol", "GPT-6.1 Sol", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(2, 10, 0.10, 2.50)),

		// Source: OpenAI API docs "Compare models" entry for GPT-6 Astra (window,
		// output, input, cached input, cache writes, output).
		openai("gpt-6-astra", "GPT-6 Astra", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(10, 50, 1, 12.50)),

		// Source: OpenAI API docs model page "GPT-6 Sol" (superseded by GPT-6.1 Sol).
		openai("gpt-6-sol", "GPT-6 Sol", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(2, 10, 0.20, 2.50)),

		// Source: OpenAI API docs model page "GPT-6 Luna".
		openai("gpt-6-luna", "GPT-6 Luna", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(0.10, 0.50, 0.01, 0.125)),

		// ---- OpenAI: GPT-5.x ----

		// The bare family name, which the protocol source's own example request
		// uses ("model":"gpt-5.6"). ASSUMPTIONS, not confirmed on an official
		// OpenAI page: the API serves "gpt-5.6" as an alias of the family's
		// flagship tier, GPT-5.6 Sol (as third-party API guides report; OpenAI's
		// pages name the tiers only), so the name is sent unchanged and the
		// figures are Sol's below: 1.05M context, 128K output, text and image
		// input, reasoning, Responses only like every GPT-5.4+ model. Cost nil as
		// for Sol. A caller who needs a definite tier names gpt-5.6-sol,
		// gpt-5.6-terra or gpt-5.6-luna.
		openai("gpt-5.6", "GPT-5.6", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, nil),

		// Source: OpenAI API docs model page "GPT-5.6 Sol" (1.05M context, 128K
		// output). Cost nil: the page lists a promotional $4 / $0.40 / $20 rate
		// "until at least 2026-11-21"; the rate after that date is unconfirmed.
		openai("gpt-5.6-sol", "GPT-5.6 Sol", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, nil),

		// Source: OpenAI API docs "Models" (GPT-5.6 Terra: $2 in / $12 out, 1.05M
		// context, 128K output); cached input $0.20 as reported by PromptFuel's
		// release notes; cache writes at the 1.25x-input rule stated on the GPT-5.6
		// model pages.
		openai("gpt-5.6-terra", "GPT-5.6 Terra", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(2, 12, 0.20, 2.50)),

		// Source: OpenAI API docs model page "GPT-5.6 Luna" (cache writes at the
		// 1.25x-input rule stated there).
		openai("gpt-5.6-luna", "GPT-5.6 Luna", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, usd(0.20, 1.20, 0.02, 0.25)),

		// Source: OpenAI API docs "Models" (earlier flagship table: GPT-5.5, 1M
		// context, 128K output, $5 in / $30 out). Cost nil: cached-input and
		// cache-write rates not confirmed on an official page. The window is the
		// table's rounded "1M"; some gateways list 1,050,000.
		openai("gpt-5.5", "GPT-5.5", ModeOpenAIResponses, 1_000_000, 128_000, textImage, true, nil),

		// Source: OpenAI API docs "Models" (GPT-5.4: $2.50 in / $15 out, 128K
		// output) and gateway listings for the 1,050,000 window. Cost nil: cached
		// rate not confirmed on an official page.
		openai("gpt-5.4", "GPT-5.4", ModeOpenAIResponses, 1_050_000, 128_000, textImage, true, nil),

		// Source: OpenAI API docs "Models" (GPT-5.4 mini: 400K context, 128K
		// output, $0.75 in / $4.50 out). Cost nil: cached rate not confirmed.
		openai("gpt-5.4-mini", "GPT-5.4 mini", ModeOpenAIResponses, 400_000, 128_000, textImage, true, nil),

		// Source: OpenAI deprecations page (codex variant, shutdown 2027-04-01) and
		// gateway listings (400K context, 128K output, $1.75 / $14). Cost nil: not
		// confirmed on an official page. Codex models are Responses-only.
		openai("gpt-5.3-codex", "GPT-5.3 Codex", ModeOpenAIResponses, 400_000, 128_000, textImage, true, nil),

		// Source: OpenAI API docs model page "GPT-5.1". Shutdown 2027-04-01.
		openai("gpt-5.1", "GPT-5.1", ModeOpenAICompatible, 400_000, 128_000, textImage, true, usd(1.25, 10, 0.125, 0)),

		// Source: OpenAI API docs model page "GPT-5" (input price re-checked in the
		// "GPT-5.1" page's quick comparison). Deprecated; shutdown 2026-12-11.
		openai("gpt-5", "GPT-5", ModeOpenAICompatible, 400_000, 128_000, textImage, true, usd(1.25, 10, 0.125, 0)),

		// Source: OpenAI API docs model page "GPT-5 mini" (input price re-checked in
		// the "GPT-5.1" page's quick comparison). Deprecated; shutdown 2026-12-11.
		openai("gpt-5-mini", "GPT-5 mini", ModeOpenAICompatible, 400_000, 128_000, textImage, true, usd(0.25, 2, 0.025, 0)),

		// Source: OpenAI API docs model page "GPT-5 nano". Deprecated; shutdown 2026-12-11.
		openai("gpt-5-nano", "GPT-5 nano", ModeOpenAICompatible, 400_000, 128_000, textImage, true, usd(0.05, 0.40, 0.005, 0)),

		// ---- OpenAI: earlier chat and reasoning models ----

		// Source: OpenAI API docs model page "GPT-4.1", cross-checked against the
		// Vercel AI Gateway "GPT-4.1" provider table. Shutdown 2027-01-14.
		openai("gpt-4.1", "GPT-4.1", ModeOpenAICompatible, 1_047_576, 32_768, textImage, false, usd(2, 8, 0.50, 0)),

		// Source: OpenAI API docs model page "GPT-4.1 mini", cross-checked against
		// LiteLLM's GPT-4.1 price table. Shutdown 2027-01-14.
		openai("gpt-4.1-mini", "GPT-4.1 mini", ModeOpenAICompatible, 1_047_576, 32_768, textImage, false, usd(0.40, 1.60, 0.10, 0)),

		// Source: OpenAI API docs model page "GPT-4o", cross-checked against the
		// CommitBrief "Provider OpenAI" wiki price table. Shutdown 2027-01-14.
		openai("gpt-4o", "GPT-4o", ModeOpenAICompatible, 128_000, 16_384, textImage, false, usd(2.50, 10, 1.25, 0)),

		// Source: OpenAI API docs model page "GPT-4o mini", cross-checked as for
		// GPT-4o. Shutdown 2027-01-14.
		openai("gpt-4o-mini", "GPT-4o mini", ModeOpenAICompatible, 128_000, 16_384, textImage, false, usd(0.15, 0.60, 0.075, 0)),

		// Source: OpenAI API docs model page "o3" (figures as published after the
		// June 2025 price change; not re-read in the index). Deprecated; shutdown
		// 2026-12-11.
		openai("o3", "o3", ModeOpenAICompatible, 200_000, 100_000, textImage, true, usd(2, 8, 0.50, 0)),

		// ---- OpenAI: audio (Chat Completions with wav/mp3 input) ----
		// Cost holds the text-token rates; audio tokens are billed separately.

		// Source: OpenAI API docs model page "GPT-Audio-1.5" (audio tokens $32 in / $64 out;
		// modalities: text and audio in and out, image not supported — so the
		// protocol source's media example, image-audio-image on this model, is
		// refused with media_unsupported; see docs/runs-and-tools.md).
		audioOut(openai("gpt-audio-1.5", "GPT-Audio-1.5", ModeOpenAICompatible, 128_000, 16_384, textAudio, false, usd(2.50, 10, 0, 0))),

		// Source: OpenAI API docs model page "GPT-Audio" (audio tokens $32 in / $64 out).
		audioOut(openai("gpt-audio", "GPT-Audio", ModeOpenAICompatible, 128_000, 16_384, textAudio, false, usd(2.50, 10, 0, 0))),

		// Source: OpenAI API docs model page "gpt-audio-mini".
		audioOut(openai("gpt-audio-mini", "GPT-Audio mini", ModeOpenAICompatible, 128_000, 16_384, textAudio, false, usd(0.60, 2.40, 0, 0))),

		// Source: OpenAI API docs model page "GPT-4o Audio" (preview; audio tokens
		// $40 in / $80 out).
		audioOut(openai("gpt-4o-audio-preview", "GPT-4o Audio (preview)", ModeOpenAICompatible, 128_000, 16_384, textAudio, false, usd(2.50, 10, 0, 0))),

		// ---- Anthropic ----
		// CacheWrite is the 5-minute cache write price.

		// Source: Claude API docs "Models overview" (Claude Fable 5.2, released
		// 2026-11-09: 1M context, 128K output, $8 in / $40 out). Cost nil: cache
		// prices not confirmed on an official page.
		anthropic("claude-fable-5-2", "Claude Fable 5.2", 1_000_000, 128_000, nil),

		// Source: Claude API docs "Claude Fable 5.1" ($10 / $50; cache reads cut to a
		// quarter of Fable 5's) and LiteLLM's Fable 5.1 pricing note ($0.25 cache
		// read, $12.50 5-minute cache write).
		anthropic("claude-fable-5-1", "Claude Fable 5.1", 1_000_000, 128_000, usd(10, 50, 0.25, 12.50)),

		// Source: Claude API docs "Claude Opus 5.5".
		anthropic("claude-opus-5-5", "Claude Opus 5.5", 1_000_000, 128_000, usd(4, 20, 0.20, 5)),

		// Source: Claude API docs "Claude Opus 5" (legacy).
		anthropic("claude-opus-5", "Claude Opus 5", 1_000_000, 128_000, usd(5, 25, 0.50, 6.25)),

		// Source: Claude API docs "Claude Sonnet 5.5".
		anthropic("claude-sonnet-5-5", "Claude Sonnet 5.5", 1_000_000, 128_000, usd(2, 10, 0.20, 2.50)),

		// Source: Claude API docs "Claude Sonnet 5" (legacy).
		anthropic("claude-sonnet-5", "Claude Sonnet 5", 1_000_000, 128_000, usd(2, 10, 0.20, 2.50)),

		// Source: Claude API docs "Claude Haiku 5.5" (prompts up to 100K tokens; 5x
		// above that, not represented). The $0.01 cache read is from Apidog's
		// Claude Haiku 5.5 API guide; the official excerpt was cut before it.
		anthropic("claude-haiku-5-5", "Claude Haiku 5.5", 1_000_000, 128_000, usd(0.10, 0.50, 0.01, 0.125)),

		// Source: Claude API docs "Claude Opus 4.8" (legacy: 1M context, 128K
		// output, $5 / $25). Cost nil: cache prices not confirmed.
		anthropic("claude-opus-4-8", "Claude Opus 4.8", 1_000_000, 128_000, nil),

		// Source: Claude API docs "Claude Opus 4.6" (legacy) and the Claude
		// "Pricing" page (cache write 1.25x, cache read 0.1x input for Claude 4.x).
		anthropic("claude-opus-4-6", "Claude Opus 4.6", 1_000_000, 128_000, usd(5, 25, 0.50, 6.25)),

		// Source: Claude API docs "Claude Opus 4.5" (legacy; dated model ID) and the
		// Claude "Pricing" page.
		anthropic("claude-opus-4-5-20251101", "Claude Opus 4.5", 200_000, 64_000, usd(5, 25, 0.50, 6.25)),

		// Source: Claude API docs "Claude Sonnet 4.6" (legacy) and the Claude
		// "Pricing" page.
		anthropic("claude-sonnet-4-6", "Claude Sonnet 4.6", 1_000_000, 128_000, usd(3, 15, 0.30, 3.75)),

		// Source: Claude API docs "Models overview" comparison rows for Claude Haiku
		// 4.5 (200K context, 64K output, $1 / $5) and the Claude "Pricing" page.
		anthropic("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, usd(1, 5, 0.10, 1.25)),
	}
}
