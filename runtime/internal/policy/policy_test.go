package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

func ptr[T any](v T) *T { return &v }

func noBash(string) (string, error) { return "", errors.New("not found") }

func existsOnly(paths ...string) func(string) bool {
	return func(p string) bool {
		for _, q := range paths {
			if p == q {
				return true
			}
		}
		return false
	}
}

func TestResolveDefaults(t *testing.T) {
	e := Resolve(noBash, existsOnly("/bin/bash"))
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"effect_policy":{"value":"controlled","source":"default"},"workspace_confinement":{"value":true,"source":"default"},"allow_edit":{"value":false,"source":"default"},"allow_write":{"value":false,"source":"default"},"allow_process":{"value":false,"source":"default"},"allow_shell":{"value":false,"source":"default"},"shell_path":{"value":{"selection":"system_bash"},"source":"default"},"bash_timeout_ms":{"value":120000,"source":"default"},"max_output_bytes":{"value":50000,"source":"default"},"allow_remote_read":{"value":false,"source":"default"}}`
	if string(got) != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	if strings.Contains(string(got), "/bin/bash") {
		t.Error("the shell path leaked into the policy snapshot")
	}
}

func TestResolveLayersLastWins(t *testing.T) {
	e := Resolve(noBash, existsOnly("/bin/bash", "/opt/zsh"),
		Layer{Source: SourceConfig, AllowShell: ptr(true), MaxOutputBytes: ptr(int64(10))},
		Layer{Source: SourceEnvironment, AllowProcess: ptr(true), MaxOutputBytes: ptr(int64(20))},
		Layer{Source: SourceCLI, ShellPath: ptr("/opt/zsh")},
		Layer{Source: SourceHostRequest, AllowEdit: ptr(true), AllowWrite: ptr(true)},
	)
	if diff := cmp.Diff(Value[bool]{Value: true, Source: SourceConfig}, e.AllowShell); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff(Value[int64]{Value: 20, Source: SourceEnvironment}, e.MaxOutputBytes); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff(Value[ShellSelection]{Value: ShellSelection{Selection: ShellConfigured}, Source: SourceCLI}, e.ShellPath); diff != "" {
		t.Error(diff)
	}
	if e.Shell() != "/opt/zsh" || e.AllowEdit.Source != SourceHostRequest {
		t.Errorf("shell %q edit %+v", e.Shell(), e.AllowEdit)
	}
}

func TestShellSelection(t *testing.T) {
	tests := []struct {
		name     string
		look     func(string) (string, error)
		exists   func(string) bool
		layers   []Layer
		want     string
		wantPath string
	}{
		{"system bash", noBash, existsOnly("/bin/bash", "/bin/sh"), nil, ShellSystemBash, "/bin/bash"},
		{"path bash", func(string) (string, error) { return "/usr/local/bin/bash", nil }, existsOnly("/bin/sh"), nil, ShellPathBash, "/usr/local/bin/bash"},
		{"sh fallback", noBash, existsOnly("/bin/sh"), nil, ShellShFallback, "/bin/sh"},
		{"unavailable", noBash, existsOnly(), nil, ShellUnavailable, ""},
		{"configured missing", noBash, existsOnly("/bin/bash"), []Layer{{Source: SourceCLI, ShellPath: ptr("/nope")}}, ShellUnavailable, ""},
	}
	for _, tt := range tests {
		e := Resolve(tt.look, tt.exists, tt.layers...)
		if e.ShellPath.Value.Selection != tt.want || e.Shell() != tt.wantPath {
			t.Errorf("%s: selection %q path %q, want %q %q", tt.name, e.ShellPath.Value.Selection, e.Shell(), tt.want, tt.wantPath)
		}
	}
}

func TestDecide(t *testing.T) {
	base := Resolve(noBash, existsOnly("/bin/bash"))
	mut := Resolve(noBash, existsOnly("/bin/bash"), Layer{Source: SourceHostRequest, AllowEdit: ptr(true), AllowWrite: ptr(true)})
	shell := Resolve(noBash, existsOnly("/bin/bash"), Layer{Source: SourceCLI, AllowShell: ptr(true), AllowProcess: ptr(true)})
	onlyShell := Resolve(noBash, existsOnly("/bin/bash"), Layer{Source: SourceCLI, AllowShell: ptr(true)})
	noShell := Resolve(noBash, existsOnly(), Layer{Source: SourceCLI, AllowShell: ptr(true), AllowProcess: ptr(true)})
	tests := []struct {
		name   string
		e      Effective
		tool   string
		effect Effect
		allow  bool
		code   protocol.Code
	}{
		{"read allowed", base, "read", EffectWorkspaceRead, true, AuthControlledRead},
		{"write denied by default", base, "write", EffectWorkspaceMutation, false, protocol.CodeMutationNotAuthorized},
		{"edit denied by default", base, "edit", EffectWorkspaceMutation, false, protocol.CodeMutationNotAuthorized},
		{"write by host request", mut, "write", EffectWorkspaceMutation, true, AuthHostRequest},
		{"edit by host request", mut, "edit", EffectWorkspaceMutation, true, AuthHostRequest},
		{"bash denied by default", base, "bash", EffectProcess, false, protocol.CodeProcessNotEnabled},
		{"bash needs both flags", onlyShell, "bash", EffectProcess, false, protocol.CodeProcessNotEnabled},
		{"bash by operator", shell, "bash", EffectProcess, true, AuthOperator},
		{"bash without a shell", noShell, "bash", EffectProcess, false, protocol.CodeShellUnavailable},
		{"network fails closed", base, "fetch", EffectNetwork, false, protocol.CodeNetworkNotEnabled},
		{"delegation fails closed", shell, "delegate", EffectDelegation, false, protocol.CodeDelegationNotEnabled},
		{"unknown effect fails closed", base, "x", Effect("extension"), false, protocol.CodeUnknownEffect},
	}
	for _, tt := range tests {
		d := tt.e.Decide(tt.tool, tt.effect)
		code := d.DenialCode
		if d.Allowed {
			code = protocol.Code(d.Authorization)
		}
		if d.Allowed != tt.allow || code != tt.code {
			t.Errorf("%s: allowed %v code %q, want %v %q", tt.name, d.Allowed, code, tt.allow, tt.code)
		}
		if d.Allowed == (d.DenialCode != "") || d.Allowed != (d.Authorization != "") {
			t.Errorf("%s: decision carries both or neither of authorization and denial_code: %+v", tt.name, d)
		}
	}
	if u := base.Unknown(); u.Allowed || u.DenialCode != protocol.CodeUnknownTool {
		t.Errorf("Unknown() = %+v", u)
	}
	// A gate's refusal turns an allowed decision into a denial and keeps
	// the effect and the policy snapshot.
	allowed := mut.Decide("write", EffectWorkspaceMutation)
	d := Deny(allowed, protocol.CodeProtectedPath)
	if d.Allowed || d.Authorization != "" || d.DenialCode != protocol.CodeProtectedPath || d.Effect != EffectWorkspaceMutation ||
		d.Policy.AllowWrite != allowed.Policy.AllowWrite {
		t.Errorf("Deny = %+v", d)
	}
	if !allowed.Allowed || allowed.Authorization != AuthHostRequest {
		t.Errorf("Deny changed its receiver: %+v", allowed)
	}
}
