package copilot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
)

// Protocol is the wire a Copilot model is served on, read from the
// inventory's supported_endpoints, never from the model's name.
type Protocol string

// Protocols. Only OpenAiChat and OpenAiResponses are routable.
const (
	ProtocolOpenAiChat        Protocol = "openai-chat"        // /chat/completions
	ProtocolOpenAiResponses   Protocol = "openai-responses"   // /responses
	ProtocolAnthropicMessages Protocol = "anthropic-messages" // /v1/messages: not served on Copilot routes
	ProtocolNone              Protocol = ""                   // nothing this host speaks
)

// Routable reports whether p selects a codec of this host.
func (p Protocol) Routable() bool { return p == ProtocolOpenAiChat || p == ProtocolOpenAiResponses }

// Model is one Copilot model of the inventory. It holds no credential.
type Model struct {
	ID                  string // Copilot's model id, sent as "model"
	Name                string
	Protocol            Protocol
	ContextWindowTokens int
	MaxOutputTokens     int
	Vision              bool
	ToolCalls           bool
	Reasoning           bool
	// Unroutable says why a listed model cannot be run ("" when it can).
	Unroutable string
}

// Table is one complete model inventory. It is never modified once
// published.
type Table struct {
	Models     []Model // routable, sorted by ID
	Unroutable []Model // with a reason, sorted by ID
}

// Lookup finds a routable model by id.
func (t *Table) Lookup(id string) (Model, bool) {
	if t == nil {
		return Model{}, false
	}
	i, ok := slices.BinarySearchFunc(t.Models, id, func(m Model, id string) int { return strings.Compare(m.ID, id) })
	if !ok {
		return Model{}, false
	}
	return t.Models[i], true
}

// Table returns the current table, nil before the first registration.
func (p *Provider) Table() *Table { return p.table.Load() }

// maxModels bounds the inventory.
const maxModels = 1024

type modelEntry struct {
	ID                 *string   `json:"id"`
	Name               string    `json:"name"`
	ModelPickerEnabled *bool     `json:"model_picker_enabled"`
	SupportedEndpoints *[]string `json:"supported_endpoints"`
	Policy             *struct {
		State string `json:"state"`
	} `json:"policy"`
	Capabilities *struct {
		Type   string `json:"type"`
		Limits struct {
			MaxPromptTokens        int `json:"max_prompt_tokens"`
			MaxOutputTokens        int `json:"max_output_tokens"`
			MaxContextWindowTokens int `json:"max_context_window_tokens"`
		} `json:"limits"`
		Supports struct {
			ToolCalls       bool     `json:"tool_calls"`
			Vision          bool     `json:"vision"`
			ReasoningEffort []string `json:"reasoning_effort"`
			Thinking        bool     `json:"thinking"`
		} `json:"supports"`
	} `json:"capabilities"`
}

