package messages

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// Thinking budgets derived from Request.ReasoningEffort when
// Config.ThinkingBudget is zero.
const (
	budgetLow    = 2048
	budgetMedium = 8192
	budgetHigh   = 24576
)

// minThinkingBudget is the smallest budget_tokens the API accepts.
const minThinkingBudget = 1024

// minAnswerReserve is the least of max_tokens kept for the answer when
// budget thinking is on: thinking tokens count against max_tokens, so a
// budget just below it leaves a turn that thinks to the cap and is cut
// before it answers or calls a tool.
const minAnswerReserve = 1024

// thinkingConfig is the route's thinking setup (from Config).
type thinkingConfig struct {
	budget   int
	adaptive bool
}

// messagesRequest is the request body. Field order is the wire order.
type messagesRequest struct {
	Model        string        `json:"model"`
	MaxTokens    int           `json:"max_tokens"`
	System       []systemBlock `json:"system,omitempty"`
	Messages     []outMessage  `json:"messages"`
	Tools        []wireTool    `json:"tools,omitempty"`
	Thinking     *wireThinking `json:"thinking,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	Stream       bool          `json:"stream"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitzero"`
}

type outputConfig struct {
	Effort string `json:"effort"`
}

// outMessage is one request message; Content holds the block structs below.
type outMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitzero"`
}

// imageBlock is an image sent inline as base64.
type imageBlock struct {
	Type         string        `json:"type"`
	Source       imageSource   `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitzero"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedThinkingBlock struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type toolUseBlock struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input"`
}

type toolResultBlock struct {
	Type         string        `json:"type"`
	ToolUseID    string        `json:"tool_use_id"`
	Content      string        `json:"content,omitempty"`
	IsError      bool          `json:"is_error"`
	CacheControl *cacheControl `json:"cache_control,omitzero"`
}

type wireTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  jsontext.Value `json:"input_schema"`
	CacheControl *cacheControl  `json:"cache_control,omitzero"`
}

// emptyObject is the input of a tool call whose arguments are not a JSON
// object, and the schema of a tool that declares no parameters.
var (
	emptyObject       = jsontext.Value(`{}`)
	emptyObjectSchema = jsontext.Value(`{"type":"object","properties":{}}`)
)

// marshalOpts replaces invalid UTF-8 (e.g. from a binary tool result) with
// U+FFFD instead of failing the call.
var marshalOpts = jsontext.AllowInvalidUTF8(true)

// buildRequest returns the JSON body for req.
func buildRequest(req provider.Request, tc thinkingConfig) ([]byte, error) {
	if req.Model == "" {
		return nil, errors.New("messages: request has no model")
	}
	// Each call and its results carry one id the wire accepts, never
	// one repeated (a history from before the host assigned ids).
	req.Messages = provider.UniqueCallIDs(req.Messages, provider.HostCallIDs)
	body := messagesRequest{
		Model:     req.Model,
		MaxTokens: req.MaxOutputTokens,
		System:    systemBlocks(req.System),
		Stream:    true,
	}
	if body.MaxTokens <= 0 {
		body.MaxTokens = DefaultMaxTokens
	}
	if req.ReasoningEffort != "" {
		if err := setThinking(&body, req.ReasoningEffort, tc); err != nil {
			return nil, err
		}
	}
	msgs, err := buildMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	markMessages(msgs)
	body.Messages = msgs
	tools, err := buildTools(req.Tools)
	if err != nil {
		return nil, err
	}
	body.Tools = tools
	return json.Marshal(&body, marshalOpts)
}

