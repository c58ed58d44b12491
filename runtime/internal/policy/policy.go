package policy

import (
	"os"
	"os/exec"

	"octet.dev/host/protocol"
)

// The policy's data types and values are the protocol's (package
// protocol); the short names below keep this package's code readable.

// Source names the layer that set a value last.
type Source = protocol.PolicySource

// Sources, lowest to highest precedence.
const (
	SourceDefault     = protocol.SourceDefault
	SourceConfig      = protocol.SourceConfig
	SourceEnvironment = protocol.SourceEnvironment
	SourceCLI         = protocol.SourceCLI
	SourceHostRequest = protocol.SourceHostRequest
)

// Value is one policy value with its source.
type Value[T any] = protocol.PolicyValue[T]

// ShellSelection says how the shell was chosen, never which path it is.
type ShellSelection = protocol.ShellSelection

// Shell selections.
const (
	ShellConfigured  = protocol.ShellConfigured
	ShellSystemBash  = protocol.ShellSystemBash
	ShellPathBash    = protocol.ShellPathBash
	ShellShFallback  = protocol.ShellShFallback
	ShellUnavailable = protocol.ShellUnavailable
)

// Effective is the effective tool policy: the snapshot that
// accepted.effective_tool_policy and tool_policy.decision.policy carry
// (protocol.EffectivePolicy), and the resolved shell path, which never
// leaves this process.
type Effective struct {
	protocol.EffectivePolicy

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
	e := Effective{EffectivePolicy: protocol.EffectivePolicy{
		EffectPolicy:         Value[string]{Value: protocol.EffectPolicyControlled, Source: SourceDefault},
		WorkspaceConfinement: Value[bool]{Value: true, Source: SourceDefault},
		AllowEdit:            Value[bool]{Value: false, Source: SourceDefault},
		AllowWrite:           Value[bool]{Value: false, Source: SourceDefault},
		AllowProcess:         Value[bool]{Value: false, Source: SourceDefault},
		AllowShell:           Value[bool]{Value: false, Source: SourceDefault},
		BashTimeoutMS:        Value[int64]{Value: DefaultBashTimeoutMS, Source: SourceDefault},
		MaxOutputBytes:       Value[int64]{Value: DefaultMaxOutputBytes, Source: SourceDefault},
		AllowRemoteRead:      Value[bool]{Value: false, Source: SourceDefault},
	}}
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
	e.ShellPath = Value[ShellSelection]{Value: ShellSelection{Selection: sel}, Source: shellSrc}
	return e
}

func set[T any](v *Value[T], p *T, src Source) {
	if p != nil {
		*v = Value[T]{Value: *p, Source: src}
	}
}

// Shell returns the resolved shell path ("" when unavailable). It is for
// the bash tool only and never appears in events.
func (e Effective) Shell() string { return e.shell }

// Effect is what a tool call does to the world.
type Effect = protocol.Effect

// Effects.
const (
	EffectPure              = protocol.EffectPure
	EffectWorkspaceRead     = protocol.EffectWorkspaceRead
	EffectWorkspaceMutation = protocol.EffectWorkspaceMutation
	EffectProcess           = protocol.EffectProcess
	EffectNetwork           = protocol.EffectNetwork
	EffectDelegation        = protocol.EffectDelegation
	EffectUnknown           = protocol.EffectUnknown
)

// Authorizations of allowed calls.
const (
	AuthControlledRead = protocol.AuthControlledRead
	AuthPure           = protocol.AuthPure
	AuthHostRequest    = protocol.AuthHostRequest
	AuthOperator       = protocol.AuthOperator
)

// Decision is the policy's answer for one call (tool_policy.data.decision).
// Its denial codes are protocol.DenialCodes.
type Decision = protocol.ToolDecision

// Decide answers a call to a tool with the given effect and name. A tool
// that is not registered is decided by Unknown.
func (e Effective) Decide(tool string, effect Effect) Decision {
	d := Decision{Effect: effect, Policy: e.EffectivePolicy}
	allow := func(auth string) Decision { d.Allowed, d.Authorization = true, auth; return d }
	deny := func(code protocol.Code) Decision { d.DenialCode = code; return d }
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
			return deny(protocol.CodeMutationNotAuthorized)
		}
		if v.Source == SourceHostRequest {
			return allow(AuthHostRequest)
		}
		return allow(AuthOperator)
	case EffectProcess:
		if !e.AllowProcess.Value || !e.AllowShell.Value {
			return deny(protocol.CodeProcessNotEnabled)
		}
		if e.shell == "" {
			return deny(protocol.CodeShellUnavailable)
		}
		return allow(AuthOperator)
	case EffectNetwork:
		if !e.AllowRemoteRead.Value {
			return deny(protocol.CodeNetworkNotEnabled)
		}
		return allow(AuthOperator)
	case EffectDelegation:
		// No policy layer enables delegation: only an installed
		// delegation manager does (runtime's Ultra mode), which decides
		// on its own.
		return deny(protocol.CodeDelegationNotEnabled)
	}
	return deny(protocol.CodeUnknownEffect)
}

// Deny returns d refused with code by a gate that follows the effect
// policy (confinement, link refusal, protected paths): not allowed, no
// authorization, the denial code set.
func Deny(d Decision, code protocol.Code) Decision {
	d.Allowed, d.Authorization, d.DenialCode = false, "", code
	return d
}

// Unknown is the decision for a call to a tool that is not registered.
func (e Effective) Unknown() Decision {
	return Decision{Effect: EffectUnknown, DenialCode: protocol.CodeUnknownTool, Policy: e.EffectivePolicy}
}
