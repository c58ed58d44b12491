// Package policy is the Controlled effect policy of octet-host (CONTRACT
// §10): the effective tool policy, resolved from layered sources (default →
// config → environment → CLI → host request), and the decision for each
// tool call. The protocol can pre-authorize file mutation only; process,
// shell and network effects are the operator's to enable.
//
// Values are immutable once resolved and safe for concurrent use.
package policy

import (
	"os"
	"os/exec"
)

// Source names the layer that set a value last.
type Source string

// Sources, lowest to highest precedence.
const (
	SourceDefault     Source = "default"
	SourceConfig      Source = "config"
	SourceEnvironment Source = "environment"
	SourceCLI         Source = "cli"
	SourceHostRequest Source = "host_request"
)

// Value is one policy value with its source.
type Value[T any] struct {
	Value  T      `json:"value"`
	Source Source `json:"source"`
}

// ShellSelection says how the shell was chosen, never which path it is.
type ShellSelection struct {
	Selection string `json:"selection"`
}

// Shell selections.
const (
	ShellConfigured  = "configured"
	ShellSystemBash  = "system_bash"
	ShellPathBash    = "path_bash"
	ShellShFallback  = "sh_fallback"
	ShellUnavailable = "unavailable"
)

// Effective is the effective tool policy, the schema shared by
// accepted.effective_tool_policy and tool_policy.decision.policy.
type Effective struct {
	EffectPolicy         Value[string]         `json:"effect_policy"`
	WorkspaceConfinement Value[bool]           `json:"workspace_confinement"`
	AllowEdit            Value[bool]           `json:"allow_edit"`
	AllowWrite           Value[bool]           `json:"allow_write"`
	AllowProcess         Value[bool]           `json:"allow_process"`
	AllowShell           Value[bool]           `json:"allow_shell"`
	ShellPath            Value[ShellSelection] `json:"shell_path"`
	BashTimeoutMS        Value[int64]          `json:"bash_timeout_ms"`
	MaxOutputBytes       Value[int64]          `json:"max_output_bytes"`
	AllowRemoteRead      Value[bool]           `json:"allow_remote_read"`

	shell string // the resolved shell path; never serialized
}

// Defaults.
const (
	DefaultBashTimeoutMS  = 120_000
	DefaultMaxOutputBytes = 50_000
)

// Layer is the partial settings of one source; nil fields leave the value
// as the lower layers set it.
type Layer struct {
	Source          Source
	AllowEdit       *bool
	AllowWrite      *bool
	AllowProcess    *bool
	AllowShell      *bool
	ShellPath       *string
	BashTimeoutMS   *int64
	MaxOutputBytes  *int64
	AllowRemoteRead *bool
}

