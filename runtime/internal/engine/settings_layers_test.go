package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
)

// Tool-policy layers through real runs (CONTRACT §10): default →
// ~/.octet/settings.json → the workspace's .octet/settings.json when the
// workspace is trusted → environment → CLI → host request. Each case
// writes the settings files, builds the agent as cmd/octet-host does
// (PolicyLayers = [PolicyFromEnv(...), cli], TrustWorkspace), runs, and
// checks the accepted event's effective_tool_policy values and sources,
// and for bash and file calls the tool_policy decision.

// layerSetup is the operator's side of one case. In the settings texts,
// $WS is the run's workspace, $PARENT its parent directory, $OTHER another
// existing workspace and $SHELL a file that exists (a shell script that
// prints "configured-shell-ran").
type layerSetup struct {
	user  string            // ~/.octet/settings.json; "" = no file
	ws    string            // <workspace>/.octet/settings.json; "" = no file
	trust bool              // Options.TrustWorkspace (--trust-workspace)
	env   map[string]string // the environment layer's variables
	cli   *PolicyLayer      // the CLI layer (Source is set to cli)
}

// layerFixture is a run fixture whose agent has the setup's layers.
type layerFixture struct {
	*fixture
	other string // a second workspace
	shell string // the path $SHELL stands for
}

func newLayerFixture(t *testing.T, s layerSetup, turns ...[]StreamEvent) *layerFixture {
	t.Helper()
	f := &layerFixture{fixture: newFixture(t, turns...), other: t.TempDir()}
	f.shell = filepath.Join(t.TempDir(), "octet-custom-shell-7f3a")
	// A "shell" that ignores its -c command: its output proves it ran.
	writeSettingsFile(t, f.shell, "#!/bin/sh\necho configured-shell-ran\n", 0o755)
	if s.user != "" {
		writeSettingsFile(t, filepath.Join(f.home, ".octet", "settings.json"), f.expand(s.user), 0o600)
	}
	if s.ws != "" {
		writeSettingsFile(t, filepath.Join(f.ws, ".octet", "settings.json"), f.expand(s.ws), 0o644)
	}
	f.agent = f.newAgent(s)
	return f
}

// newAgent builds an agent on the fixture's home and provider with the
// setup's layers and trust, as cmd/octet-host/main.go does.
func (f *layerFixture) newAgent(s layerSetup) *Agent {
	f.t.Helper()
	env, err := PolicyFromEnv(func(k string) string { return f.expand(s.env[k]) })
	if err != nil {
		f.t.Fatalf("PolicyFromEnv: %v", err)
	}
	cli := PolicyLayer{Source: SourceCLI}
	if s.cli != nil {
		cli = *s.cli
		cli.Source = SourceCLI
	}
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" },
		PolicyLayers: []PolicyLayer{env, cli}, TrustWorkspace: s.trust,
		ProviderFactory: func(r Route) (Provider, error) { f.lastRoute = r; return f.prov, nil },
		Sleep:           func(context.Context, time.Duration) error { return nil },
		Jitter:          func() float64 { return 0 }})
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

func (f *layerFixture) expand(s string) string {
	js := func(p string) string { b, _ := json.Marshal(p); return strings.Trim(string(b), `"`) }
	return strings.NewReplacer("$WS", js(f.ws), "$PARENT", js(filepath.Dir(f.ws)), "$OTHER", js(f.other), "$SHELL", js(f.shell)).Replace(s)
}

func writeSettingsFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func lptr[T any](v T) *T { return &v }

// policySummary flattens a policy snapshot to field → "value/source".
func policySummary(e protocol.EffectivePolicy) map[string]string {
	vs := func(v any, s policy.Source) string { return fmt.Sprintf("%v/%s", v, s) }
	return map[string]string{
		"effect_policy":         vs(e.EffectPolicy.Value, e.EffectPolicy.Source),
		"workspace_confinement": vs(e.WorkspaceConfinement.Value, e.WorkspaceConfinement.Source),
		"allow_edit":            vs(e.AllowEdit.Value, e.AllowEdit.Source),
		"allow_write":           vs(e.AllowWrite.Value, e.AllowWrite.Source),
		"allow_process":         vs(e.AllowProcess.Value, e.AllowProcess.Source),
		"allow_shell":           vs(e.AllowShell.Value, e.AllowShell.Source),
		"shell_path":            vs(e.ShellPath.Value.Selection, e.ShellPath.Source),
		"bash_timeout_ms":       vs(e.BashTimeoutMS.Value, e.BashTimeoutMS.Source),
		"max_output_bytes":      vs(e.MaxOutputBytes.Value, e.MaxOutputBytes.Source),
		"allow_remote_read":     vs(e.AllowRemoteRead.Value, e.AllowRemoteRead.Source),
	}
}

