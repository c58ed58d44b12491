package main

import (
	"encoding/json"
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
	for _, tc := range []struct{ text, msg string }{
		{"> {}\n", "has no expectation"},
		{"> {}\n> {}\n< x hello\n", "line 2: request line 1 has no expectation"},
		{"< x hello\n", "without a request line"},
		{"> {}\n< x hallo\n", `unknown expectation "hallo"`},
		{"> {}\n< x protocol_error\n", "takes one code"},
		{"> {}\n< x run finished\n", "run needs a status"},
		{"> {}\n< x run completed colour=red\n", `unknown run option "colour=red"`},
		{"level strict\n", "level must be contract"},
		{"script {\"turns\":1}\n", "script:"},
		{"fault status 200\n", "not 400..599"},
		{"file a/b \"x\"\n", "plain NAME"},
		{">big lots\n", ">big needs a size"},
		{"> {}\n< x hello\nexit 0\n> {}\n", "nothing may follow exit"},
		{"bogus\n", `unknown directive "bogus"`},
		{"# only a comment\n", "no request lines"},
	} {
		_, err := parseCase("t", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("parseCase(%q) = %v, want an error with %q", tc.text, err, tc.msg)
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
