package runtime

import "octet.dev/host/runtime/internal/policy"

// PolicyLayer is one source's partial tool-policy settings.
type PolicyLayer = policy.Layer

// Policy sources of the operator's layers.
const (
	SourceConfig      = policy.SourceConfig
	SourceEnvironment = policy.SourceEnvironment
	SourceCLI         = policy.SourceCLI
)

// PolicyFromEnv builds the environment layer from OCTET_ALLOW_SHELL,
// OCTET_ALLOW_PROCESS, OCTET_ALLOW_REMOTE_READ, OCTET_BASH_TIMEOUT_MS,
// OCTET_MAX_OUTPUT_BYTES and OCTET_SHELL_PATH.
func PolicyFromEnv(getenv func(string) string) (PolicyLayer, error) { return policy.FromEnv(getenv) }
