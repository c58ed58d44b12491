package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readWS(t *testing.T, ws, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEdit(t *testing.T) {
	env, ws, tmp := newEnv(t, map[string]string{
		"a.go":                 "package a\n\nfunc f() int {\n\treturn 1\n}\n",
		"dup.txt":              "x\nx\nx\n",
		"crlf.txt":             "one\r\ntwo\r\nthree\r\n",
		"bin.dat":              "a\x00b",
		"dir/":                 "",
		"link_in":              "->a.go",
		"link_secret":          "->../outside/secret.txt",
		"link_outdir":          "->../outside/dir",
		".octet/settings.json": `{"tool_policy":{}}`,
	})
	if err := os.Chmod(filepath.Join(ws, "a.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, env, "edit", `{"path":"a.go","old_text":"return 1","new_text":"return 2\n\t// two"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "package a\n\nfunc f() int {\n\treturn 2\n\t// two\n}\n"; readWS(t, ws, "a.go") != want {
		t.Errorf("a.go = %q", readWS(t, ws, "a.go"))
	}
	if !slices.Equal(res.Changed, []string{"a.go"}) || res.Output != "edited a.go at line 4: replaced 1 line with 2 lines" {
		t.Errorf("result = %+v", res)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "a.go")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", fi.Mode())
	}
	res, err = call(t, env, "edit", `{"path":"crlf.txt","old_text":"one\ntwo","new_text":"1\n2"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := readWS(t, ws, "crlf.txt"); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	res, err = call(t, env, "edit", `{"path":"`+filepath.Join(ws, "dup.txt")+`","old_text":"x\nx\nx","new_text":"y"}`)
	if err != nil || !slices.Equal(res.Changed, []string{"dup.txt"}) {
		t.Fatalf("absolute path edit: %+v, %v", res, err)
	}
	os.WriteFile(filepath.Join(ws, "dup.txt"), []byte("x\nx\nx\n"), 0o644)

	runCases(t, env, []toolCase{
		{name: "not found", tool: "edit", args: `{"path":"a.go","old_text":"return 3","new_text":"x"}`, code: CodeNotFound, wantIn: []string{"old_text was not found in a.go"}},
		{name: "not unique", tool: "edit", args: `{"path":"dup.txt","old_text":"x","new_text":"y"}`, code: CodeNotUnique, wantIn: []string{"occurs 3 times in dup.txt"}},
		{name: "no change", tool: "edit", args: `{"path":"dup.txt","old_text":"x","new_text":"x"}`, code: CodeNoChange},
		{name: "empty old", tool: "edit", args: `{"path":"dup.txt","old_text":"","new_text":"x"}`, code: CodeInvalidArguments},
		{name: "missing new", tool: "edit", args: `{"path":"dup.txt","old_text":"x"}`, code: CodeInvalidArguments, wantIn: []string{`"new_text"`}},
		{name: "binary", tool: "edit", args: `{"path":"bin.dat","old_text":"a","new_text":"b"}`, code: CodeBinaryFile},
		{name: "directory", tool: "edit", args: `{"path":"dir","old_text":"a","new_text":"b"}`, code: CodeIsDirectory},
		{name: "missing file", tool: "edit", args: `{"path":"nope.txt","old_text":"a","new_text":"b"}`, code: CodeNotFound, wantIn: []string{"nope.txt"}},
		{name: "link inside", tool: "edit", args: `{"path":"link_in","old_text":"package","new_text":"b"}`, code: CodeSymlinkRefused},
		{name: "link outside", tool: "edit", args: `{"path":"link_secret","old_text":"TOP","new_text":"b"}`, code: CodeSymlinkRefused},
		{name: "through link dir", tool: "edit", args: `{"path":"link_outdir/inner.txt","old_text":"TOP","new_text":"b"}`, code: CodeSymlinkRefused},
		{name: "dotdot", tool: "edit", args: `{"path":"../outside/secret.txt","old_text":"TOP","new_text":"b"}`, code: CodePathOutsideWorkspace},
		{name: "absolute outside", tool: "edit", args: `{"path":"` + filepath.Join(tmp, "outside", "secret.txt") + `","old_text":"TOP","new_text":"b"}`, code: CodePathOutsideWorkspace},
		{name: "operator settings", tool: "edit", args: `{"path":".octet/settings.json","old_text":"{}","new_text":"{\"allow_shell\":true}"}`, code: CodeProtectedPath},
	})
	if got := readWS(t, ws, ".octet/settings.json"); got != `{"tool_policy":{}}` {
		t.Errorf("edit changed the operator settings: %q", got)
	}
	if got := readWS(t, ws, "dup.txt"); got != "x\nx\nx\n" {
		t.Errorf("a failed edit changed dup.txt: %q", got)
	}
	assertOutsideIntact(t, tmp)
}

func TestWrite(t *testing.T) {
	env, ws, tmp := newEnv(t, map[string]string{
		"old.txt":     "old",
		"dir/":        "",
		"link_in":     "->old.txt",
		"link_secret": "->../outside/secret.txt",
		"link_outdir": "->../outside/dir",
		"link_indir":  "->dir",
		"dangling":    "->created-by-link.txt",
	})
	if err := os.Chmod(filepath.Join(ws, "old.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, env, "write", `{"path":"new/deep/file.txt","content":"héllo\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "created new/deep/file.txt (7 bytes)" || !slices.Equal(res.Changed, []string{"new/deep/file.txt"}) {
		t.Errorf("result = %+v", res)
	}
	if got := readWS(t, ws, "new/deep/file.txt"); got != "héllo\n" {
		t.Errorf("content = %q", got)
	}
	res, err = call(t, env, "write", `{"path":"./old.txt","content":""}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "replaced old.txt (0 bytes)" || !slices.Equal(res.Changed, []string{"old.txt"}) {
		t.Errorf("result = %+v", res)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "old.txt")); fi.Mode().Perm() != 0o640 || fi.Size() != 0 {
		t.Errorf("old.txt = %v %d", fi.Mode(), fi.Size())
	}
	runCases(t, env, []toolCase{
		{name: "root", tool: "write", args: `{"path":".","content":"x"}`, code: CodeIsDirectory},
		{name: "directory", tool: "write", args: `{"path":"dir","content":"x"}`, code: CodeIsDirectory},
		{name: "parent is file", tool: "write", args: `{"path":"old.txt/x","content":"x"}`, code: CodeNotDirectory},
		{name: "link inside", tool: "write", args: `{"path":"link_in","content":"x"}`, code: CodeSymlinkRefused},
		{name: "link outside", tool: "write", args: `{"path":"link_secret","content":"x"}`, code: CodeSymlinkRefused},
		{name: "dangling link", tool: "write", args: `{"path":"dangling","content":"x"}`, code: CodeSymlinkRefused},
		{name: "through outside dir", tool: "write", args: `{"path":"link_outdir/new.txt","content":"x"}`, code: CodeSymlinkRefused},
		{name: "through outside dir deep", tool: "write", args: `{"path":"link_outdir/a/b/new.txt","content":"x"}`, code: CodeSymlinkRefused},
		{name: "through inside dir", tool: "write", args: `{"path":"link_indir/new.txt","content":"x"}`, code: CodeSymlinkRefused},
		{name: "dotdot", tool: "write", args: `{"path":"../x","content":"x"}`, code: CodePathOutsideWorkspace},
		{name: "dotdot deep", tool: "write", args: `{"path":"new/../../outside/secret.txt","content":"x"}`, code: CodePathOutsideWorkspace},
		{name: "absolute outside", tool: "write", args: `{"path":"` + filepath.Join(tmp, "x") + `","content":"x"}`, code: CodePathOutsideWorkspace},
		{name: "missing content", tool: "write", args: `{"path":"x"}`, code: CodeInvalidArguments},
		{name: "operator settings", tool: "write", args: `{"path":".octet/settings.json","content":"{}"}`, code: CodeProtectedPath},
		{name: "operator dir itself", tool: "write", args: `{"path":".octet","content":"x"}`, code: CodeProtectedPath},
		{name: "operator dir by a detour", tool: "write", args: `{"path":"new/../.octet/x.json","content":"x"}`, code: CodeProtectedPath},
		{name: "operator dir absolute", tool: "write", args: `{"path":"` + filepath.Join(ws, ".octet", "settings.json") + `","content":"x"}`, code: CodeProtectedPath},
		{name: "operator dir other case", tool: "write", args: `{"path":".Octet/settings.json","content":"x"}`, code: CodeProtectedPath},
	})
	if _, err := os.Lstat(filepath.Join(ws, ".octet")); !os.IsNotExist(err) {
		t.Errorf("write created the workspace's .octet directory")
	}
	if _, err := call(t, env, "write", `{"path":"docs/.octet/notes.txt","content":"x"}`); err != nil {
		t.Errorf("a nested .octet directory is an ordinary one: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(tmp, "x")); !os.IsNotExist(err) {
		t.Errorf("../x was created")
	}
	if _, err := os.Lstat(filepath.Join(ws, "created-by-link.txt")); !os.IsNotExist(err) {
		t.Errorf("the dangling link's target was created")
	}
	if _, err := os.Lstat(filepath.Join(ws, "dir", "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a write went through link_indir")
	}
	assertOutsideIntact(t, tmp)
}

// assertOutsideIntact checks that the outside directory holds exactly what
// newEnv put there.
func assertOutsideIntact(t *testing.T, tmp string) {
	t.Helper()
	var got []string
	filepath.WalkDir(filepath.Join(tmp, "outside"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(tmp, p)
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel += "=" + string(b)
		}
		got = append(got, rel)
		return nil
	})
	want := []string{"outside", "outside/dir", "outside/dir/inner.txt=" + secret + " inner", "outside/dir/x.go=package x // " + secret, "outside/secret.txt=" + secret}
	if !slices.Equal(got, want) {
		t.Errorf("outside changed:\n%s", strings.Join(got, "\n"))
	}
}

// TestNothingOutside runs every tool over a workspace full of ways out and
// checks (in call) that the secret never appears, then that nothing
// outside changed.
func TestNothingOutside(t *testing.T) {
	files := map[string]string{}
	for k, v := range searchTree {
		files[k] = v
	}
	files["src/link_up"] = "->.."
	files["src/link_abs"] = "->/"
	env, _, tmp := newEnv(t, files)
	outside := filepath.Join(tmp, "outside")
	paths := []string{"", ".", "..", "../outside", "../outside/secret.txt", outside, outside + "/secret.txt",
		"link_secret", "link_outdir", "link_outdir/inner.txt", "link_outdir/x.go", "src/link_up", "src/link_up/link_secret",
		"src/link_abs", "src/link_abs" + outside, "src/../../outside", "/", "/etc", "src/./../..", "src/link_up/../outside"}
	for _, p := range paths {
		q := quote(p)
		for _, args := range []struct{ tool, args string }{
			{"read", `{"path":` + q + `}`},
			{"ls", `{"path":` + q + `}`},
			{"grep", `{"pattern":"TOP|package","path":` + q + `}`},
			{"grep", `{"pattern":"TOPSECRET","literal":true,"path":` + q + `,"context":5}`},
			{"find", `{"pattern":"**","path":` + q + `}`},
			{"find", `{"pattern":"*.go","path":` + q + `}`},
			{"edit", `{"path":` + q + `,"old_text":"TOPSECRET","new_text":"x"}`},
			{"write", `{"path":` + q + `,"content":"x"}`},
			{"write", `{"path":` + quote(p+"/new.txt") + `,"content":"x"}`},
		} {
			res, err := call(t, env, args.tool, args.args)
			if args.tool == "write" && err == nil {
				// Only paths inside the workspace may be written.
				for _, c := range res.Changed {
					if strings.HasPrefix(c, "..") || strings.HasPrefix(c, "/") {
						t.Errorf("write changed %q", c)
					}
				}
			}
		}
	}
	assertOutsideIntact(t, tmp)
}
