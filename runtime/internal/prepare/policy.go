package prepare

import (
	"errors"
	"path/filepath"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/policy"
)

// PolicyLayers returns the operator's layers, lowest precedence first:
// ~/.octet/settings.json, the workspace's .octet/settings.json when the
// workspace is trusted, then the embedder's (environment, CLI) layers
// (CONTRACT §10), and the terminal gate the settings configure: the
// workspace's over the user's, nil when neither sets one. The workspace
// file is read through the workspace root, so a symlink cannot substitute
// another file.
func PolicyLayers(cfg *Config, root *confine.Root, workspace string) (layers []policy.Layer, trusted bool, gate *policy.TerminalGate, _ *RunError) {
	user, err := policy.LoadSettings(filepath.Join(cfg.Home, ".octet", "settings.json"), "~/.octet/settings.json")
	if err != nil {
		return nil, false, nil, &RunError{Code: protocol.CodeConfigInvalid, Message: err.Error()}
	}
	gate = user.TerminalGate
	layers = []policy.Layer{user.Layer()}
	trusted = cfg.TrustWorkspace || user.Trusts(workspace)
	if trusted {
		data, err := root.ReadFile(".octet/settings.json")
		switch {
		case errors.Is(err, confine.ErrNotFound):
		case err != nil:
			return nil, false, nil, &RunError{Code: protocol.CodeConfigInvalid, Message: "the workspace's .octet/settings.json cannot be read"}
		default:
			ws, err := policy.ParseSettings(data, "workspace .octet/settings.json")
			if err != nil {
				return nil, false, nil, &RunError{Code: protocol.CodeConfigInvalid, Message: err.Error()}
			}
			if len(ws.TrustedWorkspaces) > 0 {
				return nil, false, nil, &RunError{Code: protocol.CodeConfigInvalid, Message: "workspace .octet/settings.json may not set trusted_workspaces"}
			}
			layers = append(layers, ws.Layer())
			if ws.TerminalGate != nil {
				gate = ws.TerminalGate
			}
		}
	}
	return append(layers, cfg.PolicyLayers...), trusted, gate, nil
}