// buildTools returns the request's tools array.
func buildTools(specs []provider.ToolSpec) ([]wireTool, error) {
	var out []wireTool
	for _, t := range specs {
		schema := jsontext.Value(t.Parameters)
		if len(schema) == 0 {
			schema = emptyObjectSchema
		} else if !schema.IsValid() {
			return nil, fmt.Errorf("messages: tool %q parameters are not valid JSON", t.Name)
		}
		out = append(out, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(out); n > 0 {
		out[n-1].CacheControl = ephemeral // see cache.go
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
	b, err := json.Marshal(tools, marshalOpts)
	return len(b), err
}

// setThinking adds the thinking configuration for effort.
func setThinking(body *messagesRequest, effort string, tc thinkingConfig) error {
	budget := tc.budget
	switch effort {
	case "low":
		budget = cmp.Or(budget, budgetLow)
	case "medium":
		budget = cmp.Or(budget, budgetMedium)
	case "high":
		budget = cmp.Or(budget, budgetHigh)
	default:
		return fmt.Errorf("messages: unknown reasoning effort %q", effort)
	}
	if tc.adaptive {
		body.Thinking = &wireThinking{Type: "adaptive"}
		body.OutputConfig = &outputConfig{Effort: effort}
		return nil
	}
	budget = min(budget, thinkingCap(body.MaxTokens))
	if budget < minThinkingBudget {
		// The API takes no budget below its minimum, and max_tokens has
		// no room for that and an answer: this request goes without
		// thinking rather than with a budget that leaves nothing to answer
		// with.
		return nil
	}
	body.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
	return nil
}

// thinkingCap is the largest budget_tokens a request with maxTokens
// allows: three quarters of it, and never more than all but
// minAnswerReserve, so that the answer keeps at least a quarter of the cap
// (a large cap has room for a real answer or a tool call after long
// thinking) and at least minAnswerReserve tokens (a small one still fits a
// short answer). budget_tokens < max_tokens, as the API requires, follows.
// Below minThinkingBudget + minAnswerReserve the cap is under the API's
// minimum budget.
func thinkingCap(maxTokens int) int {
	return min(maxTokens*3/4, maxTokens-minAnswerReserve)
}

// convBuilder assembles the wire messages and keeps the pairing rule: the
// user turn after an assistant turn with tool_use blocks answers each of
// them with a tool_result, and holds no tool_result for anything else.
type convBuilder struct {
	out []outMessage
	// open are the tool_use ids of the latest assistant turn, in order;
	// answered marks the ones a tool_result already answers.
	open     []string
	answered map[string]bool
}

// buildMessages converts the neutral conversation.
func buildMessages(msgs []provider.Message) ([]outMessage, error) {
	b := convBuilder{out: make([]outMessage, 0, len(msgs)), answered: map[string]bool{}}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case provider.RoleUser:
			if m.NewTurn && len(b.open) > 0 {
				b.endLoop()
			}
			if err := b.addUserMessage(i, m); err != nil {
				return nil, err
			}
		case provider.RoleTool:
			b.addResult(m)
		case provider.RoleDeveloper:
			// No host role in the conversation: a text block of the user
			// turn (after tool results, in the same user message).
			if m.Text != "" {
				b.addUser(textBlock{Type: "text", Text: m.Text})
			}
		case provider.RoleAssistant:
			b.addAssistant(m)
		default:
			return nil, fmt.Errorf("messages: message %d has unknown role %q", i, m.Role)
		}
	}
	b.closeTurn()
	return b.out, nil
}

// addUserMessage adds a user message's text, then its images in order, to
// the current user turn. Audio is refused: this wire mode has no block for
// it.
func (b *convBuilder) addUserMessage(i int, m *provider.Message) error {
	for j := range m.Media {
		if t := m.Media[j].Type; t != provider.MediaImage {
			if t == provider.MediaAudio {
				return fmt.Errorf("messages: message %d carries audio, which this wire mode does not accept", i)
			}
			return fmt.Errorf("messages: message %d carries media of unknown type %q", i, t)
		}
	}
	if m.Text != "" { // the API rejects empty text blocks
		b.addUser(textBlock{Type: "text", Text: m.Text})
	}
	for j := range m.Media {
		md := &m.Media[j]
		b.addUser(imageBlock{Type: "image", Source: imageSource{
			Type: "base64", MediaType: md.MIMEType, Data: edge.Base64(md.Data),
		}})
	}
	return nil
}

// addAssistant appends an assistant turn: the thinking and
// redacted_thinking blocks exactly as the model produced them and in their
// place among the tool_use blocks (the API rejects a tool-use turn whose
// thinking was dropped, changed or reordered), the text before the first
// tool_use. Blocks another wire produced are left out: the API can verify
// none of them, and the turn's text carries what the user saw.
func (b *convBuilder) addAssistant(m *provider.Message) {
	b.closeTurn()
	blocks := appendThinking(nil, m.ReasoningAfter(provider.WireMessages, 0))
	if m.Text != "" {
		blocks = append(blocks, textBlock{Type: "text", Text: m.Text})
	}
	for i, tc := range m.ToolCalls {
		blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
		blocks = appendThinking(blocks, m.ReasoningAfter(provider.WireMessages, i+1))
		b.open = append(b.open, tc.ID)
	}
	if len(blocks) == 0 {
		// The API rejects an empty assistant turn (e.g. a refusal with no
		// text); the turns around it merge as the API would merge them.
		return
	}
	b.out = append(b.out, outMessage{Role: "assistant", Content: blocks})
}

// appendThinking appends reasoning blocks as thinking (with its
// signature) or redacted_thinking blocks. The caller passes only blocks
// of this wire: a signature from another one is rejected by the API.
func appendThinking(blocks []any, rs []provider.ReasoningBlock) []any {
	for _, r := range rs {
		switch {
		case r.Redacted != "":
			blocks = append(blocks, redactedThinkingBlock{Type: "redacted_thinking", Data: r.Redacted})
		case r.Signature != "":
			blocks = append(blocks, thinkingBlock{Type: "thinking", Thinking: r.Text, Signature: r.Signature})
		}
	}
	return blocks
}

// addResult appends a tool result to the current user turn: as a
// tool_result when it answers an open tool_use, as text otherwise.
func (b *convBuilder) addResult(m *provider.Message) {
	if b.isOpen(m.ToolCallID) && !b.answered[m.ToolCallID] {
		b.answered[m.ToolCallID] = true
		b.addUser(toolResultBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Text, IsError: m.IsError})
		return
	}
	text := "Result of tool call " + m.ToolCallID
	if m.ToolName != "" {
		text += " (" + m.ToolName + ")"
	}
	if m.IsError {
		text += ", an error"
	}
	b.addUser(textBlock{Type: "text", Text: text + ":\n" + m.Text})
}