// wantPolicy is the default policy with the given fields replaced.
func wantPolicy(over map[string]string) map[string]string {
	w := map[string]string{
		"effect_policy":         "controlled/default",
		"workspace_confinement": "true/default",
		"allow_edit":            "false/default",
		"allow_write":           "false/default",
		"allow_process":         "false/default",
		"allow_shell":           "false/default",
		// The host's own shell (system_bash where /bin/bash exists).
		"shell_path":        policy.Resolve(nil, nil).ShellPath.Value.Selection + "/default",
		"bash_timeout_ms":   "120000/default",
		"max_output_bytes":  "50000/default",
		"allow_remote_read": "false/default",
	}
	for k, v := range over {
		if _, ok := w[k]; !ok {
			panic("wantPolicy: unknown field " + k)
		}
		w[k] = v
	}
	return w
}

// accepted runs req to its end and returns the accepted event.
func (f *layerFixture) accepted(req RunRequest) (*protocol.Accepted, []Event, protocol.FinalResult) {
	f.t.Helper()
	evs, res := f.run(req)
	acc := find[protocol.Accepted](evs)
	if len(acc) != 1 {
		f.t.Fatalf("%d accepted events", len(acc))
	}
	return acc[0], evs, res
}

// checkNoShellPath asserts that a marshalled policy snapshot carries no
// shell path and that shell_path.value is exactly {"selection": ...}.
func (f *layerFixture) checkNoShellPath(what string, pol protocol.EffectivePolicy) {
	f.t.Helper()
	raw, err := json.Marshal(pol)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, p := range []string{f.shell, "/bin/", "octet-custom-shell"} {
		if strings.Contains(string(raw), p) {
			f.t.Errorf("%s carries a shell path (%s): %s", what, p, raw)
		}
	}
	var m map[string]struct {
		Value  json.RawMessage `json:"value"`
		Source string          `json:"source"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		f.t.Fatal(err)
	}
	var sel map[string]any
	if err := json.Unmarshal(m["shell_path"].Value, &sel); err != nil {
		f.t.Fatalf("%s: shell_path.value %s is not an object: %v", what, m["shell_path"].Value, err)
	}
	if s, ok := sel["selection"].(string); len(sel) != 1 || !ok || s == "" {
		f.t.Errorf(`%s: shell_path.value is %s, want exactly {"selection": ...}`, what, m["shell_path"].Value)
	}
}

// TestSettingsLayersEffectivePolicy covers each layer alone and over the
// others, as the accepted event reports it.
func TestSettingsLayersEffectivePolicy(t *testing.T) {
	wsEnables := `{"tool_policy":{"allow_shell":true,"allow_process":true,"bash_timeout_ms":7000}}`
	for _, tc := range []struct {
		name     string
		setup    layerSetup
		mutation bool // the request's allow_file_mutation
		want     map[string]string
	}{
		{name: "no settings", want: wantPolicy(nil)},
		{name: "empty user file", setup: layerSetup{user: `{}`}, want: wantPolicy(nil)},
		{name: "empty user tool_policy", setup: layerSetup{user: `{"tool_policy":{}}`}, want: wantPolicy(nil)},
		// (1) the user settings file alone.
		{name: "user file only",
			setup: layerSetup{user: `{"tool_policy":{"allow_shell":true,"bash_timeout_ms":5000,"max_output_bytes":2048,"allow_remote_read":true,"allow_process":false}}`},
			want: wantPolicy(map[string]string{"allow_shell": "true/config", "allow_process": "false/config",
				"bash_timeout_ms": "5000/config", "max_output_bytes": "2048/config", "allow_remote_read": "true/config"})},
		// (2) an untrusted workspace's file is ignored.
		{name: "untrusted workspace ignored",
			setup: layerSetup{user: `{"tool_policy":{"bash_timeout_ms":5000}}`, ws: wsEnables},
			want:  wantPolicy(map[string]string{"bash_timeout_ms": "5000/config"})},
		{name: "untrusted workspace ignored without a user file",
			setup: layerSetup{ws: wsEnables},
			want:  wantPolicy(nil)},
		{name: "user file trusts another workspace only",
			setup: layerSetup{user: `{"trusted_workspaces":["$OTHER"]}`, ws: wsEnables},
			want:  wantPolicy(nil)},
		{name: "user file trusts a subdirectory of the workspace only",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS/sub"]}`, ws: wsEnables},
			want:  wantPolicy(nil)},
		{name: "user file trusts the workspace's parent only",
			setup: layerSetup{user: `{"trusted_workspaces":["$PARENT"]}`, ws: wsEnables},
			want:  wantPolicy(nil)},
		{name: "untrusted malformed workspace file is not even read",
			setup: layerSetup{ws: `{"tool_policy":{"allow_shell":tru`},
			want:  wantPolicy(nil)},
		// (3) trusted by the user file: applied, over the user file.
		{name: "trusted by trusted_workspaces overrides the user file",
			setup: layerSetup{
				user: `{"trusted_workspaces":["$OTHER","$WS"],"tool_policy":{"allow_shell":false,"bash_timeout_ms":5000,"max_output_bytes":2048,"allow_remote_read":true}}`,
				ws:   `{"tool_policy":{"allow_shell":true,"allow_process":true,"bash_timeout_ms":7000,"allow_remote_read":false}}`},
			want: wantPolicy(map[string]string{"allow_shell": "true/config", "allow_process": "true/config",
				"bash_timeout_ms": "7000/config", "max_output_bytes": "2048/config", "allow_remote_read": "false/config"})},
		{name: "trusted_workspaces entry is compared cleaned",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS/./"]}`, ws: wsEnables},
			want: wantPolicy(map[string]string{"allow_shell": "true/config", "allow_process": "true/config",
				"bash_timeout_ms": "7000/config"})},
		{name: "trusted workspace without a settings file",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS"],"tool_policy":{"max_output_bytes":4096}}`},
			want:  wantPolicy(map[string]string{"max_output_bytes": "4096/config"})},
		{name: "trusted workspace file with an empty tool_policy",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS"],"tool_policy":{"max_output_bytes":4096}}`, ws: `{"tool_policy":{}}`},
			want:  wantPolicy(map[string]string{"max_output_bytes": "4096/config"})},
		// (4) trusted by Options.TrustWorkspace.
		{name: "trusted by Options.TrustWorkspace",
			setup: layerSetup{trust: true, user: `{"tool_policy":{"allow_shell":false,"max_output_bytes":2048}}`, ws: wsEnables},
			want: wantPolicy(map[string]string{"allow_shell": "true/config", "allow_process": "true/config",
				"bash_timeout_ms": "7000/config", "max_output_bytes": "2048/config"})},
		{name: "Options.TrustWorkspace without a workspace file",
			setup: layerSetup{trust: true},
			want:  wantPolicy(nil)},
		// (6) precedence: environment over config, CLI over environment.
		{name: "environment over the user file",
			setup: layerSetup{
				user: `{"tool_policy":{"allow_shell":true,"allow_process":true,"bash_timeout_ms":5000,"max_output_bytes":2048}}`,
				env:  map[string]string{"OCTET_ALLOW_SHELL": "0", "OCTET_BASH_TIMEOUT_MS": "6000", "OCTET_ALLOW_REMOTE_READ": "true"}},
			want: wantPolicy(map[string]string{"allow_shell": "false/environment", "allow_process": "true/config",
				"bash_timeout_ms": "6000/environment", "max_output_bytes": "2048/config", "allow_remote_read": "true/environment"})},
		{name: "environment over a trusted workspace file",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS"]}`, ws: wsEnables,
				env: map[string]string{"OCTET_ALLOW_PROCESS": "false", "OCTET_MAX_OUTPUT_BYTES": "3000"}},
			want: wantPolicy(map[string]string{"allow_shell": "true/config", "allow_process": "false/environment",
				"bash_timeout_ms": "7000/config", "max_output_bytes": "3000/environment"})},
		{name: "CLI over environment over config",
			setup: layerSetup{
				user: `{"tool_policy":{"bash_timeout_ms":5000,"max_output_bytes":2048,"allow_remote_read":true,"allow_shell":true}}`,
				env:  map[string]string{"OCTET_BASH_TIMEOUT_MS": "6000", "OCTET_MAX_OUTPUT_BYTES": "3000", "OCTET_ALLOW_REMOTE_READ": "1", "OCTET_ALLOW_PROCESS": "1"},
				cli:  &PolicyLayer{BashTimeoutMS: lptr[int64](7000), AllowRemoteRead: lptr(false), AllowShell: lptr(false)}},
			want: wantPolicy(map[string]string{"bash_timeout_ms": "7000/cli", "max_output_bytes": "3000/environment",
				"allow_remote_read": "false/cli", "allow_shell": "false/cli", "allow_process": "true/environment"})},
		{name: "CLI over a trusted workspace file",
			setup: layerSetup{trust: true, ws: wsEnables, cli: &PolicyLayer{AllowProcess: lptr(false), BashTimeoutMS: lptr[int64](8000)}},
			want: wantPolicy(map[string]string{"allow_shell": "true/config", "allow_process": "false/cli",
				"bash_timeout_ms": "8000/cli"})},
		// (7) allow_file_mutation is on top of everything; an operator's
		// config allowing edits reports config.
		{name: "operator config allows edits",
			setup: layerSetup{user: `{"tool_policy":{"allow_edit":true,"allow_write":false}}`},
			want:  wantPolicy(map[string]string{"allow_edit": "true/config", "allow_write": "false/config"})},
		{name: "trusted workspace allows writes",
			setup: layerSetup{trust: true, ws: `{"tool_policy":{"allow_write":true}}`},
			want:  wantPolicy(map[string]string{"allow_write": "true/config"})},
		{name: "allow_file_mutation over a config that forbids edits", mutation: true,
			setup: layerSetup{user: `{"trusted_workspaces":["$WS"],"tool_policy":{"allow_edit":false,"allow_write":false}}`,
				ws: `{"tool_policy":{"allow_edit":false}}`, env: map[string]string{"OCTET_ALLOW_SHELL": "1"}},
			want: wantPolicy(map[string]string{"allow_edit": "true/host_request", "allow_write": "true/host_request",
				"allow_shell": "true/environment"})},
		{name: "allow_file_mutation over a config that allows edits", mutation: true,
			setup: layerSetup{user: `{"tool_policy":{"allow_edit":true,"allow_write":true}}`},
			want:  wantPolicy(map[string]string{"allow_edit": "true/host_request", "allow_write": "true/host_request"})},
		{name: "allow_file_mutation enables nothing else", mutation: true,
			want: wantPolicy(map[string]string{"allow_edit": "true/host_request", "allow_write": "true/host_request"})},
		// (9) shell_path: a selection, never the path.
		{name: "shell_path from the user file",
			setup: layerSetup{user: `{"tool_policy":{"shell_path":"$SHELL"}}`},
			want:  wantPolicy(map[string]string{"shell_path": "configured/config"})},
		{name: "shell_path from a trusted workspace file",
			setup: layerSetup{trust: true, ws: `{"tool_policy":{"shell_path":"$SHELL"}}`},
			want:  wantPolicy(map[string]string{"shell_path": "configured/config"})},
		{name: "shell_path that does not exist",
			setup: layerSetup{user: `{"tool_policy":{"shell_path":"/nonexistent/octet-custom-shell"}}`},
			want:  wantPolicy(map[string]string{"shell_path": "unavailable/config"})},
		{name: "shell_path from the environment over config",
			setup: layerSetup{user: `{"tool_policy":{"shell_path":"/nonexistent/octet-custom-shell"}}`,
				env: map[string]string{"OCTET_SHELL_PATH": "$SHELL"}},
			want: wantPolicy(map[string]string{"shell_path": "configured/environment"})},
		{name: "shell_path from the CLI over environment",
			setup: layerSetup{env: map[string]string{"OCTET_SHELL_PATH": "$SHELL"},
				cli: &PolicyLayer{ShellPath: lptr("/nonexistent/octet-custom-shell")}},
			want: wantPolicy(map[string]string{"shell_path": "unavailable/cli"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLayerFixture(t, tc.setup, text("ok"))
			req := f.req("q")
			req.AllowFileMutation = tc.mutation
			acc, _, res := f.accepted(req)
			if res.Status != "completed" {
				t.Fatalf("result %+v", res)
			}
			if diff := cmp.Diff(tc.want, policySummary(acc.EffectiveToolPolicy)); diff != "" {
				t.Errorf("effective_tool_policy (-want +got):\n%s", diff)
			}
			f.checkNoShellPath("accepted", acc.EffectiveToolPolicy)
		})
	}
}

