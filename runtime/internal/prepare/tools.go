package prepare

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

// Tool is a tool registered for a run.
type Tool struct {
	Spec   provider.ToolSpec
	Effect policy.Effect
}

// bashSpec is the bash tool's schema. bash is registered always and denied
// unless the operator enabled process and shell effects (CONTRACT §10).
var bashSpec = provider.ToolSpec{
	Name:        "bash",
	Description: "Run a shell command in the workspace directory with the shell's -c; stdin is empty. Denied unless the operator enabled shell and process effects.",
	Parameters:  []byte(`{"type":"object","properties":{"command":{"type":"string","description":"The command line, run with the shell's -c."},"timeout_ms":{"type":"integer","minimum":1,"description":"Kill the command after this many milliseconds."}},"required":["command"],"additionalProperties":false}`),
}

// AllTools returns every tool this build registers, in a fixed order.
func AllTools() []Tool {
	var defs []Tool
	for _, s := range tools.Specs() {
		defs = append(defs, Tool{
			Spec:   provider.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters},
			Effect: policy.Effect(s.Effect),
		})
	}
	return append(defs, Tool{Spec: bashSpec, Effect: policy.EffectProcess})
}

// DefaultToolSchemaBudgetBytes is the default budget of the serialized
// tool array (CONTRACT §15).
const DefaultToolSchemaBudgetBytes = 128 << 10

// SelectTools returns the tools names selects: all of them for nil, else
// those named, in the fixed order of AllTools. A name given twice or
// unknown refuses the run.
func SelectTools(names []string) ([]Tool, *RunError) {
	all := AllTools()
	if names == nil {
		return all, nil
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, &RunError{Code: protocol.CodeToolsInvalid, Message: "tools names " + strconv.Quote(textutil.Truncate(n, 64)) + " twice"}
		}
		seen[n] = true
		if !slices.ContainsFunc(all, func(d Tool) bool { return d.Spec.Name == n }) {
			return nil, &RunError{Code: protocol.CodeToolsInvalid, Message: "unknown tool " + strconv.Quote(textutil.Truncate(n, 64)) + "; the tools are read, ls, grep, find, edit, write, bash"}
		}
	}
	// The selected tools keep the fixed order of AllTools, whatever order
	// the request names them in: the tools array heads every model
	// request, and the same tools in another order would make the
	// provider's prompt cache miss on the whole conversation.
	selected := []Tool{}
	for _, d := range all {
		if seen[d.Spec.Name] {
			selected = append(selected, d)
		}
	}
	return selected, nil
}

// CheckToolBudget refuses a run whose tool array is over budget bytes. A
// provider that cannot size its own array (a custom ProviderFactory's) is
// measured by the neutral JSON form of the specs.
func CheckToolBudget(budget int, prov provider.Provider, defs []Tool) *RunError {
	specs := make([]provider.ToolSpec, len(defs))
	for i, t := range defs {
		specs[i] = t.Spec
	}
	var size int
	var err error
	if s, ok := prov.(provider.ToolSizer); ok {
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
		return &RunError{Code: protocol.CodeInternalError, Message: "the tool array cannot be serialized: " + err.Error()}
	case size > budget:
		return &RunError{Code: protocol.CodeToolSchemaTooLarge, Message: "the tool array is " + strconv.Itoa(size) + " bytes; the budget is " + strconv.Itoa(budget) + " (Agent.SetToolSchemaBudgetBytes); choose fewer tools with \"tools\""}
	}
	return nil
}
