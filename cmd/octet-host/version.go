package main

import (
	"runtime/debug"
	"strings"
)

// version is the SDK version a release build stamps in with
// -ldflags "-X main.version=0.2.0" (scripts/release does). Left empty, the
// version comes from the build information the go command embeds; see
// versionFrom.
var version string

// sdkVersion is the version reported by hello's sdk_version and by
// --version.
func sdkVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionFrom(version, info)
}

// versionFrom chooses the version, most specific first: the -X stamp; the
// main module's version when the go command knows it (a `go install
// octet.dev/host/cmd/octet-host@v0.2.0` build reports "0.2.0", without the
// "v" of the module tag, as hello's example versions are written); else
// "(devel)" — a build from a checkout — followed by the VCS revision the go
// command stamped, if any ("(devel)+1a2b3c4d5e6f", "-dirty" when the tree
// had uncommitted changes).
func versionFrom(stamp string, info *debug.BuildInfo) string {
	if stamp != "" {
		return stamp
	}
	if info == nil {
		return "(devel)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "(devel)+" + rev
}
