package tools

import "testing"

func TestGlobRegexp(t *testing.T) {
	tests := []struct {
		glob  string
		match []string
		miss  []string
	}{
		{glob: "*.go", match: []string{"a.go", ".go"}, miss: []string{"a/b.go", "a.go.txt"}},
		{glob: "?.txt", match: []string{"a.txt"}, miss: []string{"ab.txt", "/.txt"}},
		{glob: "[abc].md", match: []string{"a.md", "c.md"}, miss: []string{"d.md"}},
		{glob: "[!abc].md", match: []string{"d.md"}, miss: []string{"a.md", "/.md"}},
		{glob: "[^a-y].md", match: []string{"z.md"}, miss: []string{"b.md"}},
		{glob: "[]x].md", match: []string{"].md", "x.md"}, miss: []string{"y.md"}},
		{glob: "[a-].md", match: []string{"a.md", "-.md"}, miss: []string{"b.md"}},
		{glob: "[.md", match: []string{"[.md"}},
		{glob: `\*.md`, match: []string{"*.md"}, miss: []string{"a.md"}},
		{glob: "a+b(c).{x}", match: []string{"a+b(c).{x}"}, miss: []string{"aab(c).{x}"}},
		{glob: "**/foo", match: []string{"foo", "a/foo", "a/b/foo"}, miss: []string{"afoo", "foo/a"}},
		{glob: "a/**/b", match: []string{"a/b", "a/x/b", "a/x/y/b"}, miss: []string{"ab", "a/xb", "x/a/b"}},
		{glob: "a/**", match: []string{"a/x", "a/x/y"}, miss: []string{"a", "b/x"}},
		{glob: "**", match: []string{"a", "a/b"}},
		{glob: "a**b", match: []string{"ab", "axxb"}, miss: []string{"a/b"}},
		{glob: "é?", match: []string{"éa", "éé"}, miss: []string{"é"}},
	}
	for _, tt := range tests {
		re, err := globRegexp(tt.glob)
		if err != nil {
			t.Errorf("globRegexp(%q): %v", tt.glob, err)
			continue
		}
		for _, s := range tt.match {
			if !re.MatchString(s) {
				t.Errorf("%q (%s) does not match %q", tt.glob, re, s)
			}
		}
		for _, s := range tt.miss {
			if re.MatchString(s) {
				t.Errorf("%q (%s) matches %q", tt.glob, re, s)
			}
		}
	}
}

func TestIgnorer(t *testing.T) {
	ig := &ignorer{rules: map[string][]ignoreRule{
		".": parseIgnore([]byte(`# comment

*.log
!keep.log
build/
/top.txt
doc/*.txt
\#hash
\!bang
trailing   
escaped\ 
**/gen/**
a/**/z
*.tmp` + "\r\n")),
		"sub":       parseIgnore([]byte("!*.log\n/anchored\n*.local\nout/\n")),
		"sub/inner": parseIgnore([]byte("*.local\n!keep.local\n")),
	}}
	tests := []struct {
		path string
		dir  bool
		want bool
	}{
		{"a.log", false, true},
		{"x/y/b.log", false, true},
		{"a.log.txt", false, false},
		{"keep.log", false, false},
		{"x/keep.log", false, false},
		{"build", true, true},
		{"x/build", true, true},
		{"build", false, false},
		{"top.txt", false, true},
		{"x/top.txt", false, false},
		{"doc/a.txt", false, true},
		{"doc/x/a.txt", false, false},
		{"x/doc/a.txt", false, false},
		{"#hash", false, true},
		{"!bang", false, true},
		{"bang", false, false},
		{"# comment", false, false},
		{"trailing", false, true},
		{"escaped ", false, true},
		{"escaped", false, false},
		{"x/gen/y.go", false, true},
		{"gen/y.go", false, true},
		{"a/z", false, true},
		{"a/b/c/z", false, true},
		{"b/a/z", false, false},
		{"x.tmp", false, true},
		// sub/.gitignore overrides the root for its subtree only.
		{"sub/a.log", false, false},
		{"sub/deeper/a.log", false, false},
		{"other/a.log", false, true},
		{"sub/anchored", false, true},
		{"sub/x/anchored", false, false},
		{"anchored", false, false},
		{"sub/out", true, true},
		{"sub/out", false, false},
		{"sub/a.local", false, true},
		{"a.local", false, false},
		{"sub/inner/keep.local", false, false},
		{"sub/inner/x.local", false, true},
		{"sub/x.tmp", false, true},
	}
	for _, tt := range tests {
		if got := ig.ignored(tt.path, tt.dir); got != tt.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}

func TestIsBinary(t *testing.T) {
	big := make([]byte, sniffBytes+10)
	for i := range big {
		big[i] = 'a'
	}
	copy(big[sniffBytes-1:], "é") // a character cut by the sniff window
	tests := []struct {
		data  string
		atEOF bool
		want  bool
	}{
		{"plain text\n", true, false},
		{"", true, false},
		{"nul\x00", true, true},
		{"caf\xe9", true, true},
		{"caf\xc3", true, true},
		{"caf\xc3", false, false},
		{string(big), false, false},
		{string(big[:sniffBytes]), false, false},
	}
	for _, tt := range tests {
		if got := isBinary([]byte(tt.data), tt.atEOF); got != tt.want {
			t.Errorf("isBinary(%.20q, %v) = %v, want %v", tt.data, tt.atEOF, got, tt.want)
		}
	}
	nulLate := string(big) + "\x00"
	if isBinary([]byte(nulLate), true) {
		t.Errorf("a NUL after the first 8 KiB counts")
	}
}
