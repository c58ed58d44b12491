package fakeprovider

import "fmt"

// Mode is a provider wire format, named as CONTRACT §8's provider_mode.
type Mode string

// The three wire modes.
const (
	// ModeChat is OpenAI Chat Completions: POST /v1/chat/completions.
	ModeChat Mode = "openai-compatible"
	// ModeResponses is OpenAI Responses: POST /v1/responses.
	ModeResponses Mode = "openai-responses"
	// ModeAnthropic is Anthropic Messages: POST /v1/messages.
	ModeAnthropic Mode = "anthropic-messages"
)

var allModes = []Mode{ModeChat, ModeResponses, ModeAnthropic}

// Modes returns the three wire modes.
func Modes() []Mode { return append([]Mode(nil), allModes...) }

// ParseMode accepts a provider_mode name ("openai-compatible",
// "openai-responses", "anthropic-messages") or the name of a fixture
// folder ("openai-chat", "openai-responses", "anthropic").
func ParseMode(s string) (Mode, error) {
	for _, m := range allModes {
		if s == string(m) || s == m.fixtureDir() {
			return m, nil
		}
	}
	return "", fmt.Errorf("fakeprovider: unknown mode %q", s)
}

// fixtureDir is the folder of mode's fixtures under fixtures/.
func (m Mode) fixtureDir() string {
	switch m {
	case ModeChat:
		return "openai-chat"
	case ModeResponses:
		return "openai-responses"
	case ModeAnthropic:
		return "anthropic"
	}
	return ""
}

// Endpoint paths.
const (
	pathChat      = "/v1/chat/completions"
	pathResponses = "/v1/responses"
	pathMessages  = "/v1/messages"
	pathModels    = "/v1/models"
	// pathResponsesCompact is the Responses compaction endpoint.
	pathResponsesCompact = "/v1/responses/compact"
	// pathCodex is the ChatGPT Codex backend's Responses endpoint
	// (chatgpt.com/backend-api/codex/responses), where a Codex ChatGPT
	// login goes.
	pathCodex = "/backend-api/codex/responses"
)

func modeOfPath(p string) Mode {
	switch p {
	case pathChat:
		return ModeChat
	case pathResponses, pathCodex:
		return ModeResponses
	case pathMessages:
		return ModeAnthropic
	}
	return ""
}
