package chat

import (
	"testing"

	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

// TestToolArrayBytes: the size reported for the budget is the size of the
// tools member of a real request body, byte for byte.
func TestToolArrayBytes(t *testing.T) {
	var p *Provider
	providertest.CheckToolArrayBytes(t, func(req provider.Request) ([]byte, error) { return buildRequest(req) }, p.ToolArrayBytes)
}
