package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// Resource layers through the binary (CONTRACT §18): explicit
// roots from --resource-root and OCTET_RESOURCE_ROOTS, AGENTS.md in the
// system prompt, a skill the model reads through skill://, its sibling
// and writes refused, a script never run, the built-in octet-docs skill,
// --docs, and resource_roots refused as a run field.

// resourceHost is a host started with args and env against a fake provider
// scripted with calls, then "done".
func resourceHost(t *testing.T, env []string, calls []fakeprovider.ToolCall, args ...string) (*proc, *fakeprovider.Server, string) {
	t.Helper()
	turns := []fakeprovider.Turn{{Text: "done"}}
	if len(calls) > 0 {
		turns = append([]fakeprovider.Turn{{ToolCalls: calls}}, turns...)
	}
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	return startEnv(t, env, hostBin, args...), fake, t.TempDir()
}

func resourceRunLine(id, ws string, fake *fakeprovider.Server, extra string) string {
	return fmt.Sprintf(`{"protocol_version":1,"request_id":%q,"command":"run","run_id":%q,"workspace":%q,"model":"m","prompt":"go","provider":"fake","base_url":%q,"allow_file_mutation":true%s}`,
		id, id, ws, fake.BaseURL(fakeprovider.ModeChat), extra)
}

func readEvents(t *testing.T, p *proc) []event {
	t.Helper()
	var evs []event
	for {
		ev := p.next(t)
		evs = append(evs, ev)
		if ev.Type == "final_result" || ev.Type == "protocol_error" {
			return evs
		}
	}
}

// systemPrompt is the system message of the fake's first chat request.
func systemPrompt(t *testing.T, fake *fakeprovider.Server) string {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("no provider request")
	}
	msgs, _ := reqs[0].Body["messages"].([]any)
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "system" {
			s, _ := mm["content"].(string)
			return s
		}
	}
	t.Fatalf("no system message in %v", reqs[0].Body)
	return ""
}

