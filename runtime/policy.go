package runtime

import (
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
)

// PolicyLayer is one source's partial tool-policy settings: a nil member
// leaves the value of the layers below it (Options.PolicyLayers, lowest
// precedence first; CONTRACT §10).
type PolicyLayer struct {
	Source          protocol.PolicySource // SourceConfig, SourceEnvironment or SourceCLI
	AllowEdit       *bool
	AllowWrite      *bool
	AllowProcess    *bool
	AllowShell      *bool
	ShellPath       *string
	BashTimeoutMS   *int64
	MaxOutputBytes  *int64
	AllowRemoteRead *bool
}

// Policy sources of the operator's layers.
const (
	SourceConfig      = protocol.SourceConfig
	SourceEnvironment = protocol.SourceEnvironment
	SourceCLI         = protocol.SourceCLI
)

// PolicyFromEnv builds the environment layer from OCTET_ALLOW_SHELL,
// OCTET_ALLOW_PROCESS, OCTET_ALLOW_REMOTE_READ, OCTET_BASH_TIMEOUT_MS,
// OCTET_MAX_OUTPUT_BYTES and OCTET_SHELL_PATH.
func PolicyFromEnv(getenv func(string) string) (PolicyLayer, error) {
	l, err := policy.FromEnv(getenv)
	return PolicyLayer(l), err
}

// policyLayers converts the façade's layers to the engine's (the same
// members: a conversion, no copy of the values they point to).
func policyLayers(ls []PolicyLayer) []policy.Layer {
	if ls == nil {
		return nil
	}
	out := make([]policy.Layer, len(ls))
	for i, l := range ls {
		out[i] = policy.Layer(l)
	}
	return out
}
