package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tool-policy layers through the binary (CONTRACT §10): main.go's wiring
// of ~/.octet/settings.json (HOME), the trusted workspace's
// .octet/settings.json (trusted_workspaces or --trust-workspace), the
// OCTET_* environment and the flags, each reported with its source.

func writeLayerFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// policyValue returns "value/source" of one effective_tool_policy field.
func policyValue(t *testing.T, pol map[string]any, field string) string {
	t.Helper()
	v, ok := pol[field].(map[string]any)
	if !ok {
		t.Fatalf("effective_tool_policy has no %s: %v", field, pol)
	}
	return fmt.Sprintf("%v/%v", v["value"], v["source"])
}

func TestPolicyLayersThroughTheBinary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted bool // the user file lists the workspace
		args    []string
		allowed bool
		want    map[string]string
	}{
		{name: "trusted by trusted_workspaces", trusted: true, args: []string{"--max-output-bytes", "8192"}, allowed: true,
			want: map[string]string{"allow_shell": "true/config", "allow_process": "true/config", "bash_timeout_ms": "6000/environment",
				"max_output_bytes": "8192/cli", "allow_remote_read": "false/config", "allow_edit": "false/default"}},
		{name: "trusted by --trust-workspace", args: []string{"--trust-workspace"}, allowed: true,
			want: map[string]string{"allow_shell": "true/config", "allow_process": "true/config", "bash_timeout_ms": "6000/environment",
				"max_output_bytes": "3000/environment", "allow_remote_read": "false/config"}},
		{name: "untrusted workspace ignored", args: []string{"--bash-timeout-ms", "9000"},
			want: map[string]string{"allow_shell": "true/config", "allow_process": "false/default", "bash_timeout_ms": "9000/cli",
				"max_output_bytes": "3000/environment", "allow_remote_read": "true/config"}},
		{name: "flag over the trusted workspace", trusted: true, args: []string{"--allow-process=false"},
			want: map[string]string{"allow_shell": "true/config", "allow_process": "false/cli", "bash_timeout_ms": "6000/environment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h := startBashHost(t, "echo layered-bash-ran", []string{"HOME=" + home, "OCTET_BASH_TIMEOUT_MS=6000", "OCTET_MAX_OUTPUT_BYTES=3000"}, tc.args...)
			trusted := ""
			if tc.trusted {
				trusted = fmt.Sprintf(`"trusted_workspaces":[%s],`, mustJSONString(t, h.ws))
			}
			writeLayerFile(t, filepath.Join(home, ".octet", "settings.json"),
				`{`+trusted+`"tool_policy":{"allow_shell":true,"bash_timeout_ms":5000,"max_output_bytes":2048,"allow_remote_read":true}}`)
			writeLayerFile(t, filepath.Join(h.ws, ".octet", "settings.json"), `{"tool_policy":{"allow_process":true,"allow_remote_read":false}}`)
			h.sendRun(t, "s1")
			evs := h.events(t)
			accs := dataOf(t, evs, "accepted")
			if len(accs) != 1 {
				t.Fatalf("%d accepted events: %v", len(accs), evs)
			}
			pol := accs[0]["effective_tool_policy"].(map[string]any)
			for field, want := range tc.want {
				if got := policyValue(t, pol, field); got != want {
					t.Errorf("%s = %s, want %s", field, got, want)
				}
			}
			if sp := pol["shell_path"].(map[string]any)["value"].(map[string]any); len(sp) != 1 || sp["selection"] == nil {
				t.Errorf("shell_path.value %v", sp)
			}
			d := dataOf(t, evs, "tool_policy")[0]["decision"].(map[string]any)
			fin := dataOf(t, evs, "tool_finish")[0]
			out, _ := fin["output"].(string)
			if tc.allowed {
				if d["allowed"] != true || d["authorization"] != "operator" || fin["ok"] != true || !strings.Contains(out, "layered-bash-ran") {
					t.Errorf("decision %v, tool_finish %v; want bash to run", d, fin)
				}
			} else if d["allowed"] != false || d["denial_code"] != "process_not_enabled" || fin["ok"] != false || strings.Contains(out, "layered-bash-ran") {
				t.Errorf("decision %v, tool_finish %v; want bash denied process_not_enabled", d, fin)
			}
		})
	}
}

// TestMalformedSettingsRefusesTheRun: a malformed ~/.octet/settings.json,
// or a trusted workspace file that lists trusted_workspaces, gets a single
// final_result error config_invalid and no accepted; the host keeps serving.
func TestMalformedSettingsRefusesTheRun(t *testing.T) {
	for _, tc := range []struct {
		name, user, ws string
		args           []string
	}{
		{name: "user file not JSON", user: `{"tool_policy":{`},
		{name: "user file unknown member", user: `{"tool_policy":{"allow_bash":true}}`},
		{name: "workspace file lists trusted_workspaces", ws: `{"trusted_workspaces":["/"]}`, args: []string{"--trust-workspace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			h := startBashHost(t, "echo should-not-run", []string{"HOME=" + home}, tc.args...)
			if tc.user != "" {
				writeLayerFile(t, filepath.Join(home, ".octet", "settings.json"), tc.user)
			}
			if tc.ws != "" {
				writeLayerFile(t, filepath.Join(h.ws, ".octet", "settings.json"), tc.ws)
			}
			h.sendRun(t, "bad")
			evs := h.events(t)
			if len(evs) != 1 || evs[0].Type != "final_result" {
				t.Fatalf("events %v; want a single final_result", evs)
			}
			res := dataOf(t, evs, "final_result")[0]
			if e, _ := res["error"].(map[string]any); res["status"] != "error" || e["code"] != "config_invalid" {
				t.Fatalf("final_result %v; want error config_invalid", res)
			}
			// The host still serves: the next run, with the file fixed, is accepted.
			os.Remove(filepath.Join(home, ".octet", "settings.json"))
			os.Remove(filepath.Join(h.ws, ".octet", "settings.json"))
			h.sendRun(t, "good")
			if evs := h.events(t); len(dataOf(t, evs, "accepted")) != 1 {
				t.Errorf("the run after the fix: %v", evs)
			}
		})
	}
}
