package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/resources"
)

// Resource layers through real runs (CONTRACT §18): AGENTS.md in
// the system prompt, skills offered and read through skill:// paths,
// read-only, nothing else outside the workspace readable.

func writeRes(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resourceAgent replaces f's agent with one that has the given roots and
// docs, as cmd/octet-host builds it.
func resourceAgent(t *testing.T, f *fixture, roots []string, docs fstest.MapFS, getenv func(string) string) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	opts := Options{Home: f.home, Getenv: getenv, ResourceRoots: roots, Version: "v9.9.9",
		ProviderFactory: func(r Route) (Provider, error) { f.lastRoute = r; return f.prov, nil },
		Sleep:           func(context.Context, time.Duration) error { return nil },
		Jitter:          func() float64 { return 0 }}
	if docs != nil {
		opts.Docs = docs
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
}

func TestRunSkillsAndContext(t *testing.T) {
	tc := func(id, name, args string) ToolCall { return ToolCall{ID: id, Name: name, Arguments: args} }
	f := newFixture(t,
		calls(tc("c1", "read", `{"path":"skill://pdf/SKILL.md"}`),
			tc("c2", "read", `{"path":"skill://pdf/ref/forms.md"}`),
			tc("c3", "read", `{"path":"skill://pdf/../private.txt"}`),
			tc("c4", "read", `{"path":"skill://pdf/../../private.txt"}`),
			tc("c5", "write", `{"path":"skill://pdf/new.md","content":"x"}`),
			tc("c6", "edit", `{"path":"skill://pdf/SKILL.md","old_text":"Body","new_text":"Changed"}`),
			tc("c7", "ls", `{"path":"skill://pdf"}`),
			tc("c8", "find", `{"path":"skill://pdf","pattern":"*.md"}`),
			tc("c9", "grep", `{"path":"skill://pdf","pattern":"fill"}`),
			tc("c10", "read", `{"path":"skill://nope/SKILL.md"}`),
			tc("c11", "read", `{"path":"skill://pdf/escape"}`),
			tc("c12", "read", `{"path":"skill://pdf/scripts/run.sh"}`)),
		text("done"))
	root := t.TempDir()
	writeRes(t, filepath.Join(root, "AGENTS.md"), "root rules\n")
	writeRes(t, filepath.Join(root, "private.txt"), "not a skill file\n")
	writeRes(t, filepath.Join(root, "skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: Fill PDF forms.\n---\n\nBody: see ref/forms.md\n")
	writeRes(t, filepath.Join(root, "skills/pdf/ref/forms.md"), "how to fill forms\n")
	writeRes(t, filepath.Join(root, "skills/pdf/scripts/run.sh"), "#!/bin/sh\ntouch \"$0.ran\"\n")
	if err := os.Chmod(filepath.Join(root, "skills/pdf/scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "private.txt"), filepath.Join(root, "skills/pdf/escape")); err != nil {
		t.Fatal(err)
	}
	writeRes(t, filepath.Join(f.home, ".octet/AGENTS.md"), "user rules\n")
	writeRes(t, filepath.Join(f.ws, "AGENTS.md"), "workspace rules\n")
	resourceAgent(t, f, []string{root}, nil, nil)

	req := f.req("fill the form")
	req.SystemPrompt = "request prompt"
	req.AllowFileMutation = true
	evs, res := f.run(req)
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	acc := find[protocol.Accepted](evs)[0]
	if !slices.Equal(acc.Skills, []string{"pdf"}) {
		t.Errorf("accepted.skills %v", acc.Skills)
	}
	fin := find[protocol.ToolFinish](evs)
	got := map[string]string{}
	out := map[string]string{}
	for _, fe := range fin {
		got[fe.CallID] = "ok"
		if !fe.OK {
			got[fe.CallID] = string(fe.Error.Code)
		}
		out[fe.CallID] = fe.Output
	}
	// c3 and c4 climb out of the skill folder to a sibling: refused.
	want := map[string]string{"c1": "ok", "c2": "ok", "c3": "path_outside_workspace", "c4": "path_outside_workspace", "c5": "protected_path",
		"c6": "protected_path", "c7": "ok", "c8": "ok", "c9": "ok", "c10": "not_found", "c11": "symlink_refused", "c12": "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool outcomes (-want +got):\n%s", diff)
	}
	if !strings.Contains(out["c1"], "Body: see ref/forms.md") || !strings.Contains(out["c2"], "how to fill forms") {
		t.Errorf("reads: %q %q", out["c1"], out["c2"])
	}
	if out["c7"] != "SKILL.md\nescape@\nref/\nscripts/" {
		t.Errorf("ls: %q", out["c7"])
	}
	if out["c8"] != "skill://pdf/SKILL.md\nskill://pdf/ref/forms.md" {
		t.Errorf("find: %q", out["c8"])
	}
	if !strings.Contains(out["c9"], "skill://pdf/ref/forms.md") {
		t.Errorf("grep: %q", out["c9"])
	}
	for _, p := range []string{"skills/pdf/new.md", "skills/pdf/scripts/run.sh.ran"} {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "skills/pdf/SKILL.md")); strings.Contains(string(b), "Changed") {
		t.Error("the skill was edited")
	}
	// Denied mutations are policy denials, never announced as allowed.
	for _, p := range find[protocol.ToolPolicy](evs) {
		if (p.CallID == "c5" || p.CallID == "c6") && (p.Decision.Allowed || p.Decision.DenialCode != "protected_path") {
			t.Errorf("tool_policy %s: %+v", p.CallID, p.Decision)
		}
	}

	sys := f.prov.requests()[0].System
	order := []string{defaultSystemPrompt, "# Project context: ~/.octet/AGENTS.md (user)\n\nuser rules",
		"# Project context: AGENTS.md at the workspace root\n\nworkspace rules",
		"# Project context: AGENTS.md of resource root 1\n\nroot rules", "# Skills",
		"- pdf: Fill PDF forms. (skill://pdf/SKILL.md)", "request prompt"}
	at := 0
	for _, s := range order {
		i := strings.Index(sys[at:], s)
		if i < 0 {
			t.Fatalf("system prompt lacks %q after byte %d:\n%s", s, at, sys)
		}
		at += i + len(s)
	}
	if strings.Contains(sys, root) || strings.Contains(sys, f.home) || strings.Contains(sys, f.ws) {
		t.Errorf("the system prompt names a host path:\n%s", sys)
	}
	// The same files give the same bytes on the next run.
	f.prov.turns = append(f.prov.turns, text("again"))
	req.RunID, req.SessionID = "run-2", ""
	f.run(req)
	if again := f.prov.requests()[2].System; again != sys {
		t.Errorf("the system prompt changed between runs:\n%s\n---\n%s", sys, again)
	}
}

func TestRunWorkspaceSkillsNeedTrust(t *testing.T) {
	f := newFixture(t, text("one"), text("two"))
	writeRes(t, filepath.Join(f.ws, ".octet/skills/local/SKILL.md"), "---\nname: local\ndescription: A workspace skill.\n---\n")
	evs, _ := f.run(f.req("hi"))
	if got := find[protocol.Accepted](evs)[0].Skills; len(got) != 0 || got == nil {
		t.Errorf("untrusted: skills %#v", got)
	}
	writeRes(t, filepath.Join(f.home, ".octet/settings.json"), `{"trusted_workspaces":["`+f.ws+`"]}`)
	req := f.req("hi")
	req.RunID = "run-2"
	evs, _ = f.run(req)
	if got := find[protocol.Accepted](evs)[0].Skills; !slices.Equal(got, []string{"local"}) {
		t.Errorf("trusted: skills %v", got)
	}
}

func TestRunResourceRootIsProtected(t *testing.T) {
	f := newFixture(t, calls(ToolCall{ID: "c1", Name: "write", Arguments: `{"path":"team/skills/x/SKILL.md","content":"x"}`}), text("done"))
	root := filepath.Join(f.ws, "team")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	resourceAgent(t, f, []string{root}, nil, nil)
	req := f.req("write")
	req.AllowFileMutation = true
	evs, _ := f.run(req)
	if fe := find[protocol.ToolFinish](evs)[0]; fe.OK || fe.Error.Code != "protected_path" {
		t.Errorf("write into a resource root: %+v", fe)
	}
}

func TestRunDocsSkill(t *testing.T) {
	f := newFixture(t,
		calls(ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"skill://octet-docs/SKILL.md"}`},
			ToolCall{ID: "c2", Name: "grep", Arguments: `{"path":"skill://octet-docs","pattern":"session_locked"}`},
			ToolCall{ID: "c3", Name: "read", Arguments: `{"path":"skill://octet-docs/ERRORS.md"}`}),
		text("done"))
	data := t.TempDir()
	docs := fstest.MapFS{
		"README.md":        {Data: []byte("# octet-host\n\n## Runs\n\ntext\n\n### Run error codes\n\n| code | meaning |\n|---|---|\n| `session_locked` | in use |\n\n## Later\n")},
		"spec/CONTRACT.md": {Data: []byte("# contract\n")},
	}
	resourceAgent(t, f, nil, docs, func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	})
	evs, res := f.run(f.req("what is octet?"))
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	if got := find[protocol.Accepted](evs)[0].Skills; !slices.Equal(got, []string{"octet-docs"}) {
		t.Errorf("skills %v", got)
	}
	fin := find[protocol.ToolFinish](evs)
	for _, fe := range fin {
		if !fe.OK {
			t.Fatalf("%s: %+v", fe.CallID, fe.Error)
		}
	}
	if !strings.Contains(fin[0].Output, "name: octet-docs") || !strings.Contains(fin[0].Output, "spec/CONTRACT.md") {
		t.Errorf("SKILL.md: %q", fin[0].Output)
	}
	if !strings.Contains(fin[1].Output, "skill://octet-docs/README.md") {
		t.Errorf("grep: %q", fin[1].Output)
	}
	if !strings.Contains(fin[2].Output, "### Run error codes") || strings.Contains(fin[2].Output, "## Runs") {
		t.Errorf("ERRORS.md: %q", fin[2].Output)
	}
	dir, err := f.agent.DocsDir()
	if err != nil || dir != filepath.Join(data, "octet", "docs") {
		t.Fatalf("DocsDir %q %v", dir, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "spec/CONTRACT.md")); err != nil || string(b) != "# contract\n" {
		t.Errorf("materialized contract %q %v", b, err)
	}
	// Removed while the host runs: written again on the next use.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if again, err := f.agent.DocsDir(); err != nil || again != dir {
		t.Fatalf("DocsDir after removal %q %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Errorf("not written again: %v", err)
	}
	// The generated SKILL.md is a valid skill by the layers' own rules.
	md, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	check := t.TempDir()
	writeRes(t, filepath.Join(check, "skills", DocsSkill, "SKILL.md"), string(md))
	set := resources.Resolve(resources.Options{Roots: []string{check}})
	defer set.Close()
	if ks := set.Skills(); len(ks) != 1 || ks[0].Description != docsSkillDescription || len(set.Diagnostics()) != 0 {
		t.Errorf("the docs SKILL.md parses as %+v, %+v", ks, set.Diagnostics())
	}
	if sys := f.prov.requests()[0].System; strings.Contains(sys, data) {
		t.Error("the system prompt names the data directory")
	}
}

func TestResourceRootOptions(t *testing.T) {
	if _, err := New(Options{Home: t.TempDir(), ResourceRoots: []string{"relative/dir"}}); err == nil || !strings.Contains(err.Error(), "ResourceRoots[0] must be absolute") {
		t.Errorf("relative root: %v", err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "OCTET_RESOURCE_ROOTS" {
				return v
			}
			return ""
		}
	}
	got, err := ResourceRootsFromEnv(env("/a/b::/c/"))
	if err != nil || !slices.Equal(got, []string{"/a/b", "/c"}) {
		t.Errorf("roots %v %v", got, err)
	}
	if _, err := ResourceRootsFromEnv(env("/a:rel")); err == nil {
		t.Error("a relative root in the environment was accepted")
	}
	if got, _ := ResourceRootsFromEnv(env("")); len(got) != 0 {
		t.Errorf("unset: %v", got)
	}
}

func TestRunDocsSkillUnwritable(t *testing.T) {
	f := newFixture(t, calls(ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"skill://octet-docs/SKILL.md"}`}), text("done"))
	blocked := filepath.Join(t.TempDir(), "file")
	writeRes(t, blocked, "a file where the data directory should be")
	resourceAgent(t, f, nil, fstest.MapFS{"README.md": {Data: []byte("x")}}, func(k string) string {
		if k == "XDG_DATA_HOME" {
			return blocked
		}
		return ""
	})
	evs, res := f.run(f.req("docs?"))
	fe := find[protocol.ToolFinish](evs)[0]
	if res.Status != "completed" || fe.OK || fe.Error.Code != "io_error" || strings.Contains(fe.Error.Message, blocked) {
		t.Errorf("result %s, tool_finish %+v", res.Status, fe.Error)
	}
}

