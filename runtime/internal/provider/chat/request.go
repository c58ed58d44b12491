package chat

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider"
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
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is null for an assistant message that only calls tools
	// (the API requires content unless tool_calls is present).
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
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
func buildRequest(req provider.Request) ([]byte, error) {
	if req.Model == "" {
		return nil, errors.New("chat: request has no model")
	}
	body := chatRequest{
		Model:               req.Model,
		Messages:            make([]chatMessage, 0, len(req.Messages)+1),
		Stream:              true,
		StreamOptions:       streamOptions{IncludeUsage: true},
		MaxCompletionTokens: max(req.MaxOutputTokens, 0),
		ReasoningEffort:     req.ReasoningEffort,
	}
	if req.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case provider.RoleUser:
			body.Messages = append(body.Messages, chatMessage{Role: "user", Content: &m.Text})
		case provider.RoleAssistant:
			// Reasoning is not sent back: Chat Completions has no field for
			// it.
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
			body.Messages = append(body.Messages, chatMessage{Role: "tool", Content: &m.Text, ToolCallID: m.ToolCallID})
		default:
			return nil, fmt.Errorf("chat: message %d has unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		params := jsontext.Value(t.Parameters)
		if len(params) == 0 {
			params = emptyObjectSchema
		} else if !params.IsValid() {
			return nil, fmt.Errorf("chat: tool %q parameters are not valid JSON", t.Name)
		}
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatFunction{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return json.Marshal(&body, marshalOpts)
}
