package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"
)

// TestGate: every path-taking tool refuses, before it runs, a path that
// leaves the workspace, one through a link (pointing out or in), and, for
// edit and write, the workspace's .octet directory. Anything else is the
// operation's to report.
func TestGate(t *testing.T) {
	env, ws, tmp := newEnv(t, map[string]string{
		"a.txt":                "alpha\n",
		"dir/b.txt":            "beta\n",
		"link_out":             "->../outside/secret.txt",
		"link_outdir":          "->../outside/dir",
		"link_in":              "->a.txt",
		"link_indir":           "->dir",
		".octet/settings.json": "{}",
	})
	outside := filepath.Join(tmp, "outside", "secret.txt")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	// args builds the arguments of tool for path p.
	args := func(tool, p string) string {
		switch tool {
		case "grep", "find":
			return `{"pattern":"x","path":` + q(p) + `}`
		case "edit":
			return `{"path":` + q(p) + `,"old_text":"a","new_text":"b"}`
		case "write":
			return `{"path":` + q(p) + `,"content":"x"}`
		}
		return `{"path":` + q(p) + `}`
	}
	for _, tool := range []string{"read", "ls", "grep", "find", "edit", "write"} {
		mutation := tool == "edit" || tool == "write"
		cases := []struct {
			path string
			code protocol.Code
		}{
			{"../outside/secret.txt", CodePathOutsideWorkspace},
			{"dir/../../outside", CodePathOutsideWorkspace},
			{outside, CodePathOutsideWorkspace},
			{"/etc/passwd", CodePathOutsideWorkspace},
			{"link_out", CodeSymlinkRefused},
			{"link_outdir/inner.txt", CodeSymlinkRefused},
			{"link_in", CodeSymlinkRefused},
			{"link_indir/b.txt", CodeSymlinkRefused},
			{"a.txt", ""},
			{filepath.Join(ws, "dir", "b.txt"), ""},
			{"missing/new.txt", ""},
			{"a\x00b", CodeInvalidArguments},
		}
		var protected protocol.Code
		if mutation {
			protected = CodeProtectedPath
		}
		cases = append(cases,
			struct {
				path string
				code protocol.Code
			}{".octet/settings.json", protected},
			struct {
				path string
				code protocol.Code
			}{"dir/../.OCTET/new.json", protected})
		for _, c := range cases {
			err := Gate(env, tool, []byte(args(tool, c.path)))
			if got := codeOf(err); got != c.code {
				t.Errorf("Gate %s %q = %v, want code %q", tool, c.path, err, c.code)
			}
		}
		// An absent path is the workspace root, which passes.
		if tool == "ls" || tool == "grep" || tool == "find" {
			a := `{}`
			if tool != "ls" {
				a = `{"pattern":"x"}`
			}
			if err := Gate(env, tool, []byte(a)); err != nil {
				t.Errorf("Gate %s without path: %v", tool, err)
			}
		}
	}
	if err := Gate(env, "read", []byte(`{"file":"a.txt"}`)); codeOf(err) != CodeInvalidArguments {
		t.Errorf("Gate with an unknown argument: %v", err)
	}
	if err := Gate(env, "nope", []byte(`{}`)); codeOf(err) != CodeUnknownTool {
		t.Errorf("Gate of an unknown tool: %v", err)
	}
	if err := Gate(Env{}, "read", []byte(`{"path":"a.txt"}`)); codeOf(err) != CodeIOError {
		t.Errorf("Gate without a workspace: %v", err)
	}
}

// TestGateThenRace: Gate is a pre-check; a link swapped in after it passed
// is refused by Run itself with the gate's code, and nothing outside is
// touched.
func TestGateThenRace(t *testing.T) {
	env, ws, tmp := newEnv(t, map[string]string{"dir/b.txt": "beta\n"})
	for _, c := range []struct{ tool, args string }{
		{"read", `{"path":"dir/b.txt"}`},
		{"write", `{"path":"dir/new.txt","content":"x"}`},
	} {
		if err := Gate(env, c.tool, []byte(c.args)); err != nil {
			t.Fatalf("Gate %s: %v", c.tool, err)
		}
	}
	if err := os.Rename(filepath.Join(ws, "dir"), filepath.Join(ws, "dir.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tmp, "outside"), filepath.Join(ws, "dir")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args string }{
		{"read", `{"path":"dir/b.txt"}`},
		{"write", `{"path":"dir/new.txt","content":"x"}`},
	} {
		_, err := Run(context.Background(), env, c.tool, []byte(c.args))
		if codeOf(err) != CodeSymlinkRefused {
			t.Errorf("Run %s after the swap: %v, want %s", c.tool, err, CodeSymlinkRefused)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "outside", "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a write reached outside the workspace: %v", err)
	}
}