func TestResourcesThroughTheBinary(t *testing.T) {
	flagRoot, envRoot, home, data := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeLayerFile(t, filepath.Join(home, ".octet/skills/shared/SKILL.md"), "---\nname: shared\ndescription: The user's version.\n---\n")
	writeLayerFile(t, filepath.Join(envRoot, "skills/shared/SKILL.md"), "---\nname: shared\ndescription: The env root's version.\n---\n")
	writeLayerFile(t, filepath.Join(envRoot, "AGENTS.md"), "env root rules\n")
	writeLayerFile(t, filepath.Join(flagRoot, "AGENTS.md"), "flag root rules\n")
	writeLayerFile(t, filepath.Join(flagRoot, "sibling.txt"), "outside the skill folder\n")
	writeLayerFile(t, filepath.Join(flagRoot, "skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: Fill PDF forms.\n---\n\nRun scripts/fill.sh? No: read ref.md.\n")
	writeLayerFile(t, filepath.Join(flagRoot, "skills/pdf/ref.md"), "the reference\n")
	marker := filepath.Join(t.TempDir(), "script-ran")
	writeLayerFile(t, filepath.Join(flagRoot, "skills/pdf/scripts/fill.sh"), "#!/bin/sh\ntouch "+marker+"\n")
	os.Chmod(filepath.Join(flagRoot, "skills/pdf/scripts/fill.sh"), 0o755)
	writeLayerFile(t, filepath.Join(flagRoot, "skills/Bad_Name/SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n")

	call := func(id, name, args string) fakeprovider.ToolCall {
		return fakeprovider.ToolCall{ID: id, Name: name, Arguments: args}
	}
	p, fake, ws := resourceHost(t, []string{"HOME=" + home, "XDG_DATA_HOME=" + data, "OCTET_RESOURCE_ROOTS=" + envRoot},
		[]fakeprovider.ToolCall{
			call("c1", "read", `{"path":"skill://pdf/SKILL.md"}`),
			call("c2", "read", `{"path":"skill://pdf/ref.md"}`),
			call("c3", "read", `{"path":"skill://pdf/../../sibling.txt"}`),
			call("c4", "write", `{"path":"skill://pdf/new.md","content":"x"}`),
			call("c5", "read", `{"path":"skill://pdf/scripts/fill.sh"}`),
			call("c6", "read", `{"path":"skill://octet-docs/SKILL.md"}`),
			call("c7", "bash", `{"command":"sh skills/pdf/scripts/fill.sh"}`),
			call("c8", "read", `{"path":"skill://pdf/linked.txt"}`),
		}, "--resource-root", flagRoot)
	if err := os.Symlink(filepath.Join(flagRoot, "sibling.txt"), filepath.Join(flagRoot, "skills/pdf/linked.txt")); err != nil {
		t.Fatal(err)
	}
	writeLayerFile(t, filepath.Join(ws, "AGENTS.md"), "workspace rules\n"+strings.Repeat("more workspace rules\n", 2000))
	p.send(t, resourceRunLine("r1", ws, fake, ""))
	evs := readEvents(t, p)
	acc := dataOf(t, evs, "accepted")
	if len(acc) != 1 {
		t.Fatalf("events %v", evs)
	}
	var skills []string
	for _, s := range acc[0]["skills"].([]any) {
		skills = append(skills, s.(string))
	}
	if want := []string{"octet-docs", "pdf", "shared"}; !slices.Equal(skills, want) {
		t.Errorf("accepted.skills %v, want %v", skills, want)
	}
	got := map[string]string{}
	out := map[string]string{}
	for _, f := range dataOf(t, evs, "tool_finish") {
		id := f["call_id"].(string)
		got[id] = "ok"
		if f["ok"] != true {
			got[id] = f["error"].(map[string]any)["code"].(string)
		}
		out[id], _ = f["output"].(string)
	}
	want := map[string]string{"c1": "ok", "c2": "ok", "c3": "path_outside_workspace", "c4": "protected_path", "c5": "ok", "c6": "ok", "c7": "process_not_enabled", "c8": "symlink_refused"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tool outcomes %v, want %v", got, want)
	}
	if !strings.Contains(out["c2"], "the reference") || !strings.Contains(out["c6"], "name: octet-docs") {
		t.Errorf("outputs: %q / %q", out["c2"], out["c6"])
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Error("a skill's script ran")
	}
	if _, err := os.Stat(filepath.Join(flagRoot, "skills/pdf/new.md")); !os.IsNotExist(err) {
		t.Error("a write reached the skill folder")
	}
	sys := systemPrompt(t, fake)
	at := 0
	for _, s := range []string{"workspace rules", "\n\n[AGENTS.md truncated: the first 32768 of 42016 bytes are shown]",
		"# Project context: AGENTS.md of resource root 1\n\nenv root rules",
		"# Project context: AGENTS.md of resource root 2\n\nflag root rules", "- octet-docs: ", "- pdf: Fill PDF forms. (skill://pdf/SKILL.md)",
		"- shared: The env root's version. (skill://shared/SKILL.md)"} {
		i := strings.Index(sys[at:], s)
		if i < 0 {
			t.Fatalf("system prompt lacks %q after byte %d:\n%s", s, at, sys)
		}
		at += i + len(s)
	}
	for _, host := range []string{flagRoot, envRoot, home, data, ws} {
		if strings.Contains(sys, host) {
			t.Errorf("the system prompt names %s", host)
		}
	}
	// The findings are logged, without host paths.
	logs := p.stderr.String()
	for _, w := range []string{"skill_invalid", "shadowed", "context_truncated"} {
		if !strings.Contains(logs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, logs)
		}
	}
	// The docs were materialized in their folder under XDG_DATA_HOME.
	if _, err := os.Stat(filepath.Join(data, "octet/docs/README.md")); err != nil {
		t.Errorf("materialized README: %v", err)
	}
}

func TestResourceRootsRunFieldIsUnknown(t *testing.T) {
	p, fake, ws := resourceHost(t, nil, nil)
	p.send(t, resourceRunLine("r1", ws, fake, `,"resource_roots":["/tmp"]`))
	ev := p.next(t)
	var d struct{ Code, Message string }
	json.Unmarshal(ev.Data, &d)
	if ev.Type != "protocol_error" || d.Code != "unknown_field" || !strings.Contains(d.Message, "resource_roots") {
		t.Fatalf("%s %+v", ev.Type, d)
	}
}

func TestBadResourceRootFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--resource-root", "relative"}, "", "must be an absolute directory"},
		{nil, "/ok:relative", "OCTET_RESOURCE_ROOTS: relative is not an absolute path"},
	} {
		cmd := exec.Command(hostBin, tc.args...)
		cmd.Env = append(os.Environ(), "OCTET_RESOURCE_ROOTS="+tc.env)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v %q: %v %s", tc.args, tc.env, err, out)
		}
	}
}

func TestHelloSkillsWithoutScanning(t *testing.T) {
	// A root that does not exist: hello never looks at it.
	p := startEnv(t, nil, hostBin, "--resource-root", filepath.Join(t.TempDir(), "absent"))
	p.send(t, `{"protocol_version":1,"request_id":"h","command":"hello"}`)
	ev := p.next(t)
	var h struct{ Features map[string]bool }
	json.Unmarshal(ev.Data, &h)
	if ev.Type != "hello" || !h.Features["skills"] {
		t.Fatalf("%s %s", ev.Type, ev.Data)
	}
	if strings.Contains(p.stderr.String(), "root_missing") {
		t.Error("hello scanned the resource layers")
	}
}

