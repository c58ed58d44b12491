package tools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"octet.dev/host/runtime/internal/shell"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(spareReleasing{m})
}

// spareReleasing ends the shell's spare guard (a child process and the
// goroutine waiting on it) once the tests are over, before goleak looks.
type spareReleasing struct{ m *testing.M }

func (s spareReleasing) Run() int {
	code := s.m.Run()
	shell.ReleaseSpare()
	return code
}

// secret is the content of every file outside the workspace; no tool output
// or error may ever contain it.
const secret = "TOPSECRET"

// writeTree creates files (path → content) under dir; a content starting
// with "->" makes a symbolic link to the rest.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(c, "->"); ok {
			err = os.Symlink(target, full)
		} else if strings.HasSuffix(p, "/") {
			err = os.MkdirAll(full, 0o755)
		} else {
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// newEnv opens a workspace holding files, next to an "outside" directory
// holding the secret, and returns the environment, the workspace path and
// the temporary directory that holds both.
func newEnv(t testing.TB, files map[string]string) (Env, string, string) {
	t.Helper()
	tmp := t.TempDir()
	writeTree(t, tmp, map[string]string{
		"outside/secret.txt":    secret,
		"outside/dir/inner.txt": secret + " inner",
		"outside/dir/x.go":      "package x // " + secret,
	})
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, files)
	root, err := confine.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return Env{Root: root}, ws, tmp
}

// call runs a tool and checks the invariants every call keeps: output is
// valid UTF-8 within the bound, and neither output nor error holds the
// secret or a host path.
//
// It also runs Gate first, as the agent loop does, and checks that the two
// agree: a call Gate refuses is refused by Run with the same code, and a
// call Run refuses on a gate (confinement, link, protected path) was
// refused by Gate already, so no gate refusal follows an allowed decision.
func call(t *testing.T, env Env, name, args string) (Result, *Error) {
	t.Helper()
	gerr := Gate(env, name, []byte(args))
	res, err := Run(context.Background(), env, name, []byte(args))
	checkGateAgrees(t, name, args, gerr, err)
	max := env.maxOutput()
	if len(res.Output) > max {
		t.Errorf("%s %s: output is %d bytes, bound %d", name, args, len(res.Output), max)
	}
	if !utf8.ValidString(res.Output) {
		t.Errorf("%s %s: output is not valid UTF-8", name, args)
	}
	text := res.Output
	if err != nil {
		text += err.Error()
	}
	if strings.Contains(text, secret) {
		t.Fatalf("%s %s: reached outside the workspace:\n%s", name, args, text)
	}
	// A host path may only appear inside a relative path the caller gave
	// (such as "link/tmp/…"), never as an absolute path of its own.
	if regexp.MustCompile(`(^|[\s"'(])` + regexp.QuoteMeta(os.TempDir())).MatchString(text) {
		t.Errorf("%s %s: names a host path:\n%s", name, args, text)
	}
	if err == nil {
		return res, nil
	}
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("%s %s: error %T %v is not a *Error", name, args, err, err)
	}
	if len(te.Message) > maxMessageBytes || !utf8.ValidString(te.Message) {
		t.Errorf("%s %s: message is not bounded UTF-8: %q", name, args, te.Message)
	}
	return res, te
}

// gateCodes are the codes Gate decides.
var gateCodes = []protocol.Code{CodePathOutsideWorkspace, CodeSymlinkRefused, CodeProtectedPath}

func codeOf(err error) protocol.Code {
	var te *Error
	if errors.As(err, &te) {
		return te.Code
	}
	if err != nil {
		return "(not a *Error)"
	}
	return ""
}

