package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEmbeddedCasesParse(t *testing.T) {
	cs, err := loadCases()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.name)
		if c.exit == nil {
			t.Errorf("%s: no exit line", c.name)
		}
	}
	for _, want := range []string{"transcript/hello", "transcript/malformed", "transcript/run_text", "transcript/run_tool", "transcript/run_retry"} {
		if !slices.Contains(names, want) {
			t.Errorf("no case %s among %q", want, names)
		}
	}
}

func TestParseCaseErrors(t *testing.T) {
	const meta = "-- meta --\nrule: CONTRACT §6\nlevel: protocol\n"
	const tr = "-- transcript --\n"
	for _, tc := range []struct{ text, msg string }{
		{meta + tr + "> {}\n", "has no expectation"},
		{meta + tr + "> {}\n> {}\n< x hello\n", "line 6: request line 5 has no expectation"},
		{meta + tr + "< x hello\n", "without a request line"},
		{meta + tr + "> {}\n< x hallo\n", `unknown expectation "hallo"`},
		{meta + tr + "> {}\n< x protocol_error\n", "takes one code"},
		{meta + tr + "> {}\n< x run finished\n", "run needs a status"},
		{meta + tr + "> {}\n< x run completed colour=red\n", `unknown run option "colour=red"`},
		{meta + tr + ">big lots\n", ">big needs a size"},
		{meta + tr + "> {}\n< x hello\nexit 0\n> {}\n", "nothing may follow exit"},
		{meta + tr + "bogus\n", `unknown directive "bogus"`},
		{meta + tr + "# only a comment\n", "no request lines"},
		{"-- meta --\nrule: x\nlevel: strict\n" + tr, "level must be protocol or contract"},
		{"-- meta --\nlevel: protocol\n" + tr + "> {}\n< x hello\n", "meta has no rule"},
		{"-- meta --\nrule: x\nlevel: protocol\ncolour: red\n" + tr, `unknown meta key "colour"`},
		{"-- meta --\nrule: x\nrule: y\n" + tr, `meta key "rule" given twice`},
		{"-- meta --\nrule: x\nlevel: protocol\nrequires: Hand-Shake\n" + tr, "not a prerequisite name"},
		{"-- meta --\nrule: x\nlevel: protocol\nrequires: a\nprovides: a\n" + tr, `both requires and provides "a"`},
		{"-- meta --\nrule x\n" + tr, `"key: value"`},
		{meta + "-- script.json --\n{\"turns\":1}\n" + tr, `section "script.json"`},
		{meta + "-- faults --\nstatus 200\n" + tr, "not 400..599"},
		{meta + "-- workspace/.. --\nx\n" + tr, "plain name"},
		{meta + "-- notes --\nx\n" + tr, "unknown or repeated section"},
		{meta + tr + "> {}\n< x hello\n" + tr, "unknown or repeated section"},
		{tr + "> {}\n< x hello\n", "no meta section"},
		{meta, "no transcript section"},
		{"just prose\n", "no meta section"},
	} {
		_, err := parseCase("t", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("parseCase(%q) = %v, want an error with %q", tc.text, err, tc.msg)
		}
	}
}