// TestSettingsLayersRefused: a malformed settings file that applies refuses
// the run with config_invalid before it is accepted and before any
// provider request or session file; a workspace file may not list
// trusted_workspaces, and a symlink cannot stand in for it.
func TestSettingsLayersRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup layerSetup
		prep  func(f *layerFixture) // extra filesystem set-up
	}{
		// (8) a malformed user settings file.
		{name: "user file not JSON", setup: layerSetup{user: `{"tool_policy":{"allow_shell":true`}},
		{name: "user file empty", setup: layerSetup{user: ` `}},
		{name: "user file unknown member", setup: layerSetup{user: `{"tool_policy":{"allow_shel":true}}`}},
		{name: "user file unknown top-level member", setup: layerSetup{user: `{"trusted":["$WS"]}`}},
		{name: "user file wrong type", setup: layerSetup{user: `{"tool_policy":{"allow_shell":"yes"}}`}},
		{name: "user file duplicate member", setup: layerSetup{user: `{"tool_policy":{"allow_shell":false,"allow_shell":true}}`}},
		{name: "user file relative shell_path", setup: layerSetup{user: `{"tool_policy":{"shell_path":"bin/sh"}}`}},
		{name: "user file bash_timeout_ms out of range", setup: layerSetup{user: `{"tool_policy":{"bash_timeout_ms":0}}`}},
		{name: "user file max_output_bytes out of range", setup: layerSetup{user: `{"tool_policy":{"max_output_bytes":10}}`}},
		{name: "user file relative trusted_workspaces entry", setup: layerSetup{user: `{"trusted_workspaces":["ws"]}`}},
		{name: "user file is a directory", prep: func(f *layerFixture) {
			if err := os.MkdirAll(filepath.Join(f.home, ".octet", "settings.json"), 0o755); err != nil {
				f.t.Fatal(err)
			}
		}},
		{name: "malformed user file even when the environment and CLI set everything",
			setup: layerSetup{user: `[]`, env: map[string]string{"OCTET_ALLOW_SHELL": "1"}, cli: &PolicyLayer{AllowProcess: lptr(true)}}},
		// A malformed file of a trusted workspace.
		{name: "trusted workspace file not JSON", setup: layerSetup{user: `{"trusted_workspaces":["$WS"]}`, ws: `{"tool_policy":`}},
		{name: "trusted workspace file unknown member", setup: layerSetup{trust: true, ws: `{"tool_policy":{"allow_everything":true}}`}},
		{name: "trusted workspace file relative shell_path", setup: layerSetup{trust: true, ws: `{"tool_policy":{"shell_path":"sh"}}`}},
		// (5) a workspace file may not list trusted_workspaces, even itself.
		{name: "trusted workspace file lists another workspace",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS"]}`, ws: `{"trusted_workspaces":["$OTHER"],"tool_policy":{"allow_shell":true}}`}},
		{name: "trusted workspace file lists itself",
			setup: layerSetup{trust: true, ws: `{"trusted_workspaces":["$WS"]}`}},
		// The workspace file is read through the workspace root: a symlink
		// cannot substitute another file.
		{name: "trusted workspace settings file is a symlink outside", setup: layerSetup{trust: true},
			prep: func(f *layerFixture) {
				out := filepath.Join(f.other, "evil.json")
				writeSettingsFile(f.t, out, `{"tool_policy":{"allow_shell":true,"allow_process":true}}`, 0o644)
				os.MkdirAll(filepath.Join(f.ws, ".octet"), 0o755)
				if err := os.Symlink(out, filepath.Join(f.ws, ".octet", "settings.json")); err != nil {
					f.t.Fatal(err)
				}
			}},
		{name: "trusted workspace .octet is a symlink outside", setup: layerSetup{user: `{"trusted_workspaces":["$WS"]}`},
			prep: func(f *layerFixture) {
				writeSettingsFile(f.t, filepath.Join(f.other, ".octet", "settings.json"), `{"tool_policy":{"allow_shell":true,"allow_process":true}}`, 0o644)
				if err := os.Symlink(filepath.Join(f.other, ".octet"), filepath.Join(f.ws, ".octet")); err != nil {
					f.t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLayerFixture(t, tc.setup, text("never"))
			if tc.prep != nil {
				tc.prep(f)
			}
			rc, err := f.agent.Run(context.Background(), f.req("q"))
			var re *RunError
			if !errors.As(err, &re) || re.Code != protocol.CodeConfigInvalid || rc != nil {
				if rc != nil {
					for range rc.Events() {
					}
					rc.Wait()
				}
				t.Fatalf("Run = %v, %v (%T); want no run and a *RunError %s", rc, err, err, protocol.CodeConfigInvalid)
			}
			if !strings.Contains(re.Message, "settings.json") || strings.Contains(re.Message, f.home) || strings.Contains(re.Message, f.other) {
				t.Errorf("message %q: want it to name the settings file, without raw paths", re.Message)
			}
			if n := len(f.prov.requests()); n != 0 {
				t.Errorf("a refused run made %d provider requests", n)
			}
			if ents, _ := os.ReadDir(f.sessions); len(ents) != 0 {
				t.Errorf("a refused run left %d entries in the session store", len(ents))
			}
		})
	}
}

// TestSettingsLayersWorkspaceCannotTrustAnother (5): a trusted workspace
// whose file lists trusted_workspaces is refused, and the workspace it
// lists stays untrusted: its settings apply neither in its own runs nor in
// the listing workspace's, and an untrusted listing workspace's file is
// not read at all.
func TestSettingsLayersWorkspaceCannotTrustAnother(t *testing.T) {
	for _, trustedLister := range []bool{true, false} {
		t.Run(fmt.Sprintf("lister trusted=%v", trustedLister), func(t *testing.T) {
			// ws (the lister) lists other; other's file would enable bash.
			bash := calls(ToolCall{ID: "b", Name: "bash", Arguments: `{"command":"echo hi"}`})
			user := `{}`
			if trustedLister {
				user = `{"trusted_workspaces":["$WS"]}`
			}
			turns := [][]StreamEvent{bash, text("done")}
			if !trustedLister { // a refused run makes no provider request
				turns = append([][]StreamEvent{text("lister")}, turns...)
			}
			f := newLayerFixture(t, layerSetup{user: user, ws: `{"trusted_workspaces":["$OTHER"],"tool_policy":{"max_output_bytes":4096}}`}, turns...)
			writeSettingsFile(t, filepath.Join(f.other, ".octet", "settings.json"), `{"tool_policy":{"allow_shell":true,"allow_process":true,"bash_timeout_ms":7000}}`, 0o644)

			req := f.req("q")
			if trustedLister {
				if _, err := f.agent.Run(context.Background(), req); !isCode(err, protocol.CodeConfigInvalid) {
					t.Fatalf("run in a trusted workspace whose file lists trusted_workspaces: %v, want %s", err, protocol.CodeConfigInvalid)
				}
			} else {
				acc, _, _ := f.accepted(req)
				if diff := cmp.Diff(wantPolicy(nil), policySummary(acc.EffectiveToolPolicy)); diff != "" {
					t.Errorf("untrusted lister's run (-want +got):\n%s", diff)
				}
			}

			req = f.req("q")
			req.RunID, req.Workspace = "run-2", f.other
			acc, evs, res := f.accepted(req)
			if diff := cmp.Diff(wantPolicy(nil), policySummary(acc.EffectiveToolPolicy)); diff != "" {
				t.Errorf("the listed workspace's run (-want +got):\n%s", diff)
			}
			pol := find[protocol.ToolPolicy](evs)
			if len(pol) != 1 || pol[0].Decision.Allowed || pol[0].Decision.DenialCode != protocol.CodeProcessNotEnabled {
				t.Errorf("bash in the listed workspace: %+v", pol)
			}
			if res.Status != "completed" {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// TestSettingsLayersBashDecision (10): a bash call runs exactly when the
// effective allow_shell and allow_process are both true, whichever layers
// set them; otherwise it is denied process_not_enabled.
func TestSettingsLayersBashDecision(t *testing.T) {
	both := `{"tool_policy":{"allow_shell":true,"allow_process":true}}`
	for _, tc := range []struct {
		name    string
		setup   layerSetup
		allowed bool
		denial  protocol.Code
		output  string // in the allowed call's output
		sources string // "allow_shell/allow_process" sources when allowed
	}{
		{name: "default", denial: protocol.CodeProcessNotEnabled},
		{name: "user file enables both", setup: layerSetup{user: both}, allowed: true, output: "hi", sources: "config/config"},
		{name: "user file enables the shell only", setup: layerSetup{user: `{"tool_policy":{"allow_shell":true}}`}, denial: protocol.CodeProcessNotEnabled},
		{name: "user file enables the process only", setup: layerSetup{user: `{"tool_policy":{"allow_process":true}}`}, denial: protocol.CodeProcessNotEnabled},
		{name: "workspace trusted by trusted_workspaces enables both",
			setup: layerSetup{user: `{"trusted_workspaces":["$WS"]}`, ws: both}, allowed: true, output: "hi", sources: "config/config"},
		{name: "workspace trusted by the user file overrides its disable",
			setup:   layerSetup{user: `{"trusted_workspaces":["$WS"],"tool_policy":{"allow_shell":false,"allow_process":false}}`, ws: both},
			allowed: true, output: "hi", sources: "config/config"},
		{name: "workspace trusted by Options.TrustWorkspace enables both",
			setup: layerSetup{trust: true, ws: both}, allowed: true, output: "hi", sources: "config/config"},
		{name: "untrusted workspace cannot enable", setup: layerSetup{ws: both}, denial: protocol.CodeProcessNotEnabled},
		{name: "workspace trusted for another workspace cannot enable",
			setup: layerSetup{user: `{"trusted_workspaces":["$OTHER"]}`, ws: both}, denial: protocol.CodeProcessNotEnabled},
		{name: "trusted workspace disables what the user file enables",
			setup:  layerSetup{user: `{"trusted_workspaces":["$WS"],"tool_policy":{"allow_shell":true,"allow_process":true}}`, ws: `{"tool_policy":{"allow_process":false}}`},
			denial: protocol.CodeProcessNotEnabled},
		{name: "environment disables what config enables",
			setup: layerSetup{user: both, env: map[string]string{"OCTET_ALLOW_PROCESS": "0"}}, denial: protocol.CodeProcessNotEnabled},
		{name: "environment disables what a trusted workspace enables",
			setup: layerSetup{trust: true, ws: both, env: map[string]string{"OCTET_ALLOW_SHELL": "false"}}, denial: protocol.CodeProcessNotEnabled},
		{name: "CLI disables what the environment enables",
			setup:  layerSetup{env: map[string]string{"OCTET_ALLOW_SHELL": "1", "OCTET_ALLOW_PROCESS": "1"}, cli: &PolicyLayer{AllowShell: lptr(false)}},
			denial: protocol.CodeProcessNotEnabled},
		{name: "trusted workspace and CLI together",
			setup:   layerSetup{trust: true, ws: `{"tool_policy":{"allow_shell":true}}`, cli: &PolicyLayer{AllowProcess: lptr(true)}},
			allowed: true, output: "hi", sources: "config/cli"},
		{name: "configured shell from the user file runs",
			setup:   layerSetup{user: `{"tool_policy":{"allow_shell":true,"allow_process":true,"shell_path":"$SHELL"}}`},
			allowed: true, output: "configured-shell-ran", sources: "config/config"},
		{name: "configured shell that does not exist",
			setup:  layerSetup{user: `{"tool_policy":{"allow_shell":true,"allow_process":true,"shell_path":"/nonexistent/octet-custom-shell"}}`},
			denial: protocol.CodeShellUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLayerFixture(t, tc.setup, calls(ToolCall{ID: "b", Name: "bash", Arguments: `{"command":"echo hi"}`}), text("done"))
			acc, evs, res := f.accepted(f.req("run it"))
			if res.Status != "completed" || res.ToolCalls != 1 {
				t.Fatalf("result %+v", res)
			}
			pol := find[protocol.ToolPolicy](evs)
			fin := find[protocol.ToolFinish](evs)
			if len(pol) != 1 || len(fin) != 1 {
				t.Fatalf("%d tool_policy, %d tool_finish events", len(pol), len(fin))
			}
			d := pol[0].Decision
			if d.Effect != policy.EffectProcess || d.Allowed != tc.allowed || d.DenialCode != tc.denial {
				t.Errorf("decision effect=%s allowed=%v denial=%q; want allowed=%v denial=%q", d.Effect, d.Allowed, d.DenialCode, tc.allowed, tc.denial)
			}
			// The decision's policy is the run's effective policy.
			if diff := cmp.Diff(policySummary(acc.EffectiveToolPolicy), policySummary(d.Policy)); diff != "" {
				t.Errorf("decision policy differs from accepted (-accepted +decision):\n%s", diff)
			}
			f.checkNoShellPath("tool_policy", d.Policy)
			raw, _ := json.Marshal(pol[0])
			if strings.Contains(string(raw), "echo hi") || strings.Contains(string(raw), f.ws) {
				t.Errorf("tool_policy carries the command or a path: %s", raw)
			}
			if tc.allowed {
				if d.Authorization != policy.AuthOperator {
					t.Errorf("authorization %q, want operator", d.Authorization)
				}
				if got := string(d.Policy.AllowShell.Source) + "/" + string(d.Policy.AllowProcess.Source); got != tc.sources {
					t.Errorf("allow_shell/allow_process sources %s, want %s", got, tc.sources)
				}
				if !fin[0].OK || !strings.Contains(fin[0].Output, tc.output) {
					t.Errorf("tool_finish ok=%v output %q error %+v; want output with %q", fin[0].OK, fin[0].Output, fin[0].Error, tc.output)
				}
			} else {
				if fin[0].OK || fin[0].Error == nil || fin[0].Error.Code != tc.denial {
					t.Errorf("tool_finish %+v; want the error %s", fin[0], tc.denial)
				}
				if strings.Contains(fin[0].Output, "hi") || len(find[protocol.ToolProgress](evs)) != 0 {
					t.Errorf("the denied command ran: output %q", fin[0].Output)
				}
			}
		})
	}
}

// TestSettingsLayersMutationDecision (7): file mutation allowed by the
// operator's config is authorized "operator" with source config, per tool;
// allow_file_mutation authorizes both as host_request over any config.
func TestSettingsLayersMutationDecision(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    layerSetup
		mutation bool
		edit     string // "operator", "host_request" or a denial code
		write    string
		source   string // allow_edit/allow_write sources
	}{
		{name: "default", edit: string(protocol.CodeMutationNotAuthorized), write: string(protocol.CodeMutationNotAuthorized), source: "default/default"},
		{name: "user file allows edit only", setup: layerSetup{user: `{"tool_policy":{"allow_edit":true}}`},
			edit: policy.AuthOperator, write: string(protocol.CodeMutationNotAuthorized), source: "config/default"},
		{name: "trusted workspace allows write only", setup: layerSetup{user: `{"trusted_workspaces":["$WS"]}`, ws: `{"tool_policy":{"allow_write":true}}`},
			edit: string(protocol.CodeMutationNotAuthorized), write: policy.AuthOperator, source: "default/config"},
		{name: "untrusted workspace cannot allow", setup: layerSetup{ws: `{"tool_policy":{"allow_edit":true,"allow_write":true}}`},
			edit: string(protocol.CodeMutationNotAuthorized), write: string(protocol.CodeMutationNotAuthorized), source: "default/default"},
		{name: "allow_file_mutation over a forbidding config", mutation: true,
			setup: layerSetup{trust: true, user: `{"tool_policy":{"allow_edit":false,"allow_write":false}}`, ws: `{"tool_policy":{"allow_write":false}}`},
			edit:  policy.AuthHostRequest, write: policy.AuthHostRequest, source: "host_request/host_request"},
		{name: "allow_file_mutation over an allowing config", mutation: true,
			setup: layerSetup{user: `{"tool_policy":{"allow_edit":true,"allow_write":true}}`},
			edit:  policy.AuthHostRequest, write: policy.AuthHostRequest, source: "host_request/host_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLayerFixture(t, tc.setup,
				calls(ToolCall{ID: "e", Name: "edit", Arguments: `{"path":"a.txt","old_text":"one","new_text":"two"}`},
					ToolCall{ID: "w", Name: "write", Arguments: `{"path":"b.txt","content":"new"}`}),
				text("done"))
			writeSettingsFile(t, filepath.Join(f.ws, "a.txt"), "one\n", 0o644)
			req := f.req("change files")
			req.AllowFileMutation = tc.mutation
			acc, evs, res := f.accepted(req)
			if res.Status != "completed" {
				t.Fatalf("result %+v", res)
			}
			e := acc.EffectiveToolPolicy
			if got := string(e.AllowEdit.Source) + "/" + string(e.AllowWrite.Source); got != tc.source {
				t.Errorf("accepted allow_edit/allow_write sources %s, want %s", got, tc.source)
			}
			got := map[string]string{}
			for _, p := range find[protocol.ToolPolicy](evs) {
				if p.Decision.Allowed {
					got[p.Tool] = p.Decision.Authorization
				} else {
					got[p.Tool] = string(p.Decision.DenialCode)
				}
			}
			if diff := cmp.Diff(map[string]string{"edit": tc.edit, "write": tc.write}, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			a, _ := os.ReadFile(filepath.Join(f.ws, "a.txt"))
			_, berr := os.Stat(filepath.Join(f.ws, "b.txt"))
			if edited := string(a) == "two\n"; edited != (tc.edit == policy.AuthOperator || tc.edit == policy.AuthHostRequest) {
				t.Errorf("a.txt is %q after edit decision %s", a, tc.edit)
			}
			if written := berr == nil; written != (tc.write == policy.AuthOperator || tc.write == policy.AuthHostRequest) {
				t.Errorf("b.txt exists=%v after write decision %s", written, tc.write)
			}
		})
	}
}