func checkGateAgrees(t *testing.T, name, args string, gerr, rerr error) {
	t.Helper()
	g, r := codeOf(gerr), codeOf(rerr)
	switch {
	case g == "":
		if slices.Contains(gateCodes, r) {
			t.Errorf("%s %s: Gate passed, Run refused with the gate code %s", name, args, r)
		}
	case g == CodeInvalidArguments || g == CodeUnknownTool || slices.Contains(gateCodes, g):
		if r != g {
			t.Errorf("%s %s: Gate refused with %s, Run with %q", name, args, g, r)
		}
	default:
		t.Errorf("%s %s: Gate refused with %s, which is no gate's code", name, args, g)
	}
}

// toolCase is one call and what it must produce: an error code, or output
// that equals want (when exact) or contains each of wantIn.
type toolCase struct {
	name, tool, args string
	code             protocol.Code
	want             string
	wantIn           []string
	notIn            []string
	truncated        bool
}

func runCases(t *testing.T, env Env, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := call(t, env, tc.tool, tc.args)
			if tc.code != "" {
				if err == nil || err.Code != tc.code {
					t.Fatalf("%s %s = %q, %v; want code %s", tc.tool, tc.args, res.Output, err, tc.code)
				}
				for _, s := range tc.wantIn {
					if !strings.Contains(err.Message, s) {
						t.Errorf("message %q does not contain %q", err.Message, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s: %v", tc.tool, tc.args, err)
			}
			if tc.want != "" && res.Output != tc.want {
				t.Errorf("%s %s output:\n%s\nwant:\n%s", tc.tool, tc.args, res.Output, tc.want)
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(res.Output, s) {
					t.Errorf("output does not contain %q:\n%s", s, res.Output)
				}
			}
			for _, s := range tc.notIn {
				if strings.Contains(res.Output, s) {
					t.Errorf("output contains %q:\n%s", s, res.Output)
				}
			}
			if res.Truncated != tc.truncated {
				t.Errorf("Truncated = %v, want %v", res.Truncated, tc.truncated)
			}
		})
	}
}