func (b *convBuilder) isOpen(id string) bool {
	for _, o := range b.open {
		if o == id {
			return true
		}
	}
	return false
}

// loopEnded is the assistant text that closes a tool-use loop a run left
// unanswered (max_steps, a cancel after tool results).
const loopEnded = "(The run ended here, before an answer to these tool results.)"

// endLoop closes the tool-use loop in progress before a message that begins
// a new user turn (provider.Message.NewTurn): its results are answered, and
// an assistant message ends the assistant turn. Without it the prompt would
// join the results' user message, the loop, and the turn, would go on, and
// the API refuses a thinking mode that differs from the one the turn began
// with (one thinking configuration per assistant turn).
func (b *convBuilder) endLoop() {
	b.closeTurn()
	b.out = append(b.out, outMessage{Role: "assistant", Content: []any{textBlock{Type: "text", Text: loopEnded}}})
}

// closeTurn answers the open tool_use blocks that have no result yet, so
// the API accepts the conversation, and forgets them. This wire pairs by
// turn, not by message (provider.PendingCalls): a user message between
// the calls and their results merges into the same user turn, so a result
// is still missing only when the next assistant turn or the end comes.
func (b *convBuilder) closeTurn() {
	for _, id := range b.open {
		if !b.answered[id] {
			b.addUser(toolResultBlock{Type: "tool_result", ToolUseID: id, Content: provider.MissingToolResult, IsError: true})
		}
	}
	b.open = b.open[:0]
	clear(b.answered)
}

// addUser adds a block to the user turn that follows the last assistant
// turn, starting one if needed. tool_result blocks go before any text, as
// the API requires.
func (b *convBuilder) addUser(block any) {
	n := len(b.out)
	if n == 0 || b.out[n-1].Role != "user" {
		b.out = append(b.out, outMessage{Role: "user", Content: []any{block}})
		return
	}
	last := &b.out[n-1]
	if _, ok := block.(toolResultBlock); ok {
		at := 0
		for at < len(last.Content) {
			if _, ok := last.Content[at].(toolResultBlock); !ok {
				break
			}
			at++
		}
		last.Content = append(last.Content, nil)
		copy(last.Content[at+1:], last.Content[at:])
		last.Content[at] = block
		return
	}
	last.Content = append(last.Content, block)
}

// toolInput returns a tool call's arguments as the input object the API
// wants: the parsed JSON object, or {} when the arguments are empty, invalid
// or not an object.
func toolInput(args string) jsontext.Value {
	v := jsontext.Value(args)
	if !v.IsValid() || v.Kind() != '{' {
		return emptyObject
	}
	return v
}
