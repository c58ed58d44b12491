package responses

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// includeEncrypted is the include value that asks for encrypted reasoning.
const includeEncrypted = "reasoning.encrypted_content"

// request is the request body. Field order is the wire order.
type request struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
	// Input holds *userMessage, *assistantMessage, *functionCall,
	// *functionCallOutput and *reasoningItem values, in conversation
	// order.
	Input []any `json:"input"`
	// Tools holds tool values (function tools), then a hostedTool when
	// the route generates images.
	Tools           []any      `json:"tools,omitempty"`
	Reasoning       *reasoning `json:"reasoning,omitempty"`
	MaxOutputTokens int        `json:"max_output_tokens,omitzero"`
	Include         []string   `json:"include,omitempty"`
	PromptCacheKey  string     `json:"prompt_cache_key,omitempty"`
	Store           bool       `json:"store"`
	Stream          bool       `json:"stream"`
}

// userMessage holds a contentPart, then an imagePart per image.
type userMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

// assistantMessage is an earlier answer, sent back in the input-message form
// with string content: the output-message form would need the id and status
// of an item the provider never stored (store:false).
type assistantMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// imagePart is an input_image part with the image inline as a data URL.
type imagePart struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// reasoningItem carries a prior turn's encrypted reasoning. It has no id:
// with store false the provider keeps no items to refer to, and an id makes
// it look one up.
type reasoningItem struct {
	Type             string        `json:"type"`
	ID               string        `json:"id"`
	Summary          []summaryPart `json:"summary"`
	EncryptedContent string        `json:"encrypted_content"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type tool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters"`
	Strict      bool           `json:"strict"`
}

// hostedTool is a tool the provider runs itself: {"type":"image_generation"}.
type hostedTool struct {
	Type string `json:"type"`
}

// imageGenerationTool is the hosted tool of routes that generate images.
var imageGenerationTool = hostedTool{Type: "image_generation"}

type reasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// emptyObjectSchema is sent for a tool that declares no parameters.
var emptyObjectSchema = jsontext.Value(`{"type":"object","properties":{}}`)

// marshalOpts replaces invalid UTF-8 (e.g. from a binary tool result) with
// U+FFFD instead of failing the call.
var marshalOpts = jsontext.AllowInvalidUTF8(true)

// requestOptions are the Provider settings that shape a request body.
type requestOptions struct {
	store     bool // the "store" field
	encrypted bool // ask for encrypted reasoning and send it back
	images    bool // offer the image_generation tool (Config.ImageGeneration)
}

// buildRequest returns the JSON body for req.
func buildRequest(req provider.Request, opts requestOptions) ([]byte, error) {
	body, _, err := buildBody(req, opts)
	if err != nil {
		return nil, err
	}
	return json.Marshal(body, marshalOpts)
}

// itemOwner says where an input item came from: the index of the message
// of req.Messages that produced it, and whether it is a stand-in result
// (provider.PendingCalls) emitted before that message (Message is
// len(req.Messages) for the stand-ins after the last one). The WebSocket
// transport uses it to send only the items a continuation needs.
type itemOwner struct {
	message int
	standIn bool
}

// buildBody returns the request body for req and the owner of each of its
// input items.
func buildBody(req provider.Request, opts requestOptions) (*request, []itemOwner, error) {
	if req.Model == "" {
		return nil, nil, errors.New("responses: request has no model")
	}
	// Each call and its results carry one id the wire accepts, never
	// one repeated (a history from before the host assigned ids).
	req.Messages = provider.UniqueCallIDs(req.Messages, provider.HostCallIDs)
	body := &request{
		Model:           req.Model,
		Instructions:    req.System,
		Input:           make([]any, 0, len(req.Messages)+2),
		MaxOutputTokens: max(req.MaxOutputTokens, 0),
		PromptCacheKey:  req.CacheKey,
		Store:           opts.store,
		Stream:          true,
	}
	if req.ReasoningEffort != "" {
		body.Reasoning = &reasoning{Effort: req.ReasoningEffort, Summary: "auto"}
	}
	if opts.encrypted {
		body.Include = []string{includeEncrypted}
	}
	owners := make([]itemOwner, 0, len(req.Messages)+2)
	own := func(i int, standIn bool) {
		for len(owners) < len(body.Input) {
			owners = append(owners, itemOwner{message: i, standIn: standIn})
		}
	}
	var pending provider.PendingCalls
	for i := range req.Messages {
		m := &req.Messages[i]
		body.Input = appendOutputs(body.Input, pending.Before(m))
		own(i, true)
		switch {
		case m.NativeItems != nil:
			// A native checkpoint's items, verbatim.
			var items []jsontext.Value
			if err := json.Unmarshal(m.NativeItems, &items); err != nil {
				return nil, nil, fmt.Errorf("responses: message %d: the compacted items are not a JSON array: %w", i, err)
			}
			for _, it := range items {
				body.Input = append(body.Input, it)
			}
		case m.Role == provider.RoleUser:
			um, err := buildUser(i, m)
			if err != nil {
				return nil, nil, err
			}
			body.Input = append(body.Input, um)
		case m.Role == provider.RoleAssistant:
			body.Input = appendAssistant(body.Input, m, opts.encrypted)
		case m.Role == provider.RoleTool:
			body.Input = appendOutputs(body.Input, req.Messages[i:i+1])
		case m.Role == provider.RoleDeveloper:
			body.Input = append(body.Input, &userMessage{Role: "developer", Content: []any{contentPart{Type: "input_text", Text: m.Text}}})
		default:
			return nil, nil, fmt.Errorf("responses: message %d has unknown role %q", i, m.Role)
		}
		own(i, false)
	}
	body.Input = appendOutputs(body.Input, pending.Before(nil))
	own(len(req.Messages), true)
	tools, err := buildTools(req.Tools, opts.images)
	if err != nil {
		return nil, nil, err
	}
	body.Tools = tools
	return body, owners, nil
}

