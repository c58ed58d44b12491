package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"

	"github.com/google/go-cmp/cmp"
)

// TestWorkspaceGatesAreDenials replays a turn of calls whose paths leave
// the workspace ("..", an absolute path outside), go through a link
// (pointing out, and pointing in: links are refused either way) or aim at
// the protected .octet directory, from every path-taking tool. Each one is
// a policy denial: tool_start, then tool_policy denied with the stable
// denial_code and no authorization, then tool_finish ok false with the
// same code. No allowed decision is ever announced for them, nothing
// outside is read, and nothing is written.
func TestWorkspaceGatesAreDenials(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	type c = ToolCall
	f := newFixture(t,
		calls(
			c{ID: "ok", Name: "read", Arguments: `{"path":"notes.txt"}`},
			c{ID: "dotdot", Name: "read", Arguments: `{"path":"../../etc/passwd"}`},
			c{ID: "abs", Name: "read", Arguments: `{"path":"` + secret + `"}`},
			c{ID: "link-out", Name: "read", Arguments: `{"path":"out/secret.txt"}`},
			c{ID: "link-in", Name: "read", Arguments: `{"path":"alias.txt"}`},
			c{ID: "ls-link", Name: "ls", Arguments: `{"path":"out"}`},
			c{ID: "grep-up", Name: "grep", Arguments: `{"pattern":"SECRET","path":".."}`},
			c{ID: "find-abs", Name: "find", Arguments: `{"pattern":"*","path":"` + outside + `"}`},
			c{ID: "write-settings", Name: "write", Arguments: `{"path":".octet/settings.json","content":"{\"tool_policy\":{\"allow_shell\":true}}"}`},
			c{ID: "edit-settings", Name: "edit", Arguments: `{"path":".octet/settings.json","old_text":"{}","new_text":"{\"allow_shell\":true}"}`},
			c{ID: "write-link", Name: "write", Arguments: `{"path":"out/new.txt","content":"x"}`},
			c{ID: "edit-up", Name: "edit", Arguments: `{"path":"../../etc/passwd","old_text":"root","new_text":"toor"}`},
		),
		text("done"))
	files := map[string]string{"notes.txt": "alpha\n", ".octet/settings.json": `{"tool_policy":{}}`}
	for p, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(f.ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(f.ws, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(f.ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(f.ws, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	req := f.req("try every way out")
	req.AllowFileMutation = true // so that no mutation is denied for lack of authorization
	evs, res := f.run(req)
	if res.Status != "completed" || res.ToolCalls != 12 || len(res.FilesChanged) != 0 {
		t.Fatalf("result %+v", res)
	}

	// The transcript of the tool events, one line per event.
	var got []string
	for _, ev := range evs {
		switch d := ev.Data.(type) {
		case *protocol.ToolStart:
			got = append(got, "tool_start "+d.CallID)
		case *protocol.ToolPolicy:
			if d.Decision.Allowed {
				got = append(got, "tool_policy "+d.CallID+" allowed "+d.Decision.Authorization)
			} else {
				got = append(got, "tool_policy "+d.CallID+" denied "+string(d.Decision.DenialCode))
			}
		case *protocol.ToolFinish:
			if d.OK {
				got = append(got, "tool_finish "+d.CallID+" ok")
			} else {
				got = append(got, "tool_finish "+d.CallID+" error "+string(d.Error.Code))
			}
		}
	}
	denied := func(id, code string) []string {
		return []string{"tool_start " + id, "tool_policy " + id + " denied " + code, "tool_finish " + id + " error " + code}
	}
	want := []string{"tool_start ok", "tool_policy ok allowed controlled_read", "tool_finish ok ok"}
	for _, d := range [][2]string{
		{"dotdot", "path_outside_workspace"},
		{"abs", "path_outside_workspace"},
		{"link-out", "symlink_refused"},
		{"link-in", "symlink_refused"},
		{"ls-link", "symlink_refused"},
		{"grep-up", "path_outside_workspace"},
		{"find-abs", "path_outside_workspace"},
		{"write-settings", "protected_path"},
		{"edit-settings", "protected_path"},
		{"write-link", "symlink_refused"},
		{"edit-up", "path_outside_workspace"},
	} {
		want = append(want, denied(d[0], d[1])...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tool events (-want +got):\n%s", diff)
	}

	for _, p := range find[protocol.ToolPolicy](evs) {
		dec := p.Decision
		wantEffect := "workspace_read"
		if p.Tool == "edit" || p.Tool == "write" {
			wantEffect = "workspace_mutation"
		}
		if string(dec.Effect) != wantEffect || dec.Policy.EffectPolicy.Value != "controlled" || dec.Policy.WorkspaceConfinement.Value != true {
			t.Errorf("%s: decision %+v", p.CallID, dec)
		}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !dec.Allowed && (strings.Contains(string(raw), `"authorization"`) || !strings.Contains(string(raw), `"denial_code":"`+string(dec.DenialCode)+`"`)) {
			t.Errorf("denied tool_policy JSON: %s", raw)
		}
		for _, leak := range []string{f.ws, outside, "passwd", "settings.json"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("tool_policy carries %q: %s", leak, raw)
			}
		}
	}
	for _, fin := range find[protocol.ToolFinish](evs) {
		if strings.Contains(fin.Output, "TOP-SECRET") || (fin.Error != nil && strings.Contains(fin.Error.Message, outside)) {
			t.Errorf("%s leaks: %+v", fin.CallID, fin)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(f.ws, ".octet", "settings.json")); string(data) != `{"tool_policy":{}}` {
		t.Errorf("the operator settings changed: %s", data)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("the outside directory changed: %v", ents)
	}
	// The model got each denial as a tool error naming the code.
	for _, m := range f.prov.requests()[1].Messages {
		if m.Role == "tool" && m.ToolCallID != "ok" && (!m.IsError || !strings.HasPrefix(m.Text, "error ")) {
			t.Errorf("result for %s: %+v", m.ToolCallID, m)
		}
	}
}
