package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

// manifestJSON is a valid extension.json for name, with overrides: a key
// mapped to "" is left out, any other value is written as the raw JSON
// of that member.
func manifestJSON(name string, over map[string]string) string {
	members := []struct{ k, v string }{
		{"name", fmt.Sprintf("%q", name)},
		{"version", `"1.2.0"`},
		{"description", `"Does things."`},
		{"api_version", `"0.3"`},
		{"command", `["node","index.js"]`},
	}
	var parts []string
	for _, m := range members {
		v, ok := over[m.k]
		if !ok {
			v = m.v
		}
		if v != "" {
			parts = append(parts, fmt.Sprintf("%q:%s", m.k, v))
		}
	}
	for k, v := range over {
		if !strings.Contains("name version description api_version command", k) {
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func writeExt(t testing.TB, layerDir, folder, content string) {
	t.Helper()
	write(t, filepath.Join(layerDir, "extensions", folder, "extension.json"), content)
}

// findingCodes is extension@layer:code for each finding.
func findingCodes(fs []ExtensionFinding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Extension+"@"+f.Layer+":"+string(f.Code))
	}
	return out
}

func TestExtensionManifestRules(t *testing.T) {
	e := newEnv(t, 1)
	r := e.roots[0]
	marker := filepath.Join(t.TempDir(), "started")
	cases := []struct {
		folder, content string
		code            protocol.Code
		msg             string
	}{
		{"good", manifestJSON("good", nil), protocol.CodeNotStarted, `version "1.2.0", extension API 0.3) is valid and was not started`},
		{"patch", manifestJSON("patch", map[string]string{"api_version": `"0.3.7"`}), protocol.CodeNotStarted, "extension API 0.3.7"},
		// A command that would leave a marker if anything ran it.
		{"marker", manifestJSON("marker", map[string]string{"command": fmt.Sprintf(`["/bin/sh","-c","touch %s"]`, marker)}), protocol.CodeNotStarted, "never starts extensions"},
		{"api-minor", manifestJSON("api-minor", map[string]string{"api_version": `"0.4"`}), protocol.CodeAPIVersionUnsupported, `api_version "0.4" is not supported; this host knows extension API 0.3`},
		{"api-major", manifestJSON("api-major", map[string]string{"api_version": `"1.0"`}), protocol.CodeAPIVersionUnsupported, `"1.0" is not supported`},
		{"api-older", manifestJSON("api-older", map[string]string{"api_version": `"0.2.9"`}), protocol.CodeAPIVersionUnsupported, `"0.2.9" is not supported`},
		{"api-garbage", manifestJSON("api-garbage", map[string]string{"api_version": `"three"`}), protocol.CodeManifestInvalid, `api_version "three" is not a version`},
		{"api-v", manifestJSON("api-v", map[string]string{"api_version": `"v0.3"`}), protocol.CodeManifestInvalid, "is not a version"},
		{"api-short", manifestJSON("api-short", map[string]string{"api_version": `"0"`}), protocol.CodeManifestInvalid, "is not a version"},
		{"api-zeros", manifestJSON("api-zeros", map[string]string{"api_version": `"0.03"`}), protocol.CodeManifestInvalid, "is not a version"},
		{"api-number", manifestJSON("api-number", map[string]string{"api_version": `0.3`}), protocol.CodeManifestInvalid, `"api_version" must be a string`},
		{"mismatch", manifestJSON("other-name", nil), protocol.CodeManifestInvalid, `name "other-name" differs from its folder's name`},
		{"case", manifestJSON("Case", nil), protocol.CodeManifestInvalid, "differs from its folder's name"},
		{"no-name", manifestJSON("no-name", map[string]string{"name": ""}), protocol.CodeManifestInvalid, "lacks name"},
		{"no-version", manifestJSON("no-version", map[string]string{"version": ""}), protocol.CodeManifestInvalid, "lacks version"},
		{"no-desc", manifestJSON("no-desc", map[string]string{"description": ""}), protocol.CodeManifestInvalid, "lacks description"},
		{"no-api", manifestJSON("no-api", map[string]string{"api_version": ""}), protocol.CodeManifestInvalid, "lacks api_version"},
		{"no-command", manifestJSON("no-command", map[string]string{"command": ""}), protocol.CodeManifestInvalid, "lacks command"},
		{"no-two", manifestJSON("no-two", map[string]string{"version": "", "command": ""}), protocol.CodeManifestInvalid, "lacks version, command"},
		{"null-version", manifestJSON("null-version", map[string]string{"version": "null"}), protocol.CodeManifestInvalid, "lacks version"},
		{"empty-version", manifestJSON("empty-version", map[string]string{"version": `""`}), protocol.CodeManifestInvalid, "version must be 1 to 64 bytes"},
		{"blank-desc", manifestJSON("blank-desc", map[string]string{"description": `"  "`}), protocol.CodeManifestInvalid, "description must not be empty"},
		{"long-desc", manifestJSON("long-desc", map[string]string{"description": `"` + strings.Repeat("é", 1025) + `"`}), protocol.CodeManifestInvalid, "description is 1025 characters"},
		{"empty-command", manifestJSON("empty-command", map[string]string{"command": `[]`}), protocol.CodeManifestInvalid, "command must name a program"},
		{"string-command", manifestJSON("string-command", map[string]string{"command": `"node index.js"`}), protocol.CodeManifestInvalid, "command must be an array of strings"},
		{"number-arg", manifestJSON("number-arg", map[string]string{"command": `["node",1]`}), protocol.CodeManifestInvalid, "command must be an array of strings"},
		{"empty-arg", manifestJSON("empty-arg", map[string]string{"command": `["node",""]`}), protocol.CodeManifestInvalid, "command[1] must be 1 to 4096 bytes"},
		{"nul-arg", manifestJSON("nul-arg", map[string]string{"command": `["no\u0000de"]`}), protocol.CodeManifestInvalid, "command[0] must be"},
		{"unknown", manifestJSON("unknown", map[string]string{"entry": `"x"`}), protocol.CodeManifestInvalid, `unknown member "entry"`},
		{"unknown-case", manifestJSON("unknown-case", map[string]string{"Name": `"unknown-case"`}), protocol.CodeManifestInvalid, `unknown member "Name"`},
		{"duplicate", `{"name":"duplicate","name":"duplicate","version":"1","description":"d","api_version":"0.3","command":["x"]}`, protocol.CodeManifestInvalid, `member "name" twice`},
		{"trailing", manifestJSON("trailing", nil) + " {}", protocol.CodeManifestInvalid, "is not valid JSON (at byte"},
		{"syntax", `{"name": "syntax",`, protocol.CodeManifestInvalid, "is not valid JSON"},
		{"array", `["syntax"]`, protocol.CodeManifestInvalid, "must hold one JSON object"},
		{"latin1", `{"name":"latin1","version":"1","description":"caf` + "\xe9" + `","api_version":"0.3","command":["x"]}`, protocol.CodeManifestInvalid, "is not valid UTF-8"},
		{"big", manifestJSON("big", map[string]string{"description": `"` + strings.Repeat("x", MaxManifestBytes) + `"`}), protocol.CodeManifestInvalid, "bytes; the cap is 65536"},
		{"ctl\x01name", manifestJSON("ctl\x01name", nil), protocol.CodeManifestInvalid, "the folder name is not UTF-8 text without control characters"},
		{strings.Repeat("n", 129), manifestJSON(strings.Repeat("n", 129), nil), protocol.CodeManifestInvalid, "the folder name is longer than 128 bytes"},
	}
	for _, c := range cases {
		writeExt(t, r, c.folder, c.content)
	}
	// A folder without a manifest, a manifest that is a directory, a
	// stray file, and hidden folders (ignored).
	os.MkdirAll(filepath.Join(r, "extensions/empty"), 0o755)
	os.MkdirAll(filepath.Join(r, "extensions/dir-manifest/extension.json"), 0o755)
	write(t, filepath.Join(r, "extensions/README.md"), "not an extension\n")
	os.MkdirAll(filepath.Join(r, "extensions/.git"), 0o755)
	writeExt(t, r, ".hidden", manifestJSON(".hidden", nil))

	s := e.resolve(t, false)
	got := map[string]ExtensionFinding{}
	for _, f := range s.Extensions() {
		if f.Layer != "root:1" {
			t.Errorf("finding of layer %q: %+v", f.Layer, f)
		}
		if _, dup := got[f.Extension]; dup {
			t.Errorf("two findings for %q", f.Extension)
		}
		got[f.Extension] = f
		if strings.Contains(f.Message, r) || strings.Contains(f.Message, "touch") || strings.Contains(f.Message, "node") {
			t.Errorf("message names a host path or the command: %q", f.Message)
		}
		if !strings.Contains(f.Message, "resource root 1") {
			t.Errorf("message does not name the layer: %q", f.Message)
		}
	}
	for _, c := range cases {
		name := c.folder
		switch {
		case name == "ctl\x01name":
			name = "ctl\uFFFDname"
		case len(name) > 128:
			name = name[:128]
		}
		f, ok := got[name]
		if !ok {
			t.Errorf("%s: no finding", c.folder)
			continue
		}
		if f.Code != c.code || !strings.Contains(f.Message, c.msg) {
			t.Errorf("%s: %s %q, want %s containing %q", c.folder, f.Code, f.Message, c.code, c.msg)
		}
		wantLevel := map[protocol.Code]string{protocol.CodeNotStarted: "info", protocol.CodeManifestInvalid: "error", protocol.CodeAPIVersionUnsupported: "warning"}[c.code]
		if f.Level != wantLevel {
			t.Errorf("%s: level %s, want %s", c.folder, f.Level, wantLevel)
		}
		delete(got, name)
	}
	for name, want := range map[string]string{"empty": "the folder has no extension.json", "dir-manifest": "extension.json is not a regular file"} {
		if f := got[name]; f.Code != protocol.CodeManifestInvalid || !strings.Contains(f.Message, want) {
			t.Errorf("%s: %+v", name, f)
		}
		delete(got, name)
	}
	if len(got) != 0 {
		t.Errorf("unexpected findings: %v", got)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the marker exists: an extension's command ran (%v)", err)
	}
}

func TestExtensionShadowing(t *testing.T) {
	e := newEnv(t, 2)
	user, ws := filepath.Join(e.home, ".octet"), filepath.Join(e.ws, ".octet")
	writeExt(t, user, "alpha", manifestJSON("alpha", nil))
	writeExt(t, ws, "alpha", manifestJSON("alpha", nil))
	writeExt(t, e.roots[1], "alpha", manifestJSON("alpha", nil))
	// A broken higher manifest does not hide a valid lower one.
	writeExt(t, user, "beta", manifestJSON("beta", nil))
	writeExt(t, e.roots[0], "beta", manifestJSON("beta", map[string]string{"api_version": `"0.4"`}))
	writeExt(t, e.roots[1], "beta", `{`)
	// A shadowed manifest is not examined: its breakage is not reported.
	writeExt(t, user, "gamma", `not json`)
	writeExt(t, e.roots[0], "gamma", manifestJSON("gamma", nil))
	// Broken everywhere: each reported.
	writeExt(t, user, "delta", manifestJSON("delta", map[string]string{"command": ""}))
	writeExt(t, ws, "delta", manifestJSON("delta", map[string]string{"api_version": `"9.9"`}))

	s := e.resolve(t, true)
	fs := s.Extensions()
	want := []string{
		"alpha@root:2:not_started", "alpha@workspace:shadowed", "alpha@user:shadowed",
		"beta@root:2:manifest_invalid", "beta@root:1:api_version_unsupported", "beta@user:not_started",
		"delta@workspace:api_version_unsupported", "delta@user:manifest_invalid",
		"gamma@root:1:not_started", "gamma@user:shadowed",
	}
	if diff := cmp.Diff(want, findingCodes(fs)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if fs[1].Message != `extension "alpha" in the workspace's .octet is shadowed by the one in resource root 2 (not examined)` || fs[1].Level != "info" {
		t.Errorf("shadowed: %+v", fs[1])
	}

	// Without trust the workspace layer is not read.
	fs = e.resolve(t, false).Extensions()
	want = []string{
		"alpha@root:2:not_started", "alpha@user:shadowed",
		"beta@root:2:manifest_invalid", "beta@root:1:api_version_unsupported", "beta@user:not_started",
		"delta@user:manifest_invalid",
		"gamma@root:1:not_started", "gamma@user:shadowed",
	}
	if diff := cmp.Diff(want, findingCodes(fs)); diff != "" {
		t.Errorf("untrusted findings (-want +got):\n%s", diff)
	}
}

func TestExtensionLinksAreNotFollowed(t *testing.T) {
	e := newEnv(t, 1)
	r := e.roots[0]
	outside := t.TempDir()
	write(t, filepath.Join(outside, "real/extension.json"), manifestJSON("linked-dir", nil))
	write(t, filepath.Join(outside, "extension.json"), manifestJSON("linked-file", nil))
	os.MkdirAll(filepath.Join(r, "extensions/linked-file"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "real"), filepath.Join(r, "extensions/linked-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "extension.json"), filepath.Join(r, "extensions/linked-file/extension.json")); err != nil {
		t.Fatal(err)
	}
	// A dangling link is a link too.
	if err := os.Symlink(filepath.Join(outside, "absent"), filepath.Join(r, "extensions/dangling")); err != nil {
		t.Fatal(err)
	}
	fs := e.resolve(t, false).Extensions()
	want := []string{"dangling@root:1:manifest_invalid", "linked-dir@root:1:manifest_invalid", "linked-file@root:1:manifest_invalid"}
	if diff := cmp.Diff(want, findingCodes(fs)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	for i, msg := range []string{"the folder is a symbolic link", "the folder is a symbolic link", "extension.json is a symbolic link"} {
		if !strings.Contains(fs[i].Message, msg) || strings.Contains(fs[i].Message, outside) {
			t.Errorf("%s: %q", fs[i].Extension, fs[i].Message)
		}
	}

	// extensions/ itself a link: nothing discovered, a diagnostic logged.
	e2 := newEnv(t, 1)
	if err := os.Symlink(filepath.Join(r, "extensions"), filepath.Join(e2.roots[0], "extensions")); err != nil {
		t.Fatal(err)
	}
	s := e2.resolve(t, false)
	if fs := s.Extensions(); len(fs) != 0 {
		t.Errorf("findings through a linked extensions/: %v", findingCodes(fs))
	}
	if got := codes(s.Diagnostics()); !cmp.Equal(got, []string{"root:1:symlink_skipped:extensions"}) {
		t.Errorf("diagnostics %v", got)
	}
}

func TestExtensionFindingsAreCapped(t *testing.T) {
	e := newEnv(t, 2)
	for i := range 100 {
		n := fmt.Sprintf("ext-%03d", i)
		writeExt(t, e.roots[0], n, manifestJSON(n, nil))
		if i < 10 {
			writeExt(t, e.roots[1], n, manifestJSON(n, nil)) // two findings for each of the first ten
		}
	}
	fs := e.resolve(t, false).Extensions()
	if len(fs) != MaxExtensionFindings+1 {
		t.Fatalf("%d findings", len(fs))
	}
	// 10 names × 2 findings, then 44 names × 1: ext-000 … ext-053.
	if last := fs[MaxExtensionFindings-1]; last.Extension != "ext-053" || last.Code != protocol.CodeNotStarted {
		t.Errorf("the 64th finding: %+v", last)
	}
	tr := fs[MaxExtensionFindings]
	if tr.Code != protocol.CodeTruncated || tr.Level != "warning" || tr.Extension != "" || tr.Layer != "" ||
		tr.Message != "findings about 46 more extension names were left out: at most 64 are reported a run (the first by name are)" {
		t.Errorf("truncated: %+v", tr)
	}

	// A name cut in the middle counts as left out.
	e = newEnv(t, 2)
	for i := range 64 {
		n := fmt.Sprintf("ext-%03d", i)
		writeExt(t, e.roots[1], n, manifestJSON(n, nil))
	}
	writeExt(t, e.roots[0], "ext-063", manifestJSON("ext-063", nil))
	fs = e.resolve(t, false).Extensions()
	if len(fs) != 65 || fs[63].Code != protocol.CodeNotStarted || !strings.HasPrefix(fs[64].Message, "findings about 1 more extension names") {
		t.Errorf("%d findings, last %+v", len(fs), fs[len(fs)-1])
	}
	// Exactly 64: no truncated.
	e = newEnv(t, 1)
	for i := range 64 {
		n := fmt.Sprintf("ext-%03d", i)
		writeExt(t, e.roots[0], n, manifestJSON(n, nil))
	}
	if fs := e.resolve(t, false).Extensions(); len(fs) != 64 || fs[63].Code != protocol.CodeNotStarted {
		t.Errorf("%d findings", len(fs))
	}
}

func TestNoExtensions(t *testing.T) {
	e := newEnv(t, 1)
	write(t, filepath.Join(e.roots[0], "extensions"), "a file, not a folder\n")
	s := e.resolve(t, false)
	if fs := s.Extensions(); len(fs) != 0 {
		t.Errorf("findings %v", findingCodes(fs))
	}
	if got := codes(s.Diagnostics()); !cmp.Equal(got, []string{"root:1:not_regular:extensions"}) {
		t.Errorf("diagnostics %v", got)
	}
	if fs := newEnv(t, 0).resolve(t, true).Extensions(); fs != nil {
		t.Errorf("empty layers: %v", fs)
	}
}

func TestAPIMajorMinor(t *testing.T) {
	for in, want := range map[string]string{"0.3": "0.3", "0.3.0": "0.3", "0.3.12": "0.3", "10.20": "10.20", "1.0": "1.0"} {
		if got, ok := apiMajorMinor(in); !ok || got != want {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "0", "0.", ".3", "0.3.", "0.3.1.2", "00.3", "0.03", "a.b", "0.3-beta", " 0.3", "0x1.3", "1234567890.1", "-1.3", "+0.3"} {
		if got, ok := apiMajorMinor(in); ok {
			t.Errorf("%q accepted as %q", in, got)
		}
	}
}