// TestParseCaseSections reads every section of a case file.
func TestParseCaseSections(t *testing.T) {
	text := "What it checks.\n\n-- meta --\nrule: CONTRACT §10\nlevel: contract\nrequires: handshake run\nprovides: tools\n" +
		"-- script.json --\n{\"turns\":[{\"text\":\"a\"}]}\n-- faults --\nstatus 429 retry_after_ms=40\n\nstatus 500\n" +
		"-- workspace/a.txt --\nline 1\nline 2\n-- workspace/empty --\n-- transcript --\n" +
		"# a comment\n> {\"x\":1}\n< r1 hello\n>q \"\\xff\"\n< null protocol_error invalid_utf8\n>big 3\n< null protocol_error invalid_json\nexit 0\n"
	c, err := parseCase("transcript/t", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if c.desc != "What it checks." || c.rule != "CONTRACT §10" || c.level() != "contract" ||
		!slices.Equal(c.requires, []string{"handshake", "run"}) || !slices.Equal(c.provides, []string{"tools"}) {
		t.Errorf("meta: %+v", c)
	}
	if c.script == nil || len(c.script.Turns) != 1 || len(c.faults) != 2 {
		t.Errorf("script %+v, faults %+v", c.script, c.faults)
	}
	if c.files["a.txt"] != "line 1\nline 2\n" || c.files["empty"] != "" || len(c.files) != 2 {
		t.Errorf("files %q", c.files)
	}
	if len(c.steps) != 3 || string(c.steps[1].line) != "\xff" || string(c.steps[2].line) != "xxx" || c.steps[0].src != 20 || c.exit == nil || *c.exit != 0 {
		t.Errorf("steps %+v", c.steps)
	}
}

func TestTxtar(t *testing.T) {
	a := parseTxtar([]byte("comment\n-- a --\none\n-- b/c.txt --\n-- not a marker\nlast"))
	if string(a.comment) != "comment\n" || len(a.sections) != 2 {
		t.Fatalf("%+v", a)
	}
	if a.sections[0].name != "a" || string(a.sections[0].data) != "one\n" || a.sections[0].line != 2 {
		t.Errorf("a: %+v", a.sections[0])
	}
	if a.sections[1].name != "b/c.txt" || string(a.sections[1].data) != "-- not a marker\nlast\n" {
		t.Errorf("b/c.txt: %q", a.sections[1].data)
	}
	if got := string(formatTxtar(a)); got != "comment\n-- a --\none\n-- b/c.txt --\n-- not a marker\nlast\n" {
		t.Errorf("format: %q", got)
	}
	for _, l := range []string{"-- --", "--  --", "-- a", "a --", "--a--"} {
		if marker([]byte(l)) != "" {
			t.Errorf("%q read as a marker", l)
		}
	}
}

// TestCaseSetPrerequisites: a required prerequisite no case provides is
// an error of the set, and ordered runs providers first.
func TestCaseSetPrerequisites(t *testing.T) {
	dir := t.TempDir()
	write := func(name, meta string) {
		text := "-- meta --\nrule: r\nlevel: protocol\n" + meta + "-- transcript --\n> {}\n< x hello\n"
		if err := os.WriteFile(filepath.Join(dir, name+".txtar"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "requires: b_ok\n")
	write("b", "requires: handshake\nprovides: b_ok\n")
	write("c", "provides: handshake\n")
	cs, err := loadCaseDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range ordered(cs) {
		names = append(names, c.name)
	}
	if want := []string{"transcript/c", "transcript/b", "transcript/a"}; !slices.Equal(names, want) {
		t.Errorf("order %q, want %q", names, want)
	}
	write("d", "requires: nobody\n")
	if _, err := loadCaseDir(dir); err == nil || !strings.Contains(err.Error(), `requires "nobody", which no case provides`) {
		t.Errorf("unknown prerequisite: %v", err)
	}
	if _, err := loadCaseDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no case files") {
		t.Errorf("empty folder: %v", err)
	}
	// The embedded set: hello provides the handshake and runs first.
	cs, err = loadCases()
	if err != nil {
		t.Fatal(err)
	}
	if cs = ordered(cs); cs[0].name != "transcript/hello" || !slices.Contains(cs[0].provides, prereqHandshake) {
		t.Errorf("the first embedded case is %s", cs[0].name)
	}
	for _, c := range cs[1:] {
		if !slices.Contains(c.requires, prereqHandshake) {
			t.Errorf("%s does not require the handshake", c.name)
		}
		if c.rule == "" {
			t.Errorf("%s has no rule", c.name)
		}
	}
}

func TestParseExpectOptions(t *testing.T) {
	e, err := parseExpect(`r1 run completed code=x has=a,b output="two words"`)
	if err != nil {
		t.Fatal(err)
	}
	if *e.id != "r1" || e.status != "completed" || e.code != "x" || !slices.Equal(e.has, []string{"a", "b"}) || *e.output != "two words" {
		t.Errorf("got %+v", e)
	}
	if e, _ := parseExpect("null protocol_error invalid_json"); e.id != nil || e.code != "invalid_json" {
		t.Errorf("null id: got %+v", e)
	}
}

// TestFuzzCases checks the generator: deterministic per seed, distinct
// names, and every line that names a request_id names a fresh one (a
// reused id would be answered duplicate_request_id instead).
func TestFuzzCases(t *testing.T) {
	a, b := fuzzCases(7, 2000), fuzzCases(7, 2000)
	if len(a) != len(b) {
		t.Fatal("the fuzzer is not deterministic")
	}
	for i := range a {
		if a[i].name != b[i].name || string(a[i].line) != string(b[i].line) {
			t.Fatalf("case %d differs between two runs with one seed", i)
		}
	}
	if c := fuzzCases(8, 2000); slices.EqualFunc(a, c, func(x, y fuzzCase) bool { return string(x.line) == string(y.line) }) {
		t.Error("seeds 7 and 8 generate the same cases")
	}
	names := map[string]bool{}
	ids := map[string]string{}
	kinds := map[string]bool{}
	for _, c := range a {
		if names[c.name] {
			t.Errorf("two cases named %s", c.name)
		}
		names[c.name] = true
		kinds[c.exp.kind+"/"+c.exp.code] = true
		if c.exp.id != nil {
			if prev, ok := ids[*c.exp.id]; ok {
				t.Errorf("%s reuses request_id %q of %s", c.name, *c.exp.id, prev)
			}
			ids[*c.exp.id] = c.name
		}
		// A line expected to be answered normally is JSON; one expected
		// to be invalid UTF-8 is not UTF-8.
		if c.exp.kind != "protocol_error" && !json.Valid(c.line) {
			t.Errorf("%s expects %s, but the line is not JSON: %q", c.name, c.exp, c.line)
		}
		switch c.exp.code {
		case "invalid_utf8":
			if utf8.Valid(c.line) {
				t.Errorf("%s: the line is valid UTF-8", c.name)
			}
		case "unknown_field", "duplicate_field", "invalid_field", "invalid_id", "missing_field", "unknown_command":
			if !json.Valid(c.line) {
				t.Errorf("%s: the line is not JSON: %q", c.name, c.line)
			}
		}
	}
	for _, k := range []string{"protocol_error/invalid_utf8", "protocol_error/frame_too_large", "protocol_error/not_an_object",
		"protocol_error/invalid_json", "protocol_error/duplicate_field", "protocol_error/unknown_field", "protocol_error/invalid_id", "hello/"} {
		if !kinds[k] {
			t.Errorf("the fuzzer generates no %s case", k)
		}
	}
}
