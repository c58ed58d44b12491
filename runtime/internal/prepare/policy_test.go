package prepare

import (
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/policy"
)

// TestPolicyLayers: the workspace's settings count only when it is
// trusted, come above the user's (its terminal gate too) and below the
// embedder's layers, and may not trust another workspace.
func TestPolicyLayers(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	cfg := testConfig(home)
	yes := true
	cfg.PolicyLayers = []policy.Layer{{Source: policy.SourceCLI, AllowShell: &yes}}
	writeRes(t, filepath.Join(home, ".octet", "settings.json"), `{"terminal_gate":{"model":"user-gate","instructions":"u"}}`)
	writeRes(t, filepath.Join(ws, ".octet", "settings.json"), `{"terminal_gate":{"model":"ws-gate","instructions":"w"}}`)
	root, err := confine.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	layers, trusted, gate, rerr := PolicyLayers(cfg, root, ws)
	if rerr != nil || trusted || len(layers) != 2 || layers[1].Source != policy.SourceCLI || gate == nil || gate.Model != "user-gate" {
		t.Fatalf("untrusted: %d layers, trusted %v, gate %+v, %v", len(layers), trusted, gate, rerr)
	}
	cfg.TrustWorkspace = true
	layers, trusted, gate, rerr = PolicyLayers(cfg, root, ws)
	if rerr != nil || !trusted || len(layers) != 3 || layers[2].Source != policy.SourceCLI || gate == nil || gate.Model != "ws-gate" {
		t.Fatalf("trusted: %d layers, trusted %v, gate %+v, %v", len(layers), trusted, gate, rerr)
	}
	writeRes(t, filepath.Join(ws, ".octet", "settings.json"), `{"trusted_workspaces":["/elsewhere"]}`)
	if _, _, _, rerr := PolicyLayers(cfg, root, ws); rerr == nil || rerr.Code != protocol.CodeConfigInvalid {
		t.Fatalf("a workspace that trusts another: %v", rerr)
	}
}
