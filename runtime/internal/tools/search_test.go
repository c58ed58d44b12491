package tools

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// searchTree is a small repository-like workspace for grep and find.
var searchTree = map[string]string{
	"README.md":             "# Project\nThe needle is here.\n",
	"src/main.go":           "package main\n\nfunc main() {\n\tneedle()\n}\n",
	"src/util.go":           "package main\n\n// Needle is exported.\nfunc needle() {}\n",
	"src/util_test.go":      "package main\n\nfunc TestNeedle() {}\n",
	"src/sub/deep.go":       "package sub\n\nvar x = \"needle.*\"\n",
	"src/sub/.gitignore":    "gen/\n!important.log\n/local.txt\n",
	"src/sub/gen/g.go":      "package gen // needle\n",
	"src/sub/local.txt":     "needle local\n",
	"src/sub/x/local.txt":   "needle nested local\n",
	"src/sub/important.log": "needle important\n",
	"docs/guide.txt":        "line 1\nline 2\nneedle 3\nline 4\nline 5\nline 6\nline 7\nneedle 8\nline 9\n",
	".gitignore":            "# build output\n*.log\nbuild/\n/top.txt\n\n",
	"app.log":               "needle in a log\n",
	"build/out.txt":         "needle in build\n",
	"top.txt":               "needle top\n",
	"nested/top.txt":        "needle nested top\n",
	".git/config":           "needle in git\n",
	".github/ci.yml":        "needle in ci\n",
	"bin.dat":               "needle\x00binary\n",
	"latin1.txt":            "needle caf\xe9\n",
	"link_secret":           "->../outside/secret.txt",
	"link_outdir":           "->../outside/dir",
	"link_src":              "->src",
}

