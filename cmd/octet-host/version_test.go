package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"octet.dev/host/spec/schema"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "octet.dev/host", Version: "(devel)"}}
		if rev != "" {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: "vcs", Value: "git"}, debug.BuildSetting{Key: "vcs.revision", Value: rev})
		}
		if modified != "" {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return info
	}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "octet.dev/host", Version: "v0.2.0"}}
	for _, tt := range []struct {
		name, stamp string
		info        *debug.BuildInfo
		want        string
	}{
		{"the -X stamp wins", "1.4.0", installed, "1.4.0"},
		{"go install of a tagged version", "", installed, "0.2.0"},
		{"checkout build, pseudo-version from git", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201120000-1a2b3c4d5e6f"}}, "0.0.0-20261201120000-1a2b3c4d5e6f"},
		{"pseudo-version of a modified tree", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201120000-1a2b3c4d5e6f+dirty"}}, "0.0.0-20261201120000-1a2b3c4d5e6f+dirty"},
		{"checkout, clean", "", vcs("1a2b3c4d5e6f708192a3b4c5d6e7f80912345678", "false"), "(devel)+1a2b3c4d5e6f"},
		{"checkout, uncommitted changes", "", vcs("1a2b3c4d5e6f708192a3b4c5d6e7f80912345678", "true"), "(devel)+1a2b3c4d5e6f-dirty"},
		{"checkout without VCS stamp", "", vcs("", ""), "(devel)"},
		{"no build information", "", nil, "(devel)"},
	} {
		if got := versionFrom(tt.stamp, tt.info); got != tt.want {
			t.Errorf("%s: versionFrom = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionOfBuiltBinary checks the binary TestMain built (no -X stamp)
// reports the version its own build information gives, never a made-up
// release number.
func TestVersionOfBuiltBinary(t *testing.T) {
	info, err := buildinfo.ReadFile(hostBin)
	if err != nil {
		t.Fatal(err)
	}
	want := versionFrom("", info)
	if want == "" || strings.HasPrefix(want, "0.1.0") {
		t.Fatalf("versionFrom(build info of %s) = %q", hostBin, want)
	}
	p := start(t, hostBin)
	p.send(t, `{"protocol_version":1,"request_id":"v","command":"hello"}`)
	ev := p.next(t)
	var data struct {
		SDKVersion string `json:"sdk_version"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Type != "hello" {
		t.Fatalf("hello: %s %s, %v", ev.Type, ev.Data, err)
	}
	if data.SDKVersion != want {
		t.Errorf("hello sdk_version = %q, want %q (from the binary's build information)", data.SDKVersion, want)
	}
	out, err := exec.Command(hostBin, "--version").Output()
	if err != nil || string(out) != "octet-host "+want+" (native-host protocol 1)\n" {
		t.Errorf("--version: %q, %v; want version %q", out, err, want)
	}
}

// TestSchemaFlag checks --schema prints the embedded JSON Schema, exactly,
// and exits 0 without reading stdin or logging.
func TestSchemaFlag(t *testing.T) {
	cmd := exec.Command(hostBin, "--schema")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--schema: %v; stderr %s", err, stderr.String())
	}
	if !bytes.Equal(out, schema.JSON()) {
		t.Errorf("--schema printed %d bytes, not the %d of the embedded schema", len(out), len(schema.JSON()))
	}
	if !json.Valid(out) || stderr.Len() != 0 {
		t.Errorf("valid JSON %v, stderr %q", json.Valid(out), stderr.String())
	}
}