// Resolve applies layers, lowest precedence first, over the defaults.
// lookPath finds "bash" on PATH (exec.LookPath when nil); stat reports
// whether a file exists (os.Stat when nil): both are injectable for tests.
func Resolve(lookPath func(string) (string, error), exists func(string) bool, layers ...Layer) Effective {
	e := Effective{
		EffectPolicy:         Value[string]{"controlled", SourceDefault},
		WorkspaceConfinement: Value[bool]{true, SourceDefault},
		AllowEdit:            Value[bool]{false, SourceDefault},
		AllowWrite:           Value[bool]{false, SourceDefault},
		AllowProcess:         Value[bool]{false, SourceDefault},
		AllowShell:           Value[bool]{false, SourceDefault},
		BashTimeoutMS:        Value[int64]{DefaultBashTimeoutMS, SourceDefault},
		MaxOutputBytes:       Value[int64]{DefaultMaxOutputBytes, SourceDefault},
		AllowRemoteRead:      Value[bool]{false, SourceDefault},
	}
	shellSrc, shellPath := SourceDefault, ""
	for _, l := range layers {
		set(&e.AllowEdit, l.AllowEdit, l.Source)
		set(&e.AllowWrite, l.AllowWrite, l.Source)
		set(&e.AllowProcess, l.AllowProcess, l.Source)
		set(&e.AllowShell, l.AllowShell, l.Source)
		set(&e.BashTimeoutMS, l.BashTimeoutMS, l.Source)
		set(&e.MaxOutputBytes, l.MaxOutputBytes, l.Source)
		set(&e.AllowRemoteRead, l.AllowRemoteRead, l.Source)
		if l.ShellPath != nil {
			shellSrc, shellPath = l.Source, *l.ShellPath
		}
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if exists == nil {
		exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
	}
	sel := ShellUnavailable
	switch {
	case shellPath != "":
		if exists(shellPath) {
			sel, e.shell = ShellConfigured, shellPath
		}
	case exists("/bin/bash"):
		sel, e.shell = ShellSystemBash, "/bin/bash"
	default:
		if p, err := lookPath("bash"); err == nil {
			sel, e.shell = ShellPathBash, p
		} else if exists("/bin/sh") {
			sel, e.shell = ShellShFallback, "/bin/sh"
		}
	}
	e.ShellPath = Value[ShellSelection]{ShellSelection{sel}, shellSrc}
	return e
}

func set[T any](v *Value[T], p *T, src Source) {
	if p != nil {
		*v = Value[T]{*p, src}
	}
}

// Shell returns the resolved shell path ("" when unavailable). It is for
// the bash tool only and never appears in events.
func (e Effective) Shell() string { return e.shell }

// Effect is what a tool call does to the world.
type Effect string

// Effects.
const (
	EffectPure              Effect = "pure"
	EffectWorkspaceRead     Effect = "workspace_read"
	EffectWorkspaceMutation Effect = "workspace_mutation"
	EffectProcess           Effect = "process"
	EffectNetwork           Effect = "network"
	EffectUnknown           Effect = "unknown"
)

// Denial codes (stable, CONTRACT §10).
const (
	DenyUnknownTool          = "unknown_tool"
	DenyMutationNotAllowed   = "mutation_not_authorized"
	DenyProcessNotEnabled    = "process_not_enabled"
	DenyShellUnavailable     = "shell_unavailable"
	DenyNetworkNotEnabled    = "network_not_enabled"
	DenyUnknownEffect        = "unknown_effect"
	DenyConfirmationRequired = "confirmation_required"
	// The workspace gates, decided after the effect policy and before the
	// allowed decision is announced: the values equal the tool error codes
	// of the same refusals, which the confined operation reports if the
	// workspace changes between the gate and the operation.
	DenyPathOutsideWorkspace = "path_outside_workspace"
	DenySymlinkRefused       = "symlink_refused"
	DenyProtectedPath        = "protected_path"
)

// Authorizations of allowed calls.
const (
	AuthControlledRead = "controlled_read"
	AuthPure           = "pure"
	AuthHostRequest    = "host_request"
	AuthOperator       = "operator"
)

// Decision is the policy's answer for one call (tool_policy.data.decision).
type Decision struct {
	Effect        Effect    `json:"effect,omitempty"`
	Allowed       bool      `json:"allowed"`
	Authorization string    `json:"authorization,omitempty"`
	DenialCode    string    `json:"denial_code,omitempty"`
	Policy        Effective `json:"policy"`
}

// Decide answers a call to a tool with the given effect and name. A tool
// that is not registered is decided by the caller with DenyUnknownTool.
func (e Effective) Decide(tool string, effect Effect) Decision {
	d := Decision{Effect: effect, Policy: e}
	allow := func(auth string) Decision { d.Allowed, d.Authorization = true, auth; return d }
	deny := func(code string) Decision { d.DenialCode = code; return d }
	switch effect {
	case EffectPure:
		return allow(AuthPure)
	case EffectWorkspaceRead:
		return allow(AuthControlledRead)
	case EffectWorkspaceMutation:
		v := e.AllowWrite
		if tool == "edit" {
			v = e.AllowEdit
		}
		if !v.Value {
			return deny(DenyMutationNotAllowed)
		}
		if v.Source == SourceHostRequest {
			return allow(AuthHostRequest)
		}
		return allow(AuthOperator)
	case EffectProcess:
		if !e.AllowProcess.Value || !e.AllowShell.Value {
			return deny(DenyProcessNotEnabled)
		}
		if e.shell == "" {
			return deny(DenyShellUnavailable)
		}
		return allow(AuthOperator)
	case EffectNetwork:
		if !e.AllowRemoteRead.Value {
			return deny(DenyNetworkNotEnabled)
		}
		return allow(AuthOperator)
	}
	return deny(DenyUnknownEffect)
}

// Deny returns d refused with code by a gate that follows the effect
// policy (confinement, link refusal, protected paths): not allowed, no
// authorization, the denial code set.
func (d Decision) Deny(code string) Decision {
	d.Allowed, d.Authorization, d.DenialCode = false, "", code
	return d
}

// Unknown is the decision for a call to a tool that is not registered.
func (e Effective) Unknown() Decision {
	return Decision{Effect: EffectUnknown, DenialCode: DenyUnknownTool, Policy: e}
}
