package protocol

// The tool policy's vocabulary (CONTRACT §10): accepted.effective_tool_policy
// and tool_policy.data.decision.policy share the EffectivePolicy schema.
// Values are secret-safe: never a path, a command or a digest.

// PolicySource names the layer that set a policy value last.
type PolicySource string

// Sources, lowest to highest precedence.
const (
	SourceDefault     PolicySource = "default"
	SourceConfig      PolicySource = "config"
	SourceEnvironment PolicySource = "environment"
	SourceCLI         PolicySource = "cli"
	SourceHostRequest PolicySource = "host_request"
)

// PolicyValue is one policy value with its source.
type PolicyValue[T any] struct {
	Value  T            `json:"value"`
	Source PolicySource `json:"source"`
}

// ShellSelection says how the shell was chosen, never which path it is.
type ShellSelection struct {
	Selection string `json:"selection"`
}

// Shell selections of ShellSelection.Selection.
const (
	ShellConfigured  = "configured"
	ShellSystemBash  = "system_bash"
	ShellPathBash    = "path_bash"
	ShellShFallback  = "sh_fallback"
	ShellUnavailable = "unavailable"
)

// EffectivePolicy is the effective tool policy: every value with the layer
// that set it.
type EffectivePolicy struct {
	EffectPolicy         PolicyValue[string]         `json:"effect_policy"`
	WorkspaceConfinement PolicyValue[bool]           `json:"workspace_confinement"`
	AllowEdit            PolicyValue[bool]           `json:"allow_edit"`
	AllowWrite           PolicyValue[bool]           `json:"allow_write"`
	AllowProcess         PolicyValue[bool]           `json:"allow_process"`
	AllowShell           PolicyValue[bool]           `json:"allow_shell"`
	ShellPath            PolicyValue[ShellSelection] `json:"shell_path"`
	BashTimeoutMS        PolicyValue[int64]          `json:"bash_timeout_ms"`
	MaxOutputBytes       PolicyValue[int64]          `json:"max_output_bytes"`
	AllowRemoteRead      PolicyValue[bool]           `json:"allow_remote_read"`
}

// EffectPolicyControlled is the only effect policy (EffectivePolicy.EffectPolicy).
const EffectPolicyControlled = "controlled"

// Effect is what a tool call does to the world.
type Effect string

// Effects.
const (
	EffectPure              Effect = "pure"
	EffectWorkspaceRead     Effect = "workspace_read"
	EffectWorkspaceMutation Effect = "workspace_mutation"
	EffectProcess           Effect = "process"
	EffectNetwork           Effect = "network"
	// EffectDelegation starts worker runs (the delegate tool): an ambient
	// effect, denied under the Controlled policy (delegation_not_enabled)
	// unless the Go API installed a delegation manager.
	EffectDelegation Effect = "delegation"
	EffectUnknown    Effect = "unknown"
)

// Authorizations of allowed calls (ToolDecision.Authorization).
const (
	AuthControlledRead = "controlled_read"
	AuthPure           = "pure"
	AuthHostRequest    = "host_request"
	AuthOperator       = "operator"
)

// ToolDecision is the policy's answer for one call
// (tool_policy.data.decision): Authorization when allowed, DenialCode (one
// of DenialCodes) when denied.
type ToolDecision struct {
	Effect        Effect          `json:"effect,omitempty"`
	Allowed       bool            `json:"allowed"`
	Authorization string          `json:"authorization,omitempty"`
	DenialCode    Code            `json:"denial_code,omitempty"`
	Policy        EffectivePolicy `json:"policy"`
}
