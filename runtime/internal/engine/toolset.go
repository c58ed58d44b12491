package engine

import "octet.dev/host/runtime/internal/prepare"

// toolDef is a tool registered for a run (prepare.Tool).
type toolDef = prepare.Tool

// DefaultToolSchemaBudgetBytes is the default budget of the serialized
// tool array (CONTRACT §15).
const DefaultToolSchemaBudgetBytes = prepare.DefaultToolSchemaBudgetBytes

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