func TestSpecs(t *testing.T) {
	specs := Specs()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		var doc struct {
			Type                 string                    `json:"type"`
			Properties           map[string]jsontext.Value `json:"properties"`
			Required             []string                  `json:"required"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Parameters, &doc, json.RejectUnknownMembers(true)); err != nil {
			t.Fatalf("%s schema: %v\n%s", s.Name, err, s.Parameters)
		}
		if doc.Type != "object" || doc.AdditionalProperties == nil || *doc.AdditionalProperties {
			t.Errorf("%s schema is not a closed object: %s", s.Name, s.Parameters)
		}
		for _, r := range doc.Required {
			if _, ok := doc.Properties[r]; !ok {
				t.Errorf("%s requires undeclared %q", s.Name, r)
			}
		}
		if s.Description == "" {
			t.Errorf("%s has no description", s.Name)
		}
		wantEffect := EffectWorkspaceRead
		if s.Name == "edit" || s.Name == "write" {
			wantEffect = EffectWorkspaceMutation
		}
		if s.Effect != wantEffect {
			t.Errorf("%s effect = %q, want %q", s.Name, s.Effect, wantEffect)
		}
	}
	if want := []string{"read", "ls", "grep", "find", "edit", "write"}; !slices.Equal(names, want) {
		t.Errorf("Specs names = %q, want %q", names, want)
	}
	// Parameters of CONTRACT §10, required ones marked.
	params := map[string]string{}
	for _, s := range specs {
		var doc struct {
			Properties map[string]jsontext.Value `json:"properties"`
			Required   []string                  `json:"required"`
		}
		json.Unmarshal(s.Parameters, &doc)
		var ps []string
		for p := range doc.Properties {
			if slices.Contains(doc.Required, p) {
				p += "!"
			}
			ps = append(ps, p)
		}
		slices.Sort(ps)
		params[s.Name] = strings.Join(ps, " ")
	}
	want := map[string]string{
		"read":  "limit offset path!",
		"ls":    "limit path",
		"grep":  "context glob ignore_case limit literal path pattern!",
		"find":  "limit path pattern!",
		"edit":  "new_text! old_text! path!",
		"write": "content! path!",
	}
	for name, w := range want {
		if params[name] != w {
			t.Errorf("%s parameters = %q, want %q", name, params[name], w)
		}
	}
}

func TestArguments(t *testing.T) {
	env, _, _ := newEnv(t, map[string]string{"a.txt": "one\ntwo\n"})
	runCases(t, env, []toolCase{
		{name: "array", tool: "read", args: `[]`, code: CodeInvalidArguments, wantIn: []string{"must be a JSON object, not an array"}},
		{name: "string", tool: "read", args: `"a.txt"`, code: CodeInvalidArguments, wantIn: []string{"JSON object"}},
		{name: "null", tool: "read", args: `null`, code: CodeInvalidArguments, wantIn: []string{"JSON object"}},
		{name: "empty", tool: "ls", args: ``, code: CodeInvalidArguments, wantIn: []string{"JSON object"}},
		{name: "bad json", tool: "read", args: `{"path":`, code: CodeInvalidArguments, wantIn: []string{"not valid JSON"}},
		{name: "trailing data", tool: "read", args: `{"path":"a.txt"} {}`, code: CodeInvalidArguments, wantIn: []string{"after the JSON object"}},
		{name: "missing", tool: "read", args: `{}`, code: CodeInvalidArguments, wantIn: []string{`missing required argument "path"`}},
		{name: "unknown", tool: "read", args: `{"path":"a.txt","lines":3}`, code: CodeInvalidArguments, wantIn: []string{`unknown argument "lines"`, "path, offset, limit"}},
		{name: "case variant", tool: "read", args: `{"Path":"a.txt"}`, code: CodeInvalidArguments, wantIn: []string{`"Path"`, `did you mean "path"`}},
		{name: "duplicate", tool: "read", args: `{"path":"a.txt","path":"b.txt"}`, code: CodeInvalidArguments, wantIn: []string{`duplicate argument "path"`}},
		{name: "wrong type string", tool: "read", args: `{"path":1}`, code: CodeInvalidArguments, wantIn: []string{`"path" must be a string, not a number`}},
		{name: "null member", tool: "read", args: `{"path":"a.txt","offset":null}`, code: CodeInvalidArguments, wantIn: []string{`"offset" must be an integer, not null`}},
		{name: "string for integer", tool: "read", args: `{"path":"a.txt","offset":"2"}`, code: CodeInvalidArguments, wantIn: []string{`"offset" must be an integer, not a string`}},
		{name: "fraction", tool: "read", args: `{"path":"a.txt","offset":1.5}`, code: CodeInvalidArguments, wantIn: []string{`"offset" must be an integer`}},
		{name: "below minimum", tool: "read", args: `{"path":"a.txt","limit":0}`, code: CodeInvalidArguments, wantIn: []string{`"limit" must be at least 1`}},
		{name: "huge", tool: "read", args: `{"path":"a.txt","limit":1e300}`, code: CodeInvalidArguments, wantIn: []string{`"limit" must be an integer`}},
		{name: "integral float", tool: "read", args: `{"path":"a.txt","offset":2.0}`, want: "     2\ttwo"},
		{name: "bool for integer", tool: "ls", args: `{"limit":true}`, code: CodeInvalidArguments, wantIn: []string{`"limit" must be an integer, not a boolean`}},
		{name: "number for bool", tool: "grep", args: `{"pattern":"x","literal":1}`, code: CodeInvalidArguments, wantIn: []string{`"literal" must be a boolean, not a number`}},
		{name: "empty required", tool: "grep", args: `{"pattern":""}`, code: CodeInvalidArguments, wantIn: []string{`"pattern" must not be empty`}},
		{name: "nested unknown", tool: "ls", args: `{"path":{"x":1}}`, code: CodeInvalidArguments, wantIn: []string{`"path" must be a string, not an object`}},
		{name: "invalid utf8", tool: "read", args: "{\"path\":\"a\xff\"}", code: CodeInvalidArguments},
		{name: "bad regexp", tool: "grep", args: `{"pattern":"("}`, code: CodeInvalidArguments, wantIn: []string{"RE2", "literal=true"}},
		{name: "nul in path", tool: "read", args: `{"path":"a\u0000b"}`, code: CodeInvalidArguments},
	})
	_, err := call(t, env, "bash", `{"command":"ls"}`)
	if err == nil || err.Code != CodeUnknownTool {
		t.Errorf("Run(bash) = %v, want %s", err, CodeUnknownTool)
	}
}

func TestRead(t *testing.T) {
	env, ws, tmp := newEnv(t, map[string]string{
		"five.txt":    "l1\nl2\nl3\nl4\nl5\n",
		"noeol.txt":   "a\nb",
		"empty.txt":   "",
		"crlf.txt":    "x\r\ny\r\n",
		"nul.bin":     "abc\x00def",
		"latin1.txt":  "caf\xe9\n",
		"utf8.txt":    "café ☕\n",
		"dir/f.txt":   "in dir\n",
		"link_in":     "->five.txt",
		"link_secret": "->../outside/secret.txt",
		"link_abs":    "->" + "/nonexistent-abs-target",
		"link_outdir": "->../outside/dir",
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCases(t, env, []toolCase{
		{name: "fifo", tool: "read", args: `{"path":"fifo"}`, code: CodeNotRegularFile},
		{name: "grep skips fifo", tool: "grep", args: `{"pattern":"l1"}`, want: "five.txt:1:l1"},
		{name: "whole", tool: "read", args: `{"path":"five.txt"}`, want: "     1\tl1\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5"},
		{name: "offset limit", tool: "read", args: `{"path":"five.txt","offset":2,"limit":2}`,
			want: "     2\tl2\n     3\tl3\n... 2 more lines; use offset=4 to continue"},
		{name: "last page", tool: "read", args: `{"path":"five.txt","offset":5}`, want: "     5\tl5"},
		{name: "exact end", tool: "read", args: `{"path":"five.txt","offset":4,"limit":2}`, want: "     4\tl4\n     5\tl5"},
		{name: "no final newline", tool: "read", args: `{"path":"noeol.txt","offset":2}`, want: "     2\tb"},
		{name: "offset past end", tool: "read", args: `{"path":"five.txt","offset":6}`, code: CodeInvalidArguments, wantIn: []string{"beyond the end of five.txt (5 lines)"}},
		{name: "empty", tool: "read", args: `{"path":"empty.txt"}`, want: "(empty file)"},
		{name: "crlf", tool: "read", args: `{"path":"crlf.txt"}`, want: "     1\tx\n     2\ty"},
		{name: "utf8", tool: "read", args: `{"path":"utf8.txt"}`, want: "     1\tcafé ☕"},
		{name: "nul", tool: "read", args: `{"path":"nul.bin"}`, code: CodeBinaryFile},
		{name: "invalid utf8", tool: "read", args: `{"path":"latin1.txt"}`, code: CodeBinaryFile},
		{name: "absolute inside", tool: "read", args: `{"path":` + quote(filepath.Join(ws, "dir", "f.txt")) + `}`, want: "     1\tin dir"},
		{name: "directory", tool: "read", args: `{"path":"dir"}`, code: CodeIsDirectory},
		{name: "root", tool: "read", args: `{"path":"."}`, code: CodeIsDirectory},
		{name: "missing", tool: "read", args: `{"path":"nope.txt"}`, code: CodeNotFound, wantIn: []string{"nope.txt"}},
		{name: "file as dir", tool: "read", args: `{"path":"five.txt/x"}`, code: CodeNotDirectory},
		{name: "link inside", tool: "read", args: `{"path":"link_in"}`, code: CodeSymlinkRefused},
		{name: "link outside", tool: "read", args: `{"path":"link_secret"}`, code: CodeSymlinkRefused},
		{name: "link absolute", tool: "read", args: `{"path":"link_abs"}`, code: CodeSymlinkRefused},
		{name: "through link dir", tool: "read", args: `{"path":"link_outdir/inner.txt"}`, code: CodeSymlinkRefused},
		{name: "dotdot", tool: "read", args: `{"path":"../outside/secret.txt"}`, code: CodePathOutsideWorkspace},
		{name: "dotdot inner", tool: "read", args: `{"path":"dir/../../outside/secret.txt"}`, code: CodePathOutsideWorkspace},
		{name: "absolute outside", tool: "read", args: `{"path":` + quote(filepath.Join(tmp, "outside", "secret.txt")) + `}`, code: CodePathOutsideWorkspace},
		{name: "etc passwd", tool: "read", args: `{"path":"/etc/passwd"}`, code: CodePathOutsideWorkspace},
	})
}

func TestReadTruncation(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(strings.Repeat("x", 40) + " line " + string(rune('a'+i%26)) + "\n")
	}
	long := strings.Repeat("é", 5000) // 10000 bytes on one line
	env, _, _ := newEnv(t, map[string]string{"many.txt": b.String(), "long.txt": long + "\nsecond\n"})
	env.MaxOutputBytes = 2000
	res, err := call(t, env, "read", `{"path":"many.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.Contains(res.Output, "[output truncated: ") || !strings.Contains(res.Output, "bytes shown]") {
		t.Fatalf("not marked as truncated:\n%s", res.Output)
	}
	// Every line shown is whole, and the note says where to go on.
	lines := strings.Split(res.Output, "\n")
	shown := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "  ") {
			shown++
			if !strings.HasSuffix(l, "line "+string(rune('a'+(shown-1)%26))) {
				t.Errorf("line cut: %q", l)
			}
		}
	}
	wantNote := "use offset=" + strconv.Itoa(shown+1) + " to continue"
	if !strings.Contains(res.Output, wantNote) || !strings.Contains(res.Output, strconv.Itoa(1000-shown)+" more lines") {
		t.Errorf("output lacks %q / remaining count:\n%s", wantNote, res.Output)
	}

	res, err = call(t, env, "read", `{"path":"long.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.Contains(res.Output, "line 1 is longer than the output bound") || !strings.Contains(res.Output, "offset=2") {
		t.Errorf("long line:\n%s", res.Output)
	}
}

func TestLs(t *testing.T) {
	env, _, _ := newEnv(t, map[string]string{
		"b.txt":       "",
		"a.txt":       "",
		"sub/x":       "",
		".hidden":     "",
		"empty/":      "",
		"link_outdir": "->../outside/dir",
		"link_secret": "->../outside/secret.txt",
	})
	runCases(t, env, []toolCase{
		{name: "root", tool: "ls", args: `{}`, want: ".hidden\na.txt\nb.txt\nempty/\nlink_outdir@\nlink_secret@\nsub/"},
		{name: "sub", tool: "ls", args: `{"path":"sub"}`, want: "x"},
		{name: "limit", tool: "ls", args: `{"limit":2}`, want: ".hidden\na.txt\n... 5 more entries; use limit=7 to see all"},
		{name: "empty", tool: "ls", args: `{"path":"empty"}`, want: "(empty directory)"},
		{name: "file", tool: "ls", args: `{"path":"a.txt"}`, code: CodeNotDirectory},
		{name: "link dir", tool: "ls", args: `{"path":"link_outdir"}`, code: CodeSymlinkRefused},
		{name: "dotdot", tool: "ls", args: `{"path":".."}`, code: CodePathOutsideWorkspace},
		{name: "missing", tool: "ls", args: `{"path":"nope"}`, code: CodeNotFound},
	})
}

func TestLsTruncation(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files["file-"+strconv.Itoa(1000+i)+".txt"] = ""
	}
	env, _, _ := newEnv(t, files)
	env.MaxOutputBytes = 1000
	res, err := call(t, env, "ls", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	// 300 entries of 13 bytes and a newline, the newline after the last one included.
	if !res.Truncated || !strings.HasSuffix(res.Output, " of 4200 bytes shown]") {
		t.Errorf("ls truncation:\n%s", res.Output)
	}
	for _, l := range strings.Split(res.Output, "\n") {
		if !strings.HasPrefix(l, "file-") && !strings.HasPrefix(l, "[output truncated") {
			t.Errorf("partial line %q", l)
		}
		if strings.HasPrefix(l, "file-") && len(l) != len("file-1000.txt") {
			t.Errorf("partial line %q", l)
		}
	}
}

func TestBound(t *testing.T) {
	tests := []struct {
		text  string
		max   int
		want  string
		trunc bool
	}{
		{text: "short", max: 100, want: "short"},
		{text: strings.Repeat("a", 100), max: 100, want: strings.Repeat("a", 100)},
		{text: strings.Repeat("é", 100), max: 60, want: strings.Repeat("é", 8) + "\n[output truncated: 16 of 200 bytes shown]", trunc: true},
		{text: "line one\nline two\nline three\n" + strings.Repeat("z", 60), max: 80, want: "line one\nline two\nline three\n[output truncated: 29 of 89 bytes shown]", trunc: true},
		{text: strings.Repeat("a", 100), max: 10, want: "\n[output truncated: 0 of 100 bytes shown]"[1:], trunc: true},
	}
	for _, tt := range tests {
		got, trunc := bound([]byte(tt.text), len(tt.text), tt.max, false)
		if got != tt.want || trunc != tt.trunc {
			t.Errorf("bound(%q, %d) = %q, %v; want %q, %v", tt.text, tt.max, got, trunc, tt.want, tt.trunc)
		}
		if tt.max >= 50 && len(got) > tt.max {
			t.Errorf("bound(%q, %d) is %d bytes", tt.text, tt.max, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("bound(%q, %d) = %q is not valid UTF-8", tt.text, tt.max, got)
		}
	}
}

// TestSchemaBytes: the appended schemas are byte for byte what json.Marshal
// makes of the same document with deterministic map order, for every tool
// and for parameters that exercise each branch (escapes, minimum,
// minLength, no required, no parameters).
func TestSchemaBytes(t *testing.T) {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description"`
		Minimum     *int   `json:"minimum,omitempty"`
		MinLength   *int   `json:"minLength,omitempty"`
	}
	marshal := func(params []param) []byte {
		props := map[string]prop{}
		required := []string{}
		for _, p := range params {
			sp := prop{Type: p.kind.schemaType(), Description: p.description}
			if p.kind == kindInteger {
				sp.Minimum = &p.min
			}
			if p.nonEmpty {
				one := 1
				sp.MinLength = &one
			}
			props[p.name] = sp
			if p.required {
				required = append(required, p.name)
			}
		}
		doc := struct {
			Type                 string          `json:"type"`
			Properties           map[string]prop `json:"properties"`
			Required             []string        `json:"required"`
			AdditionalProperties bool            `json:"additionalProperties"`
		}{"object", props, required, false}
		b, err := json.Marshal(doc, json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	lists := [][]param{
		nil,
		{{name: "z", kind: kindBoolean, description: "last"}, {name: "a", kind: kindString, description: `quote " back \ tab	<&> é ` + "\u2028", required: true, nonEmpty: true}},
		{{name: "n", kind: kindInteger, min: -3, description: "count", required: true}, {name: "m", kind: kindInteger, description: "zero minimum"}},
	}
	for _, tl := range registry {
		lists = append(lists, tl.params)
	}
	for i, params := range lists {
		if got, want := schema(params), marshal(params); !bytes.Equal(got, want) {
			t.Errorf("list %d:\n got %s\nwant %s", i, got, want)
		}
	}
	// Specs shares one build of each schema.
	if a, b := Specs(), Specs(); &a[0].Parameters[0] != &b[0].Parameters[0] {
		t.Error("Specs built the schemas again")
	}
}
