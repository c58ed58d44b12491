package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/confine"
)

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\nBody.\n"
}

// env is a home, a workspace and explicit roots on disk.
type env struct {
	home, ws string
	roots    []string
	wsRoot   *confine.Root
}

func newEnv(t *testing.T, nroots int) *env {
	t.Helper()
	e := &env{home: t.TempDir(), ws: t.TempDir()}
	for range nroots {
		e.roots = append(e.roots, t.TempDir())
	}
	r, err := confine.Open(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	e.wsRoot = r
	return e
}

func (e *env) resolve(t *testing.T, trust bool) *Set {
	t.Helper()
	s := Resolve(Options{Home: e.home, Workspace: e.wsRoot, TrustWorkspace: trust, Roots: e.roots})
	t.Cleanup(s.Close)
	return s
}

func names(skills []Skill) []string {
	var out []string
	for _, k := range skills {
		out = append(out, k.Name+"@"+k.Layer)
	}
	return out
}

func codes(ds []Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Layer+":"+d.Code+":"+d.Path)
	}
	return out
}

func TestLayerOrderAndOverride(t *testing.T) {
	e := newEnv(t, 2)
	write(t, filepath.Join(e.home, ".octet/skills/alpha/SKILL.md"), skillMD("alpha", "user alpha"))
	write(t, filepath.Join(e.home, ".octet/skills/beta/SKILL.md"), skillMD("beta", "user beta"))
	write(t, filepath.Join(e.ws, ".octet/skills/beta/SKILL.md"), skillMD("beta", "workspace beta"))
	write(t, filepath.Join(e.ws, ".octet/skills/gamma/SKILL.md"), skillMD("gamma", "workspace gamma"))
	write(t, filepath.Join(e.roots[0], "skills/gamma/SKILL.md"), skillMD("gamma", "root1 gamma"))
	write(t, filepath.Join(e.roots[1], "skills/gamma/SKILL.md"), skillMD("gamma", "root2 gamma"))
	write(t, filepath.Join(e.roots[1], "skills/delta/SKILL.md"), skillMD("delta", "root2 delta"))

	s := e.resolve(t, true)
	if got := []string{s.Layers[0].Name, s.Layers[1].Name, s.Layers[2].Name, s.Layers[3].Name}; !slices.Equal(got, []string{"user", "workspace", "root:1", "root:2"}) {
		t.Fatalf("layers %v", got)
	}
	skills := s.Skills()
	want := []string{"alpha@user", "beta@workspace", "delta@root:2", "gamma@root:2"}
	if diff := cmp.Diff(want, names(skills)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if skills[3].Description != "root2 gamma" {
		t.Errorf("gamma from %q", skills[3].Description)
	}
	wantDiags := []string{"user:shadowed:skills/beta", "root:1:shadowed:skills/gamma", "workspace:shadowed:skills/gamma"}
	if diff := cmp.Diff(wantDiags, codes(s.Diagnostics())); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	for _, d := range s.Diagnostics() {
		if strings.Contains(d.Message, e.home) || strings.Contains(d.Message, e.ws) || strings.Contains(d.Message, e.roots[0]) {
			t.Errorf("diagnostic names a host path: %q", d.Message)
		}
	}
}

func TestWorkspaceLayerNeedsTrust(t *testing.T) {
	e := newEnv(t, 0)
	write(t, filepath.Join(e.ws, ".octet/skills/ws-only/SKILL.md"), skillMD("ws-only", "from the workspace"))
	if got := names(e.resolve(t, false).Skills()); len(got) != 0 {
		t.Errorf("untrusted workspace offered %v", got)
	}
	if got := names(e.resolve(t, true).Skills()); !slices.Equal(got, []string{"ws-only@workspace"}) {
		t.Errorf("trusted workspace offered %v", got)
	}
}

func TestWorkspaceOctetLinkIsNotALayer(t *testing.T) {
	e := newEnv(t, 0)
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "skills/sneaky/SKILL.md"), skillMD("sneaky", "through a link"))
	if err := os.Symlink(elsewhere, filepath.Join(e.ws, ".octet")); err != nil {
		t.Fatal(err)
	}
	s := e.resolve(t, true)
	if got := s.Skills(); len(got) != 0 {
		t.Errorf("offered %v through a linked .octet", names(got))
	}
	if got := codes(s.Diagnostics()); !slices.Equal(got, []string{"workspace:symlink_skipped:"}) {
		t.Errorf("diagnostics %v", got)
	}
}

