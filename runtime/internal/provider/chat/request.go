package chat

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// chatRequest is the request body. Field order is the wire order.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	Tools               []chatTool    `json:"tools,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitzero"`
	ReasoningEffort     string        `json:"reasoning_effort,omitempty"`
	PromptCacheKey      string        `json:"prompt_cache_key,omitempty"`
	// Modalities and Audio ask for audio output (routes with
	// Config.AudioOutput): modalities ["text","audio"] and the voice and
	// format the API requires with them.
	Modalities []string   `json:"modalities,omitempty"`
	Audio      *chatAudio `json:"audio,omitempty"`
}

// chatAudio is the request's audio output parameters.
type chatAudio struct {
	Voice  string `json:"voice"`
	Format string `json:"format"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a *string, or a []chatPart for a user message with
	// media; nil (null) for an assistant message that only calls tools
	// (the API requires content unless tool_calls is present).
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// chatPart is one part of a user message's content array: text,
// image_url or input_audio.
type chatPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ImageURL   *chatImageURL   `json:"image_url,omitzero"`
	InputAudio *chatInputAudio `json:"input_audio,omitzero"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters"`
}

// emptyObjectSchema is sent for a tool that declares no parameters.
var emptyObjectSchema = jsontext.Value(`{"type":"object","properties":{}}`)

// marshalOpts replaces invalid UTF-8 (e.g. from a binary tool result) with
// U+FFFD instead of failing the call.
var marshalOpts = jsontext.AllowInvalidUTF8(true)

// buildRequest returns the JSON body for req.
func buildRequest(req provider.Request) ([]byte, error) { return buildRequestAudio(req, nil) }

// buildRequestAudio is buildRequest asking for audio output when audio is
// set.
func buildRequestAudio(req provider.Request, audio *chatAudio) ([]byte, error) {
	body, err := requestBody(req, audio)
	if err != nil {
		return nil, err
	}
	if b, ok := body.appendJSON(make([]byte, 0, sizeHint(req))); ok {
		return b, nil
	}
	return json.Marshal(&body, marshalOpts)
}

// sizeHint is a first guess at the size of req's body, so that encoding it
// seldom grows the buffer.
func sizeHint(req provider.Request) int {
	n := 512 + len(req.System)
	for i := range req.Messages {
		m := &req.Messages[i]
		n += 64 + len(m.Text)
		for _, tc := range m.ToolCalls {
			n += 96 + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Description) + len(t.Parameters)
	}
	return n
}

// requestBody returns the body of req, not yet encoded.
func requestBody(req provider.Request, audio *chatAudio) (chatRequest, error) {
	if req.Model == "" {
		return chatRequest{}, errors.New("chat: request has no model")
	}
	// Each call and its results carry one id the wire accepts, never
	// one repeated (a history from before the host assigned ids).
	req.Messages = provider.UniqueCallIDs(req.Messages, provider.ChatCallIDs)
	body := chatRequest{
		Model:               req.Model,
		Messages:            make([]chatMessage, 0, len(req.Messages)+1),
		Stream:              true,
		StreamOptions:       streamOptions{IncludeUsage: true},
		MaxCompletionTokens: max(req.MaxOutputTokens, 0),
		ReasoningEffort:     req.ReasoningEffort,
		PromptCacheKey:      req.CacheKey, // empty unless the route accepts it (Provider.Stream)
	}
	if audio != nil {
		body.Modalities, body.Audio = []string{"text", "audio"}, audio
	}
	if req.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: &req.System})
	}
	// Every tool call is followed by its result, a stand-in for one the
	// conversation never answered: the API rejects "tool_calls" that "must
	// be followed by tool messages".
	var pending provider.PendingCalls
	for i := range req.Messages {
		m := &req.Messages[i]
		body.Messages = appendResults(body.Messages, pending.Before(m))
		switch m.Role {
		case provider.RoleUser:
			cm := chatMessage{Role: "user", Content: &m.Text}
			if len(m.Media) > 0 {
				parts, err := userParts(i, m)
				if err != nil {
					return chatRequest{}, err
				}
				cm.Content = parts
			}
			body.Messages = append(body.Messages, cm)
		case provider.RoleAssistant:
			// Reasoning is not sent back: Chat Completions has no field for
			// it, and the blocks of other wires are theirs alone.
			cm := chatMessage{Role: "assistant"}
			if m.Text != "" || len(m.ToolCalls) == 0 {
				cm.Content = &m.Text
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if args == "" {
					args = "{}" // servers that parse arguments reject ""
				}
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{
					ID: tc.ID, Type: "function",
					Function: chatFunctionCall{Name: tc.Name, Arguments: args},
				})
			}
			body.Messages = append(body.Messages, cm)
		case provider.RoleTool:
			body.Messages = appendResults(body.Messages, req.Messages[i:i+1])
		case provider.RoleDeveloper:
			// "system" rather than "developer": every compatible server
			// takes it.
			body.Messages = append(body.Messages, chatMessage{Role: "system", Content: &m.Text})
		default:
			return chatRequest{}, fmt.Errorf("chat: message %d has unknown role %q", i, m.Role)
		}
	}
	body.Messages = appendResults(body.Messages, pending.Before(nil))
	tools, err := buildTools(req.Tools)
	if err != nil {
		return chatRequest{}, err
	}
	body.Tools = tools
	return body, nil
}

// appendResults appends tool results as tool messages. The wire has no
// error flag: a failed or denied call's result says so in its text.
func appendResults(msgs []chatMessage, results []provider.Message) []chatMessage {
	for i := range results {
		msgs = append(msgs, chatMessage{Role: "tool", Content: &results[i].Text, ToolCallID: results[i].ToolCallID})
	}
	return msgs
}

// buildTools returns the request's tools array.
func buildTools(specs []provider.ToolSpec) ([]chatTool, error) {
	var out []chatTool
	for _, t := range specs {
		params := jsontext.Value(t.Parameters)
		if len(params) == 0 {
			params = emptyObjectSchema
		} else if !params.IsValid() {
			return nil, fmt.Errorf("chat: tool %q parameters are not valid JSON", t.Name)
		}
		out = append(out, chatTool{Type: "function", Function: chatFunction{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return out, nil
}

// ToolArrayBytes implements provider.ToolSizer: the size of the tools
// array exactly as requests carry it, 0 for no tools.
func (p *Provider) ToolArrayBytes(specs []provider.ToolSpec) (int, error) {
	tools, err := buildTools(specs)
	if err != nil || len(tools) == 0 {
		return 0, err
	}
	return len(appendTools(nil, tools)), nil
}

// userParts returns the content array of a user message with media: the
// text (when not empty), then each media item in order.
func userParts(i int, m *provider.Message) ([]chatPart, error) {
	parts := make([]chatPart, 0, len(m.Media)+1)
	if m.Text != "" {
		parts = append(parts, chatPart{Type: "text", Text: m.Text})
	}
	for j := range m.Media {
		md := &m.Media[j]
		switch md.Type {
		case provider.MediaImage:
			url := edge.DataURL(md.MIMEType, md.Data)
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}})
		case provider.MediaAudio:
			parts = append(parts, chatPart{Type: "input_audio", InputAudio: &chatInputAudio{
				Data: edge.Base64(md.Data), Format: md.Format,
			}})
		default:
			return nil, fmt.Errorf("chat: message %d carries media of unknown type %q", i, md.Type)
		}
	}
	return parts, nil
}