// buildTools returns the request's tools array: the function tools, then
// the image_generation tool when images is set.
func buildTools(specs []provider.ToolSpec, images bool) ([]any, error) {
	var out []any
	for _, t := range specs {
		params := jsontext.Value(t.Parameters)
		if len(params) == 0 {
			params = emptyObjectSchema
		} else if !params.IsValid() {
			return nil, fmt.Errorf("responses: tool %q parameters are not valid JSON", t.Name)
		}
		out = append(out, tool{
			Type: "function", Name: t.Name, Description: t.Description, Parameters: params,
		})
	}
	if images {
		out = append(out, imageGenerationTool)
	}
	return out, nil
}

// ToolArrayBytes implements provider.ToolSizer: the size of the tools
// array exactly as requests carry it, 0 for no tools.
func (p *Provider) ToolArrayBytes(specs []provider.ToolSpec) (int, error) {
	tools, err := buildTools(specs, p != nil && p.images) // a nil Provider sizes function tools only
	if err != nil || len(tools) == 0 {
		return 0, err
	}
	b, err := json.Marshal(tools, marshalOpts)
	return len(b), err
}

// buildUser returns the input message of a user message: its text, then
// its images in order. Audio is refused: this wire mode has no part for it.
func buildUser(i int, m *provider.Message) (*userMessage, error) {
	content := make([]any, 1, len(m.Media)+1)
	content[0] = contentPart{Type: "input_text", Text: m.Text}
	for j := range m.Media {
		md := &m.Media[j]
		switch md.Type {
		case provider.MediaImage:
			content = append(content, imagePart{
				Type: "input_image", ImageURL: edge.DataURL(md.MIMEType, md.Data), Detail: "auto",
			})
		case provider.MediaAudio:
			return nil, fmt.Errorf("responses: message %d carries audio, which this wire mode does not accept", i)
		default:
			return nil, fmt.Errorf("responses: message %d carries media of unknown type %q", i, md.Type)
		}
	}
	return &userMessage{Role: "user", Content: content}, nil
}

// appendOutputs appends tool results as function_call_output items. The
// wire has no error flag: a failed or denied call's result says so in its
// text. The builder passes the stand-in results of calls the conversation
// never answered here too, since the API rejects a function_call without
// its output ("No tool output found").
func appendOutputs(input []any, results []provider.Message) []any {
	for i := range results {
		input = append(input, &functionCallOutput{
			Type: "function_call_output", CallID: results[i].ToolCallID, Output: results[i].Text,
		})
	}
	return input
}

// appendAssistant appends the input items of one assistant message in the
// order the model produced them: reasoning, answer text, function calls, each
// followed by the reasoning that came after it.
// Reasoning text is not sent back; only its encrypted form carries the
// model's reasoning across turns, only when asked for, and only from this
// wire: another wire's signature is no encrypted_content the API can
// decrypt.
func appendAssistant(input []any, m *provider.Message, encrypted bool) []any {
	n := len(input)
	if encrypted {
		input = appendReasoning(input, m.ReasoningAfter(provider.WireResponses, 0))
	}
	withReasoning := len(input) > n
	if m.Text != "" || (len(m.ToolCalls) == 0 && !withReasoning) {
		input = append(input, &assistantMessage{
			Type: "message", Role: "assistant", Content: m.Text,
		})
	}
	for i, tc := range m.ToolCalls {
		args := tc.Arguments
		if args == "" {
			args = "{}" // servers that parse arguments reject ""
		}
		input = append(input, &functionCall{
			Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: args,
		})
		if encrypted {
			input = appendReasoning(input, m.ReasoningAfter(provider.WireResponses, i+1))
		}
	}
	return input
}

// appendReasoning appends the signed blocks as encrypted reasoning items. A
// block without the item id the server gave it is left out: the API requires
// the id on a reasoning input item.
func appendReasoning(input []any, rs []provider.ReasoningBlock) []any {
	for _, r := range rs {
		if r.Signature != "" && r.ID != "" {
			input = append(input, &reasoningItem{
				Type: "reasoning", ID: r.ID, Summary: []summaryPart{}, EncryptedContent: r.Signature,
			})
		}
	}
	return input
}
