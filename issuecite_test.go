package octethost

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The code and the documents speak of the project itself: a comment or a
// document never cites the number of a tracker issue ("issue 10", "issue
// #10", "issues 10 and 11", a citation broken across comment lines). What
// a rule is for belongs in the text, and the contract's sections are cited
// as "CONTRACT §N" (citations_test.go). A link to another project's bug
// ("go.dev/issue/75804") is not such a citation.

// issueCiteRE finds an issue-number citation; a comment's line break
// ("issue\n\t// 10") is part of the gap.
var issueCiteRE = regexp.MustCompile(`(?i)\bissues?(?:[ \t]|\n[ \t]*(?://+|\*)?[ \t]*)+#?[0-9]+\b|\bissue[ \t]*#[0-9]+\b`)

// issueScanned reports whether the rule applies to path: every Go file,
// the README and the topic documents under docs/.
func issueScanned(path string) bool {
	switch {
	case filepath.Ext(path) == ".go":
		return true
	case path == "README.md":
		return true
	case filepath.Dir(path) == "docs" && filepath.Ext(path) == ".md":
		return true
	}
	return false
}

func TestNoIssueCitations(t *testing.T) {
	keep := func(path string) bool {
		return issueScanned(path) && path != "issuecite_test.go" // its examples are not citations
	}
	scanned := scanFiles(t, keep, func(path, text string) {
		for _, loc := range issueCiteRE.FindAllStringIndex(text, -1) {
			line := strings.Count(text[:loc[0]], "\n") + 1
			t.Errorf("%s:%d: %q cites an issue number; say what the rule is instead", path, line, text[loc[0]:loc[1]])
		}
	})
	if scanned < 300 {
		t.Errorf("scanned %d files; the walk is missing them", scanned)
	}
}

// TestIssueCitationForms pins what the scan finds and what it leaves.
func TestIssueCitationForms(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"// the hostile shapes (issue 10, item 16)", true},
		{"// see Issue #7", true},
		{"issue#7", true},
		{"(issues 10 and 11)", true},
		{"// a gate for every run (issue\n\t// 11 §6)", true},
		{"  * (issue\n  * 4)", true},
		{"<!-- issue 12 -->", true},
		{"go.dev/issue/75804", false},
		{"a discovery_truncated issue counting 3 models", false},
		{"toolu_issue8112_custom", false},
		{"the Issue\n// messages are sanitized", false},
		{"RayBytes/ChatMock#103", false},
	} {
		if got := issueCiteRE.MatchString(tt.text); got != tt.want {
			t.Errorf("%q: found %v, want %v", tt.text, got, tt.want)
		}
	}
}