// validID accepts 1 to 128 bytes of letters, digits, '.', '_', '-', ':'.
func validID(v string) bool {
	if v == "" || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// protocolOf picks the wire from supported_endpoints (a leading "/v1" is
// ignored): /responses wins, then /chat/completions; an absent field means
// chat (older models); a list with neither is unroutable.
func protocolOf(eps *[]string) (Protocol, string) {
	if eps == nil {
		return ProtocolOpenAiChat, ""
	}
	has := func(p string) bool {
		for _, e := range *eps {
			if strings.TrimPrefix(e, "/v1") == p {
				return true
			}
		}
		return false
	}
	switch {
	case has("/responses"):
		return ProtocolOpenAiResponses, ""
	case has("/chat/completions"):
		return ProtocolOpenAiChat, ""
	case has("/messages"):
		return ProtocolAnthropicMessages, "served only on the Anthropic Messages endpoint, which Copilot routes of this host do not speak"
	}
	return ProtocolNone, "no endpoint this host speaks"
}

// buildTable validates the inventory answer and builds the complete table.
// Any invalid model fails the whole table.
func buildTable(data []byte) (*Table, error) {
	var ans struct {
		Data *[]modelEntry `json:"data"`
	}
	if err := json.Unmarshal(data, &ans); err != nil || ans.Data == nil {
		return nil, errors.New("the model inventory is not a JSON object with a data array of models")
	}
	if len(*ans.Data) > maxModels {
		return nil, fmt.Errorf("the model inventory lists more than %d models", maxModels)
	}
	t := &Table{}
	seen := map[string]bool{}
	for i, e := range *ans.Data {
		if e.ID == nil || !validID(*e.ID) {
			return nil, fmt.Errorf("model %d of the inventory has no valid id", i)
		}
		if seen[*e.ID] {
			return nil, fmt.Errorf("the inventory lists model %q twice", *e.ID)
		}
		seen[*e.ID] = true
		if e.Capabilities == nil || e.Capabilities.Type != "chat" {
			continue // completion and embedding models are not chat models
		}
		if e.Policy != nil && e.Policy.State == "disabled" {
			continue
		}
		c := e.Capabilities
		if c.Limits.MaxPromptTokens < 0 || c.Limits.MaxOutputTokens < 0 || c.Limits.MaxContextWindowTokens < 0 {
			return nil, fmt.Errorf("model %q of the inventory has negative limits", *e.ID)
		}
		name := e.Name
		if name == "" || len(name) > 128 || !headerSafe(name) {
			name = *e.ID
		}
		window := c.Limits.MaxContextWindowTokens
		if window == 0 {
			window = c.Limits.MaxPromptTokens + c.Limits.MaxOutputTokens
		}
		if window <= 0 {
			window = 128000
		}
		out := c.Limits.MaxOutputTokens
		if out <= 0 || out > window {
			out = min(16384, window)
		}
		m := Model{ID: *e.ID, Name: name, ContextWindowTokens: window, MaxOutputTokens: out,
			Vision: c.Supports.Vision, ToolCalls: c.Supports.ToolCalls,
			Reasoning: len(c.Supports.ReasoningEffort) > 0 || c.Supports.Thinking}
		m.Protocol, m.Unroutable = protocolOf(e.SupportedEndpoints)
		if m.Unroutable == "" && e.Policy != nil && e.Policy.State != "" && e.Policy.State != "enabled" {
			m.Unroutable = "policy_required: accept the model's terms in GitHub's Copilot settings"
		}
		t.add(m)
	}
	t.sort()
	return t, nil
}

// add files m under Models, or under Unroutable when it has a reason.
func (t *Table) add(m Model) {
	if m.Unroutable != "" {
		t.Unroutable = append(t.Unroutable, m)
		return
	}
	t.Models = append(t.Models, m)
}

// sort orders both lists by ID.
func (t *Table) sort() {
	cmp := func(a, b Model) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(t.Models, cmp)
	slices.SortFunc(t.Unroutable, cmp)
}

// RegisterError is a failed registration; the previous table is kept.
type RegisterError struct {
	Stage string // "login", "exchange", "inventory", "validation", "collision"
	Err   error
}

func (e *RegisterError) Error() string {
	return "copilot: models not registered (" + e.Stage + "): " + e.Err.Error()
}
func (e *RegisterError) Unwrap() error { return e.Err }

// InvalidModelsError is a model list that failed validation (a Host's
// Models, or the Provider's own checks).
type InvalidModelsError struct{ Err error }

func (e *InvalidModelsError) Error() string { return e.Err.Error() }
func (e *InvalidModelsError) Unwrap() error { return e.Err }

// RegisterModels checks the login (a session from the Host, which checks
// it), fetches the models from the Host, validates every model, checks
// collide (a catalog id a Copilot model id would shadow; nil: none) and
// then publishes the new table in one atomic swap. On any failure the
// previous table stays as it was.
func (p *Provider) RegisterModels(ctx context.Context, collide func(id string) bool) (*Table, error) {
	p.regMu.Lock()
	defer p.regMu.Unlock()
	if p.Host == nil {
		return nil, &RegisterError{"login", ErrNotLoggedIn}
	}
	s, err := p.Session(ctx)
	if errors.Is(err, ErrNotLoggedIn) || errors.Is(err, ErrLoginReplaced) || errors.Is(err, ErrInvalidStore) || errors.Is(err, ErrNoClientID) {
		return nil, &RegisterError{"login", err}
	}
	if err != nil {
		return nil, &RegisterError{"exchange", err}
	}
	ms, err := p.Host.Models(ctx, s)
	var invalid *InvalidModelsError
	if errors.As(err, &invalid) {
		return nil, &RegisterError{"validation", err}
	}
	if err != nil {
		return nil, &RegisterError{"inventory", err}
	}
	t, err := newTable(ms)
	if err != nil {
		return nil, &RegisterError{"validation", err}
	}
	if collide != nil {
		for _, m := range t.Models {
			if collide(m.ID) {
				return nil, &RegisterError{"collision", fmt.Errorf("the Copilot model %q collides with a catalog model of the same id", m.ID)}
			}
		}
	}
	p.table.Store(t)
	return t, nil
}

// newTable validates a Host's models and builds the complete table: any
// invalid model fails it; a model on a protocol this host does not speak
// is listed as unroutable, never run.
func newTable(ms []Model) (*Table, error) {
	if len(ms) > maxModels {
		return nil, fmt.Errorf("the model inventory lists more than %d models", maxModels)
	}
	t := &Table{}
	seen := map[string]bool{}
	for i, m := range ms {
		if !validID(m.ID) {
			return nil, fmt.Errorf("model %d of the inventory has no valid id", i)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("the inventory lists model %q twice", m.ID)
		}
		seen[m.ID] = true
		if m.ContextWindowTokens <= 0 || m.MaxOutputTokens <= 0 || m.MaxOutputTokens > m.ContextWindowTokens {
			return nil, fmt.Errorf("model %q of the inventory has no usable limits", m.ID)
		}
		if m.Name == "" || len(m.Name) > 128 || !headerSafe(m.Name) {
			m.Name = m.ID
		}
		if m.Unroutable == "" && !m.Protocol.Routable() {
			m.Unroutable = "protocol " + strconv.Quote(string(m.Protocol)) + " is not served: only Chat Completions and Responses are"
		}
		t.add(m)
	}
	t.sort()
	return t, nil
}

// setSessionHeaders sets the identity, the API version and the session
// bearer.
func setSessionHeaders(h http.Header, s Session, hs map[string]string) {
	for k, v := range hs {
		h.Set(k, v)
	}
	h.Set("X-GitHub-Api-Version", "2025-05-01")
	h.Set("Authorization", "Bearer "+s.Token.Reveal())
}
