package engine

import (
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/tools"
	"octet.dev/host/runtime/provider"
)

// toolDef is a tool registered for a run.
type toolDef struct {
	spec   provider.ToolSpec
	effect policy.Effect
}

// bashSpec is the bash tool's schema. bash is registered always and denied
// unless the operator enabled process and shell effects (CONTRACT §10).
var bashSpec = provider.ToolSpec{
	Name:        "bash",
	Description: "Run a shell command in the workspace directory with the shell's -c; stdin is empty. Denied unless the operator enabled shell and process effects.",
	Parameters:  []byte(`{"type":"object","properties":{"command":{"type":"string","description":"The command line, run with the shell's -c."},"timeout_ms":{"type":"integer","minimum":1,"description":"Kill the command after this many milliseconds."}},"required":["command"],"additionalProperties":false}`),
}

// allTools returns every tool this build registers, in a fixed order.
func allTools() []toolDef {
	var defs []toolDef
	for _, s := range tools.Specs() {
		defs = append(defs, toolDef{
			spec:   provider.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters},
			effect: policy.Effect(s.Effect),
		})
	}
	return append(defs, toolDef{spec: bashSpec, effect: policy.EffectProcess})
}

// DefaultToolSchemaBudgetBytes is the default budget of the serialized
// tool array (CONTRACT §15).
const DefaultToolSchemaBudgetBytes = 128 << 10

// SetToolSchemaBudgetBytes bounds the size of the tool array a run sends, in
// bytes exactly as the route's wire mode serializes it (default 128 KiB). A
// run whose tools exceed it is refused (tool_schema_too_large) before any
// provider I/O; tools are never dropped or rewritten to fit. Zero permits
// only an empty tool list; a negative n counts as zero. It applies to runs
// started afterwards.
func (a *Agent) SetToolSchemaBudgetBytes(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.toolBudget = max(n, 0)
}

// checkToolBudget refuses a run whose tool array is over the budget. A
// provider that cannot size its own array (a custom ProviderFactory's) is
// measured by the neutral JSON form of the specs.
func (a *Agent) checkToolBudget(p *prepared) *RunError {
	a.mu.Lock()
	budget := a.toolBudget
	a.mu.Unlock()
	specs := make([]provider.ToolSpec, len(p.tools))
	for i, t := range p.tools {
		specs[i] = t.spec
	}
	var size int
	var err error
	if s, ok := p.prov.(provider.ToolSizer); ok {
		size, err = s.ToolArrayBytes(specs)
	} else if len(specs) > 0 {
		type neutral struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  jsontext.Value `json:"parameters,omitempty"`
		}
		arr := make([]neutral, len(specs))
		for i, t := range specs {
			arr[i] = neutral{t.Name, t.Description, t.Parameters}
		}
		var b []byte
		b, err = json.Marshal(arr)
		size = len(b)
	}
	switch {
	case err != nil:
		return refuse(protocol.CodeInternalError, "the tool array cannot be serialized: %s", err.Error())
	case size > budget:
		return refuse(protocol.CodeToolSchemaTooLarge, "the tool array is %s bytes; the budget is %s (Agent.SetToolSchemaBudgetBytes); choose fewer tools with \"tools\"",
			strconv.Itoa(size), strconv.Itoa(budget))
	}
	return nil
}

func (p *prepared) selectTools(names []string) *RunError {
	all := allTools()
	if names == nil {
		p.tools = all
		return nil
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return refuse(protocol.CodeToolsInvalid, "tools names %s twice", strconv.Quote(textutil.Truncate(n, 64)))
		}
		seen[n] = true
		if !slices.ContainsFunc(all, func(d toolDef) bool { return d.spec.Name == n }) {
			return refuse(protocol.CodeToolsInvalid, "unknown tool %s; the tools are read, ls, grep, find, edit, write, bash", strconv.Quote(textutil.Truncate(n, 64)))
		}
	}
	// The selected tools keep the fixed order of allTools, whatever order
	// the request names them in: the tools array heads every model
	// request, and the same tools in another order would make the
	// provider's prompt cache miss on the whole conversation.
	p.tools = []toolDef{}
	for _, d := range all {
		if seen[d.spec.Name] {
			p.tools = append(p.tools, d)
		}
	}
	return nil
}