// TestDocsFlag: --docs materializes once, prints the folder; two hosts at
// once agree; a stale tree (other content) is replaced.
func TestDocsFlag(t *testing.T) {
	data := t.TempDir()
	docs := func() (string, error) {
		cmd := exec.Command(hostBin, "--docs")
		cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data, "HOME="+t.TempDir())
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	var wg sync.WaitGroup
	dirs := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { dirs[i], errs[i] = docs() })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || dirs[0] != dirs[1] || dirs[0] != filepath.Join(data, "octet", "docs") {
		t.Fatalf("dirs %v errs %v", dirs, errs)
	}
	dir := dirs[0]
	for _, f := range []string{"README.md", "docs/protocol.md", "docs/operations.md", "spec/CONTRACT.md", "spec/schema/protocol-1.schema.json", "ERRORS.md", "SKILL.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if want, _ := os.ReadFile("../../README.md"); string(readme) != string(want) {
		t.Error("the materialized README differs from the repository's")
	}
	// The topic documents are carried too, and ERRORS.md gathers the code
	// tables they hold (docs/protocol.md).
	topic, _ := os.ReadFile(filepath.Join(dir, "docs", "protocol.md"))
	if want, _ := os.ReadFile("../../docs/protocol.md"); len(want) == 0 || string(topic) != string(want) {
		t.Error("the materialized docs/protocol.md differs from the repository's")
	}
	errorsDoc, _ := os.ReadFile(filepath.Join(dir, "ERRORS.md"))
	for _, h := range []string{"### Protocol error codes", "### Run error codes", "### Tool error codes"} {
		if !strings.Contains(string(errorsDoc), h) {
			t.Errorf("ERRORS.md lacks %q", h)
		}
	}
	// A stale tree (other content) is refreshed.
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("stale"), 0o644)
	os.WriteFile(filepath.Join(dir, ".octet-docs-stamp"), []byte("old"), 0o644)
	if again, err := docs(); err != nil || again != dir {
		t.Fatalf("again: %q %v", again, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != string(readme) {
		t.Error("the stale README was not refreshed")
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("%d entries beside the docs (a temporary left behind?)", len(ents))
	}
}

// skillsOffered is accepted.skills of a run's events.
func skillsOffered(t *testing.T, evs []event) []string {
	t.Helper()
	acc := dataOf(t, evs, "accepted")
	if len(acc) != 1 {
		t.Fatalf("events %v", evs)
	}
	var out []string
	for _, s := range acc[0]["skills"].([]any) {
		out = append(out, s.(string))
	}
	return out
}

func TestWorkspaceLayerTrustThroughTheBinary(t *testing.T) {
	for _, trust := range []bool{false, true} {
		var args []string
		if trust {
			args = append(args, "--trust-workspace")
		}
		p, fake, ws := resourceHost(t, nil, nil, args...)
		writeLayerFile(t, filepath.Join(ws, ".octet/skills/ws-skill/SKILL.md"), "---\nname: ws-skill\ndescription: From the workspace.\n---\n")
		p.send(t, resourceRunLine("r1", ws, fake, ""))
		got := skillsOffered(t, readEvents(t, p))
		if want := slices.Contains(got, "ws-skill"); want != trust {
			t.Errorf("trust=%v: skills %v", trust, got)
		}
	}
}

// TestTenThousandSkillFoldersThroughTheBinary: a root of 10,000 skill
// folders starts a run in bounded time with a bounded list.
func TestTenThousandSkillFoldersThroughTheBinary(t *testing.T) {
	root := t.TempDir()
	for i := range 10000 {
		dir := filepath.Join(root, "skills", fmt.Sprintf("skill-%05d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if i < 300 {
			n := filepath.Base(dir)
			writeLayerFile(t, filepath.Join(dir, "SKILL.md"), "---\nname: "+n+"\ndescription: "+strings.Repeat("Does things. ", 20)+"\n---\n")
		}
	}
	p, fake, ws := resourceHost(t, nil, nil, "--resource-root", root)
	start := time.Now()
	p.send(t, resourceRunLine("r1", ws, fake, ""))
	evs := readEvents(t, p)
	took := time.Since(start)
	got := skillsOffered(t, evs)
	if len(got) != 200 || got[0] != "octet-docs" || got[199] != "skill-00198" {
		t.Fatalf("%d skills offered: %v…", len(got), got[:min(3, len(got))])
	}
	if sys := systemPrompt(t, fake); len(sys) > 100_000 {
		t.Errorf("the system prompt is %d bytes", len(sys))
	}
	if !strings.Contains(p.stderr.String(), "9801 more skill folders were not offered") {
		t.Errorf("no skills_truncated warning:\n%s", p.stderr.String())
	}
	if took > 5*time.Second {
		t.Errorf("the run took %v", took)
	}
	t.Logf("run with 10,000 skill folders: %v", took)
}
