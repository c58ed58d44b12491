package engine

import (
	"context"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/auth"
	"octet.dev/host/runtime/internal/catalog"
)

// The GitHub Copilot seam's public names are package runtime/copilot's;
// the route's glue is package auth's.

// copilotState is the Agent's Copilot provider, built on first use.
type copilotState = auth.Copilot

// copilotModels registers the Copilot models (online only) and returns
// their inventory entries; a failure leaves Copilot out of this listing
// and is one discovery issue (auth.Copilot.Models).
func (a *Agent) copilotModels(ctx context.Context, cat *catalog.Catalog) ([]protocol.ModelInfo, *protocol.DiscoveryIssue) {
	ms, issue := a.copilotSt.Models(ctx, a.authEnv(), cat)
	var out []protocol.ModelInfo
	if ms != nil {
		out = make([]protocol.ModelInfo, 0, len(ms))
	}
	for _, m := range ms {
		out = append(out, fromCatalog(m))
	}
	return out, issue
}