func TestGrep(t *testing.T) {
	env, _, _ := newEnv(t, searchTree)
	runCases(t, env, []toolCase{
		{name: "literal", tool: "grep", args: `{"pattern":"needle","literal":true}`, want: strings.Join([]string{
			".github/ci.yml:1:needle in ci",
			"README.md:2:The needle is here.",
			"docs/guide.txt:3:needle 3",
			"docs/guide.txt:8:needle 8",
			"nested/top.txt:1:needle nested top",
			"src/main.go:4:\tneedle()",
			"src/sub/deep.go:3:var x = \"needle.*\"",
			"src/sub/important.log:1:needle important",
			"src/sub/x/local.txt:1:needle nested local",
			"src/util.go:4:func needle() {}",
		}, "\n")},
		{name: "regexp", tool: "grep", args: `{"pattern":"^func [a-z]+\\(","path":"src"}`,
			want: "src/main.go:3:func main() {\nsrc/util.go:4:func needle() {}"},
		{name: "literal metacharacters", tool: "grep", args: `{"pattern":"needle.*\"","literal":true}`,
			want: `src/sub/deep.go:3:var x = "needle.*"`},
		{name: "ignore case", tool: "grep", args: `{"pattern":"NEEDLE","ignore_case":true,"path":"src","glob":"*.go"}`,
			want: "src/main.go:4:\tneedle()\nsrc/sub/deep.go:3:var x = \"needle.*\"\nsrc/util.go:3:// Needle is exported.\nsrc/util.go:4:func needle() {}\nsrc/util_test.go:3:func TestNeedle() {}"},
		{name: "ignore case literal", tool: "grep", args: `{"pattern":"NEEDLE IS","ignore_case":true,"literal":true}`,
			want: "README.md:2:The needle is here.\nsrc/util.go:3:// Needle is exported."},
		{name: "glob with slash", tool: "grep", args: `{"pattern":"package","glob":"src/**/*_test.go"}`,
			want: "src/util_test.go:1:package main"},
		{name: "context", tool: "grep", args: `{"pattern":"needle","path":"docs","context":1}`,
			want: "docs/guide.txt-2-line 2\ndocs/guide.txt:3:needle 3\ndocs/guide.txt-4-line 4\n--\ndocs/guide.txt-7-line 7\ndocs/guide.txt:8:needle 8\ndocs/guide.txt-9-line 9"},
		{name: "context merges", tool: "grep", args: `{"pattern":"needle","path":"docs","context":3}`,
			want: "docs/guide.txt-1-line 1\ndocs/guide.txt-2-line 2\ndocs/guide.txt:3:needle 3\ndocs/guide.txt-4-line 4\ndocs/guide.txt-5-line 5\ndocs/guide.txt-6-line 6\ndocs/guide.txt-7-line 7\ndocs/guide.txt:8:needle 8\ndocs/guide.txt-9-line 9"},
		{name: "context across files", tool: "grep", args: `{"pattern":"needle","path":"src/sub","context":1,"glob":"*.go"}`,
			want: "src/sub/deep.go-2-\nsrc/sub/deep.go:3:var x = \"needle.*\""},
		{name: "limit", tool: "grep", args: `{"pattern":"needle","limit":3}`,
			want: ".github/ci.yml:1:needle in ci\nREADME.md:2:The needle is here.\ndocs/guide.txt:3:needle 3\n[stopped at the match limit of 3; narrow the search or raise limit]"},
		{name: "limit within a file", tool: "grep", args: `{"pattern":"needle","limit":1,"path":"docs"}`,
			want: "docs/guide.txt:3:needle 3\n[stopped at the match limit of 1; narrow the search or raise limit]"},
		{name: "no match", tool: "grep", args: `{"pattern":"absent-string"}`, want: "(no matches)"},
		{name: "explicit ignored file", tool: "grep", args: `{"pattern":"needle","path":"app.log"}`, want: "app.log:1:needle in a log"},
		{name: "explicit ignored dir", tool: "grep", args: `{"pattern":"needle","path":"build"}`, want: "build/out.txt:1:needle in build"},
		{name: "explicit binary", tool: "grep", args: `{"pattern":"needle","path":"bin.dat"}`, code: CodeBinaryFile},
		{name: "text anchor", tool: "grep", args: `{"pattern":"\\Aline [0-9]\\z","path":"docs"}`, wantIn: []string{"docs/guide.txt:1:line 1", "docs/guide.txt:9:line 9"}, notIn: []string{"needle"}},
		{name: "empty matches", tool: "grep", args: `{"pattern":"^$","path":"src/main.go"}`, want: "src/main.go:2:"},
		{name: "link start", tool: "grep", args: `{"pattern":"x","path":"link_outdir"}`, code: CodeSymlinkRefused},
		{name: "link file", tool: "grep", args: `{"pattern":"x","path":"link_secret"}`, code: CodeSymlinkRefused},
		{name: "dotdot", tool: "grep", args: `{"pattern":"x","path":"../outside"}`, code: CodePathOutsideWorkspace},
		{name: "missing", tool: "grep", args: `{"pattern":"x","path":"nope"}`, code: CodeNotFound},
		{name: "secret", tool: "grep", args: `{"pattern":"TOP"}`, want: "(no matches)"},
	})
}