func TestSkillValidation(t *testing.T) {
	e := newEnv(t, 1)
	r := e.roots[0]
	write(t, filepath.Join(r, "skills/good/SKILL.md"), "---\nname: good\ndescription: |\n  Does good\n  things.\nlicense: MIT\nmetadata:\n  x: 1\n---\nbody\n")
	write(t, filepath.Join(r, "skills/no-front/SKILL.md"), "# no front matter\n")
	write(t, filepath.Join(r, "skills/unclosed/SKILL.md"), "---\nname: unclosed\ndescription: x\n")
	write(t, filepath.Join(r, "skills/bad-yaml/SKILL.md"), "---\nname: [bad-yaml\ndescription: x\n---\n")
	write(t, filepath.Join(r, "skills/mismatch/SKILL.md"), skillMD("other-name", "x"))
	write(t, filepath.Join(r, "skills/no-desc/SKILL.md"), "---\nname: no-desc\n---\n")
	write(t, filepath.Join(r, "skills/long-desc/SKILL.md"), skillMD("long-desc", strings.Repeat("é", 1025)))
	write(t, filepath.Join(r, "skills/ok-desc/SKILL.md"), skillMD("ok-desc", strings.Repeat("é", 1024)))
	write(t, filepath.Join(r, "skills/Upper/SKILL.md"), skillMD("Upper", "x"))
	write(t, filepath.Join(r, "skills/"+strings.Repeat("a", 65)+"/SKILL.md"), skillMD(strings.Repeat("a", 65), "x"))
	write(t, filepath.Join(r, "skills/num-name/SKILL.md"), "---\nname: 5\ndescription: x\n---\n")
	write(t, filepath.Join(r, "skills/big/SKILL.md"), skillMD("big", "x")+strings.Repeat("x", MaxSkillFileBytes))
	write(t, filepath.Join(r, "skills/latin1/SKILL.md"), "---\nname: latin1\ndescription: caf\xe9\n---\n")
	write(t, filepath.Join(r, "skills/no-skill-md/README.md"), "nothing\n")
	write(t, filepath.Join(r, "skills/stray-file.md"), "not a folder\n")
	// A link: the SKILL.md itself, and a whole skill folder.
	outside := t.TempDir()
	write(t, filepath.Join(outside, "SKILL.md"), skillMD("linked-file", "x"))
	os.MkdirAll(filepath.Join(r, "skills/linked-file"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "SKILL.md"), filepath.Join(r, "skills/linked-file/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "dir/SKILL.md"), skillMD("linked-dir", "x"))
	if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(r, "skills/linked-dir")); err != nil {
		t.Fatal(err)
	}

	s := e.resolve(t, false)
	skills := s.Skills()
	if diff := cmp.Diff([]string{"good@root:1", "ok-desc@root:1"}, names(skills)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if skills[0].Description != "Does good things." {
		t.Errorf("description %q", skills[0].Description)
	}
	got := map[string]string{}
	for _, d := range s.Diagnostics() {
		got[strings.TrimSuffix(strings.TrimPrefix(d.Path, "skills/"), "/SKILL.md")] = d.Code
		if d.Code != DiagSymlink && !strings.Contains(d.Message, "skill ") {
			t.Errorf("message does not name the skill: %q", d.Message)
		}
	}
	want := map[string]string{
		"no-front": DiagSkillInvalid, "unclosed": DiagSkillInvalid, "bad-yaml": DiagSkillInvalid, "mismatch": DiagSkillInvalid,
		"no-desc": DiagSkillInvalid, "long-desc": DiagSkillInvalid, "Upper": DiagSkillInvalid, strings.Repeat("a", 65): DiagSkillInvalid,
		"num-name": DiagSkillInvalid, "big": DiagTooLarge, "latin1": DiagInvalidUTF8, "no-skill-md": DiagSkillInvalid,
		"linked-file": DiagSymlink, "linked-dir": DiagSymlink,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

func TestSkillNameRules(t *testing.T) {
	for _, n := range []string{"a", "pdf-tools", "x1-2y", strings.Repeat("z", 64)} {
		if err := CheckName(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	for _, n := range []string{"", "-a", "a-", "a--b", "A", "a_b", "a.b", "é", strings.Repeat("z", 65), "a/b"} {
		if CheckName(n) == nil {
			t.Errorf("%q accepted", n)
		}
	}
}

func TestInvalidOverrideFallsBack(t *testing.T) {
	// A higher layer's broken skill does not hide a lower layer's valid one.
	e := newEnv(t, 1)
	write(t, filepath.Join(e.home, ".octet/skills/tool/SKILL.md"), skillMD("tool", "user tool"))
	write(t, filepath.Join(e.roots[0], "skills/tool/SKILL.md"), "---\nname: tool\n---\n")
	s := e.resolve(t, false)
	if got := names(s.Skills()); !slices.Equal(got, []string{"tool@user"}) {
		t.Errorf("skills %v", got)
	}
	if got := codes(s.Diagnostics()); !slices.Equal(got, []string{"root:1:skill_invalid:skills/tool/SKILL.md"}) {
		t.Errorf("diagnostics %v", got)
	}
}

func TestBuiltinIsLowest(t *testing.T) {
	e := newEnv(t, 0)
	b := Builtin("octet-docs", "built in", func() (*confine.Root, error) { return nil, os.ErrNotExist })
	if got := names(e.resolve(t, false).Skills(b)); !slices.Equal(got, []string{"octet-docs@builtin"}) {
		t.Errorf("skills %v", got)
	}
	write(t, filepath.Join(e.home, ".octet/skills/octet-docs/SKILL.md"), skillMD("octet-docs", "mine"))
	s := e.resolve(t, false)
	if got := names(s.Skills(b)); !slices.Equal(got, []string{"octet-docs@user"}) {
		t.Errorf("skills %v", got)
	}
	if got := codes(s.Diagnostics()); !slices.Equal(got, []string{"builtin:shadowed:"}) {
		t.Errorf("diagnostics %v", got)
	}
}

func TestContextFiles(t *testing.T) {
	e := newEnv(t, 1)
	write(t, filepath.Join(e.home, ".octet/AGENTS.md"), "user rules\n")
	write(t, filepath.Join(e.ws, "AGENTS.md"), "workspace rules\n")
	write(t, filepath.Join(e.ws, ".octet/AGENTS.md"), "not a context source\n")
	big := strings.Repeat("ab\n", MaxContextBytes/3) + "€€€€" + strings.Repeat("tail\n", 100)
	write(t, filepath.Join(e.roots[0], "AGENTS.md"), big)
	// The workspace's own AGENTS.md needs no trust.
	s := e.resolve(t, false)
	cs := s.Contexts(e.wsRoot)
	var got []string
	for _, c := range cs {
		got = append(got, c.Layer+"|"+c.Label)
	}
	want := []string{"user|~/.octet/AGENTS.md (user)", "workspace|AGENTS.md at the workspace root", "root:1|AGENTS.md of resource root 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("contexts (-want +got):\n%s", diff)
	}
	if cs[0].Text != "user rules\n" || cs[1].Text != "workspace rules\n" || cs[0].Truncated {
		t.Errorf("texts %q %q", cs[0].Text, cs[1].Text)
	}
	c := cs[2]
	if !c.Truncated || c.Size != int64(len(big)) {
		t.Fatalf("truncated=%v size=%d", c.Truncated, c.Size)
	}
	marker := fmt.Sprintf("[AGENTS.md truncated: the first %d of %d bytes are shown]", len(strings.Split(c.Text, "\n\n[AGENTS.md")[0])+1, len(big))
	if !strings.HasSuffix(c.Text, marker) {
		t.Errorf("no marker %q at the end: %q", marker, c.Text[len(c.Text)-120:])
	}
	if len(c.Text) > MaxContextBytes+200 || strings.Contains(c.Text, "tail") {
		t.Errorf("the cut text is %d bytes", len(c.Text))
	}
	if got := codes(s.Diagnostics()); !slices.Equal(got, []string{"root:1:context_truncated:AGENTS.md"}) {
		t.Errorf("diagnostics %v", got)
	}
}

func TestContextFileRefusals(t *testing.T) {
	e := newEnv(t, 2)
	outside := filepath.Join(t.TempDir(), "secret.md")
	write(t, outside, "secret\n")
	if err := os.Symlink(outside, filepath.Join(e.ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.roots[0], "AGENTS.md"), "bad \xff bytes\n")
	if err := os.Mkdir(filepath.Join(e.roots[1], "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := e.resolve(t, false)
	if cs := s.Contexts(e.wsRoot); len(cs) != 0 {
		t.Errorf("contexts %+v", cs)
	}
	want := []string{"workspace:symlink_skipped:AGENTS.md", "root:1:invalid_utf8:AGENTS.md", "root:2:not_regular:AGENTS.md"}
	if diff := cmp.Diff(want, codes(s.Diagnostics())); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

func TestMissingRootIsReported(t *testing.T) {
	e := newEnv(t, 0)
	e.roots = []string{filepath.Join(t.TempDir(), "absent")}
	s := e.resolve(t, false)
	if got := codes(s.Diagnostics()); !slices.Equal(got, []string{"root:1:root_missing:"}) {
		t.Errorf("diagnostics %v", got)
	}
	if len(s.Skills()) != 0 || len(s.Contexts(nil)) != 0 {
		t.Error("an absent root offered something")
	}
}

func TestPromptIsDeterministic(t *testing.T) {
	e := newEnv(t, 1)
	write(t, filepath.Join(e.ws, "AGENTS.md"), "rules\n")
	for _, n := range []string{"zeta", "alpha", "mid"} {
		write(t, filepath.Join(e.roots[0], "skills", n, "SKILL.md"), skillMD(n, "does "+n+"\n  across lines"))
	}
	var first string
	for i := range 5 {
		s := e.resolve(t, false)
		p := Prompt(s.Contexts(e.wsRoot), s.Skills())
		if i == 0 {
			first = p
			continue
		}
		if p != first {
			t.Fatalf("prompt differs:\n%s\n---\n%s", first, p)
		}
	}
	for _, want := range []string{"# Project context: AGENTS.md at the workspace root\n\nrules",
		"- alpha: does alpha across lines (skill://alpha/SKILL.md)\n- mid: does mid across lines (skill://mid/SKILL.md)\n- zeta:"} {
		if !strings.Contains(first, want) {
			t.Errorf("prompt lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, e.ws) || strings.Contains(first, e.roots[0]) {
		t.Error("the prompt names a host path")
	}
}

// TestTenThousandSkills: a root with 10,000 skills costs bounded time and
// prompt: at most MaxSkills are offered, the rest counted.
func TestTenThousandSkills(t *testing.T) {
	e := newEnv(t, 1)
	for i := range 10000 {
		n := fmt.Sprintf("skill-%05d", i)
		write(t, filepath.Join(e.roots[0], "skills", n, "SKILL.md"), skillMD(n, strings.Repeat("d", 200)))
	}
	start := time.Now()
	s := e.resolve(t, false)
	skills := s.Skills()
	p := Prompt(nil, skills)
	took := time.Since(start)
	if len(skills) != MaxSkills || skills[0].Name != "skill-00000" || skills[MaxSkills-1].Name != "skill-00199" {
		t.Fatalf("%d skills offered, first %s", len(skills), skills[0].Name)
	}
	if len(p) > MaxSkills*300 {
		t.Errorf("prompt is %d bytes", len(p))
	}
	ds := s.Diagnostics()
	if len(ds) != 1 || ds[0].Code != DiagSkillsTruncated || !strings.Contains(ds[0].Message, "9800 more skill folders") {
		t.Errorf("diagnostics %+v", ds)
	}
	if took > 2*time.Second {
		t.Errorf("resolving took %v", took)
	}
	t.Logf("10,000 skills: %v, prompt %d bytes", took, len(p))
}

// TestBrokenSkillsBoundWork: thousands of invalid skills are examined only
// up to the bound.
func TestBrokenSkillsBoundWork(t *testing.T) {
	e := newEnv(t, 1)
	for i := range 1000 {
		write(t, filepath.Join(e.roots[0], "skills", fmt.Sprintf("b-%04d", i), "SKILL.md"), "no front matter\n")
	}
	s := e.resolve(t, false)
	if got := s.Skills(); len(got) != 0 {
		t.Fatalf("offered %d", len(got))
	}
	ds := s.Diagnostics()
	if len(ds) != MaxDiagnostics+2 || ds[len(ds)-1].Code != DiagTruncated || ds[len(ds)-2].Code != DiagSkillsTruncated {
		t.Fatalf("%d diagnostics, last %+v", len(ds), ds[len(ds)-2:])
	}
	if !strings.Contains(ds[len(ds)-2].Message, "200 more skill folders") {
		t.Errorf("skills_truncated: %q", ds[len(ds)-2].Message)
	}
	if !strings.Contains(ds[len(ds)-1].Message, fmt.Sprint(maxExamined-MaxDiagnostics)+" more") {
		t.Errorf("last %q", ds[len(ds)-1].Message)
	}
}

func TestCatalogResolve(t *testing.T) {
	e := newEnv(t, 1)
	write(t, filepath.Join(e.roots[0], "skills/pdf/SKILL.md"), skillMD("pdf", "x"))
	write(t, filepath.Join(e.roots[0], "skills/pdf/ref/forms.md"), "forms\n")
	c := NewCatalog(e.resolve(t, false).Skills())
	r, rel, prefix, err := c.Resolve("skill://pdf/ref/forms.md")
	if err != nil || r == nil {
		t.Fatalf("resolve: %v", err)
	}
	defer r.Close()
	if rel != "ref/forms.md" || prefix != "skill://pdf/" {
		t.Errorf("rel %q prefix %q", rel, prefix)
	}
	if b, err := r.ReadFile(rel); err != nil || string(b) != "forms\n" {
		t.Errorf("read %q %v", b, err)
	}
	if _, err := r.ReadFile("../../AGENTS.md"); err == nil {
		t.Error("read above the skill folder")
	}
	if r, _, _, err := c.Resolve("notes/skill.md"); r != nil || err != nil {
		t.Errorf("a workspace path resolved: %v", err)
	}
	if _, _, _, err := c.Resolve("skill://nope/SKILL.md"); err != ErrNoSkill || !errorsIsNotFound(err) {
		t.Errorf("unknown skill: %v", err)
	}
}

func errorsIsNotFound(err error) bool {
	type iser interface{ Is(error) bool }
	i, ok := err.(iser)
	return ok && i.Is(confine.ErrNotFound)
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{"a b": "a b", " a b": "a b", "a  b": "a b", "a\nb": "a b", "a b ": "a b",
		"a\tb\r\n c\x00d": "a b c d", "": "", "   ": "", "é ü": "é ü", "a\u00a0b": "a b"} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
