package main

import (
	"runtime/debug"
	"strings"
	"sync"
)

// version is the SDK version a release build stamps in with
// -ldflags "-X main.version=0.2.0" (scripts/release does). Left empty, the
// version comes from the build information the go command embeds; see
// versionFrom.
var version string

// sdkVersion is the version reported by hello's sdk_version and by
// --version, worked out once: reading the build information parses it.
var sdkVersion = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionFrom(version, info)
})

// versionFrom chooses the version, most specific first: the -X stamp; else
// the main module's version as the go command recorded it, without the
// module tag's "v" (hello's example versions are written "0.8.0"). That is
// the tagged version for `go install octet.dev/host/cmd/octet-host@v0.2.0`,
// and for a build in a git checkout (Go 1.24 and later) a pseudo-version
// naming the commit, "0.0.0-20261201145832-5524ce74e52c", with "+dirty"
// when the tree had uncommitted changes. Where the go command recorded no
// version ("(devel)": -buildvcs=false, no VCS, no git on the PATH) it is
// "(devel)", followed by the revision if one was stamped anyway
// ("(devel)+5524ce74e52c", "-dirty" for uncommitted changes).
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