// TestErrorTablesGatherEveryDocument: ERRORS.md takes the code tables of
// every Markdown document, in name order, and nothing else.
func TestErrorTablesGatherEveryDocument(t *testing.T) {
	files := map[string][]byte{
		"README.md":        []byte("# octet-host\n\n## Build\n\nmake\n"),
		"docs/protocol.md": []byte("# Protocol\n\n### Run error codes\n\n| `canceled` | stopped |\n\n## Events\n\nprose\n"),
		"docs/sessions.md": []byte("# Sessions\n\n### Store error codes\n\n| `session_locked` | in use |\n"),
		"spec/x.json":      []byte(`{"### not codes":1}`),
	}
	names := []string{"README.md", "docs/protocol.md", "docs/sessions.md", "spec/x.json"}
	got := string(errorTables(names, files))
	want := "# octet-host error codes\n\nThe code tables of the documentation.\n" +
		"\n### Run error codes\n\n| `canceled` | stopped |\n\n" +
		"\n### Store error codes\n\n| `session_locked` | in use |\n"
	if got != want {
		t.Errorf("ERRORS.md:\n%s\nwant:\n%s", got, want)
	}
	if errorTables([]string{"README.md"}, files) != nil {
		t.Error("a documentation without code tables got an ERRORS.md")
	}
}