func TestGrepLongLine(t *testing.T) {
	env, _, _ := newEnv(t, map[string]string{"min.js": strings.Repeat("a", 2000) + "needle" + strings.Repeat("b", 2000)})
	res, err := call(t, env, "grep", `{"pattern":"needle"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "min.js:1:" + strings.Repeat("a", grepLineBytes) + " [… line truncated]"; res.Output != want {
		t.Errorf("output = %q", res.Output)
	}
}

func TestGrepDeterministicLimit(t *testing.T) {
	files := map[string]string{}
	for i := range 400 {
		files["d"+strconv.Itoa(i%7)+"/f"+strconv.Itoa(i)+".txt"] = strings.Repeat("hay\n", i%13) + "needle " + strconv.Itoa(i) + "\n"
	}
	env, _, _ := newEnv(t, files)
	first, err := call(t, env, "grep", `{"pattern":"needle [0-9]+","limit":50}`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(first.Output, "\n")
	if len(lines) != 51 {
		t.Fatalf("%d lines", len(lines))
	}
	for i := 1; i < 50; i++ {
		if lines[i-1] > lines[i] {
			t.Errorf("not sorted: %q > %q", lines[i-1], lines[i])
		}
	}
	for range 20 {
		res, err := call(t, env, "grep", `{"pattern":"needle [0-9]+","limit":50}`)
		if err != nil || res.Output != first.Output {
			t.Fatalf("output changed between runs:\n%s\n---\n%s", first.Output, res.Output)
		}
	}
}

func TestGrepCanceled(t *testing.T) {
	env, _, _ := newEnv(t, searchTree)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, env, "grep", []byte(`{"pattern":"needle"}`))
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeCanceled {
		t.Errorf("Run with a canceled context = %v", err)
	}
}

func TestFind(t *testing.T) {
	env, _, _ := newEnv(t, searchTree)
	runCases(t, env, []toolCase{
		{name: "base name", tool: "find", args: `{"pattern":"*.go"}`,
			want: "src/main.go\nsrc/sub/deep.go\nsrc/util.go\nsrc/util_test.go"},
		{name: "path glob", tool: "find", args: `{"pattern":"src/**/*.go"}`,
			want: "src/main.go\nsrc/sub/deep.go\nsrc/util.go\nsrc/util_test.go"},
		{name: "path glob one level", tool: "find", args: `{"pattern":"src/*.go"}`,
			want: "src/main.go\nsrc/util.go\nsrc/util_test.go"},
		{name: "leading slash", tool: "find", args: `{"pattern":"/src/*_test.go"}`, want: "src/util_test.go"},
		{name: "directories", tool: "find", args: `{"pattern":"s*"}`, want: "src/\nsrc/sub/"},
		{name: "under path", tool: "find", args: `{"pattern":"*.txt","path":"src"}`, want: "src/sub/x/local.txt"},
		{name: "gitignore", tool: "find", args: `{"pattern":"*"}`,
			want: ".github/\n.github/ci.yml\n.gitignore\nREADME.md\nbin.dat\ndocs/\ndocs/guide.txt\nlatin1.txt\nlink_outdir\nlink_secret\nlink_src\nnested/\nnested/top.txt\nsrc/\nsrc/main.go\nsrc/sub/\nsrc/sub/.gitignore\nsrc/sub/deep.go\nsrc/sub/important.log\nsrc/sub/x/\nsrc/sub/x/local.txt\nsrc/util.go\nsrc/util_test.go"},
		{name: "limit", tool: "find", args: `{"pattern":"*.go","limit":2}`,
			want: "src/main.go\nsrc/sub/deep.go\n[limit of 2 results reached; narrow the pattern or the path, or raise limit]"},
		{name: "no match", tool: "find", args: `{"pattern":"*.rs"}`, want: "(no matches)"},
		{name: "class", tool: "find", args: `{"pattern":"[a-c]*.*"}`, want: ".github/ci.yml\nbin.dat"},
		{name: "negated class", tool: "find", args: `{"pattern":"[!a-z]*"}`, want: ".github/\n.gitignore\nREADME.md\nsrc/sub/.gitignore"},
		{name: "question mark", tool: "find", args: `{"pattern":"???.go"}`, want: "(no matches)"},
		{name: "file start", tool: "find", args: `{"pattern":"*","path":"README.md"}`, code: CodeNotDirectory},
		{name: "link start", tool: "find", args: `{"pattern":"*","path":"link_src"}`, code: CodeSymlinkRefused},
		{name: "dotdot", tool: "find", args: `{"pattern":"*","path":".."}`, code: CodePathOutsideWorkspace},
	})
}
