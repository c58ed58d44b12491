package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := LoadSettings(filepath.Join(dir, "missing.json"), "missing")
	if err != nil || s.ToolPolicy != nil {
		t.Fatalf("missing file: %+v %v", s, err)
	}
	good := write("good.json", `{"tool_policy":{"allow_shell":true,"allow_process":true,"bash_timeout_ms":5000,"shell_path":"/bin/sh"},"trusted_workspaces":["/srv/w"]}`)
	s, err = LoadSettings(good, "~/.octet/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	l := s.Layer()
	if l.Source != SourceConfig || !*l.AllowShell || !*l.AllowProcess || *l.BashTimeoutMS != 5000 || *l.ShellPath != "/bin/sh" || l.AllowEdit != nil {
		t.Errorf("layer %+v", l)
	}
	if !s.Trusts("/srv/w/") || s.Trusts("/srv/other") {
		t.Error("Trusts")
	}
	for name, body := range map[string]string{
		"unknown":   `{"tool_policy":{"allow_everything":true}}`,
		"case":      `{"Tool_Policy":{}}`,
		"duplicate": `{"tool_policy":{"allow_shell":true,"allow_shell":false}}`,
		"type":      `{"tool_policy":{"allow_shell":"yes"}}`,
		"timeout":   `{"tool_policy":{"bash_timeout_ms":0}}`,
		"output":    `{"tool_policy":{"max_output_bytes":10}}`,
		"relshell":  `{"tool_policy":{"shell_path":"bash"}}`,
		"reltrust":  `{"trusted_workspaces":["w"]}`,
		"notjson":   `{`,
	} {
		_, err := LoadSettings(write(name+".json", body), "~/.octet/settings.json")
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "~/.octet/settings.json") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvAllowShell: "true", EnvAllowProcess: "1", EnvBashTimeoutMS: "2500", EnvShellPath: "/bin/bash", EnvAllowRemoteRead: "FALSE"}
	l, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	yes, no, ms, sh := true, false, int64(2500), "/bin/bash"
	want := Layer{Source: SourceEnvironment, AllowShell: &yes, AllowProcess: &yes, AllowRemoteRead: &no, BashTimeoutMS: &ms, ShellPath: &sh}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Error(diff)
	}
	for k, v := range map[string]string{EnvAllowShell: "yes", EnvBashTimeoutMS: "fast", EnvMaxOutputBytes: "1", EnvShellPath: "bash"} {
		if _, err := FromEnv(func(n string) string {
			if n == k {
				return v
			}
			return ""
		}); !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), k[:6]) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

// TestCheckLayer: an embedder's layer must come from an operator's source
// and hold valid values.
func TestCheckLayer(t *testing.T) {
	yes, rel := true, "bin/sh"
	for _, src := range []Source{SourceConfig, SourceEnvironment, SourceCLI} {
		if err := CheckLayer(Layer{Source: src, AllowShell: &yes}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	for name, l := range map[string]Layer{
		"host_request source": {Source: SourceHostRequest, AllowShell: &yes},
		"default source":      {Source: SourceDefault},
		"no source":           {AllowProcess: &yes},
		"relative shell":      {Source: SourceCLI, ShellPath: &rel},
	} {
		if err := CheckLayer(l); !errors.Is(err, ErrSettings) {
			t.Errorf("%s: %v, want ErrSettings", name, err)
		}
	}
}

func TestTerminalGateSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{"terminal_gate":{"model":"openai/gpt-5.4-mini","instructions":"The answer must say which tests ran."}}`), "~/.octet/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := (&TerminalGate{Model: "openai/gpt-5.4-mini", Instructions: "The answer must say which tests ran."}); !cmp.Equal(s.TerminalGate, want) {
		t.Errorf("terminal_gate %+v", s.TerminalGate)
	}
	if s, err := ParseSettings([]byte(`{}`), "x"); err != nil || s.TerminalGate != nil {
		t.Errorf("no terminal_gate: %+v %v", s.TerminalGate, err)
	}
	long := strings.Repeat("a", MaxGateInstructionsBytes+1)
	for name, tc := range map[string]struct{ body, want string }{
		"unknown member": {`{"terminal_gate":{"model":"m","instructions":"i","route":"x"}}`, "route"},
		"no model":       {`{"terminal_gate":{"instructions":"i"}}`, "terminal_gate.model is required"},
		"blank model":    {`{"terminal_gate":{"model":" ","instructions":"i"}}`, "terminal_gate.model is required"},
		"control":        {`{"terminal_gate":{"model":"m\u0001","instructions":"i"}}`, "control character"},
		"no instr":       {`{"terminal_gate":{"model":"m"}}`, "terminal_gate.instructions is required"},
		"blank instr":    {`{"terminal_gate":{"model":"m","instructions":"\n\t"}}`, "terminal_gate.instructions is required"},
		"long instr":     {`{"terminal_gate":{"model":"m","instructions":"` + long + `"}}`, "longer than 65536"},
		"not an object":  {`{"terminal_gate":"m"}`, "terminal_gate"},
		"duplicate":      {`{"terminal_gate":{"model":"m","model":"n","instructions":"i"}}`, "duplicate"},
	} {
		_, err := ParseSettings([]byte(tc.body), "~/.octet/settings.json")
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "~/.octet/settings.json") {
			t.Errorf("%s: %v (want %q)", name, err, tc.want)
		}
	}
}
