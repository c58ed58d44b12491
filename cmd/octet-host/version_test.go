package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
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
		{"pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201120000-1a2b3c4d5e6f"}}, "0.0.0-20261201120000-1a2b3c4d5e6f"},
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

// TestVersionOfCheckoutBuild checks the binary TestMain built from this
// checkout (no -X stamp) reports a development version, never a made-up
// release number.
func TestVersionOfCheckoutBuild(t *testing.T) {
	p := start(t, hostBin)
	p.send(t, `{"protocol_version":1,"request_id":"v","command":"hello"}`)
	ev := p.next(t)
	var data struct {
		SDKVersion string `json:"sdk_version"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Type != "hello" {
		t.Fatalf("hello: %s %s, %v", ev.Type, ev.Data, err)
	}
	if !strings.HasPrefix(data.SDKVersion, "(devel)") {
		t.Errorf("hello sdk_version of a checkout build = %q, want (devel)…", data.SDKVersion)
	}
}
