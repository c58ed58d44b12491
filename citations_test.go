package octethost

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The code cites the repository's own documents: "CONTRACT §N" is a section
// of spec/CONTRACT.md, "DESIGN §N" one of spec/DESIGN.md, and "DESIGN §3
// item N" a numbered habit of that section. Lists ("§9, §12", "§8 and
// §11"), ranges ("§2–§5", "§3-5"), subsections ("§9.1", for numbered
// "### 9.1." headings) and a citation broken across comment lines
// ("CONTRACT\n// §8") are all citations. TestCitationsResolve fails when
// one names a section or item the document does not have.

// docs are the cited documents, by the name the code cites them with.
var docs = map[string]string{
	"CONTRACT": "spec/CONTRACT.md",
	"DESIGN":   "spec/DESIGN.md",
}

// outline is what a document offers to citations: its numbered sections
// ("## 12. Recovery" is "12", "### 9.1. Tools" is "9.1") and the numbered
// list items under each section ("3" → {1, …, 13}).
type outline struct {
	sections map[string]bool
	items    map[string]map[int]bool
}

var (
	headingRE = regexp.MustCompile(`^#{2,4} (\d+(?:\.\d+)*)\.? `)
	itemRE    = regexp.MustCompile(`^(\d+)\. `)
)

func parseOutline(text string) outline {
	o := outline{sections: map[string]bool{}, items: map[string]map[int]bool{}}
	var cur string
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			cur = m[1]
			o.sections[cur] = true
			continue
		}
		if m := itemRE.FindStringSubmatch(line); m != nil && cur != "" {
			n, _ := strconv.Atoi(m[1])
			if o.items[cur] == nil {
				o.items[cur] = map[int]bool{}
			}
			o.items[cur][n] = true
		}
	}
	return o
}

// citation is one cited section (or item) at a place in a file.
type citation struct {
	doc, section string
	item         int // 0: none
	file         string
	line         int
	text         string // as written, for the message
}

var (
	// docNameRE finds a document name; the citation itself follows it.
	docNameRE = regexp.MustCompile(`\b(CONTRACT|DESIGN)\b`)
	// continuationRE joins a citation broken across comment lines.
	continuationRE = regexp.MustCompile(`\s*\n[ \t]*(?://+|#+|\\\*|\*)?[ \t]*`)
	// citeRE reads the citation right after the document name.
	citeRE  = regexp.MustCompile(`^(?:\.md)?[ \t]+(§\d+(?:\.\d+)*(?:[ \t]*(?:[–-][ \t]*§?|,[ \t]*§|[ \t]and[ \t]+§)\d+(?:\.\d+)*)*)(?:[ \t]+item[ \t]+(\d+))?`)
	partRE  = regexp.MustCompile(`(,|and|[–-])?[ \t]*§?(\d+(?:\.\d+)*)`)
	bareRE  = regexp.MustCompile(`§(\d+(?:\.\d+)*(?:[ \t]*(?:[–-][ \t]*§?|,[ \t]*§|[ \t]and[ \t]+§)\d+(?:\.\d+)*)*)`)
	otherRE = regexp.MustCompile(`\b(?:CONTRACT|DESIGN)(?:\.md)?[ \t]*$`)
)

// expand turns "§2–§5" into 2, 3, 4, 5 and "§9, §12" into 9, 12. A range
// runs between top-level section numbers only.
func expand(list string) ([]string, error) {
	var out []string
	for _, m := range partRE.FindAllStringSubmatch(list, -1) {
		sep, num := m[1], m[2]
		if sep == "–" || sep == "-" {
			if len(out) == 0 {
				return nil, fmt.Errorf("range without a start in %q", list)
			}
			from, err1 := strconv.Atoi(out[len(out)-1])
			to, err2 := strconv.Atoi(num)
			if err1 != nil || err2 != nil || to <= from {
				return nil, fmt.Errorf("bad range in %q", list)
			}
			for n := from + 1; n <= to; n++ {
				out = append(out, strconv.Itoa(n))
			}
			continue
		}
		out = append(out, num)
	}
	return out, nil
}

// findCitations returns the citations in text. Inside a cited document
// itself, a bare "§N" not preceded by another document's name cites that
// document (self is its name, "" for other files).
func findCitations(file, text, self string) ([]citation, error) {
	lineAt := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	var out []citation
	for _, loc := range docNameRE.FindAllStringSubmatchIndex(text, -1) {
		doc := text[loc[2]:loc[3]]
		tailEnd := min(len(text), loc[1]+300)
		tail := continuationRE.ReplaceAllString(text[loc[1]:tailEnd], " ")
		m := citeRE.FindStringSubmatch(tail)
		if m == nil {
			continue
		}
		secs, err := expand(m[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, lineAt(loc[0]), err)
		}
		item := 0
		if m[2] != "" {
			item, _ = strconv.Atoi(m[2])
		}
		for _, s := range secs {
			out = append(out, citation{doc: doc, section: s, item: item, file: file, line: lineAt(loc[0]), text: doc + strings.TrimPrefix(m[0], ".md")})
		}
	}
	if self == "" {
		return out, nil
	}
	for _, loc := range bareRE.FindAllStringSubmatchIndex(text, -1) {
		// A list right after a document's name was read above.
		if otherRE.MatchString(continuationRE.ReplaceAllString(text[max(0, loc[0]-40):loc[0]], " ")) {
			continue
		}
		secs, err := expand(text[loc[0]:loc[1]])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, lineAt(loc[0]), err)
		}
		for _, s := range secs {
			out = append(out, citation{doc: self, section: s, file: file, line: lineAt(loc[0]), text: text[loc[0]:loc[1]]})
		}
	}
	return out, nil
}

// scanned reports whether a file can hold citations worth checking.
func scanned(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".txt", ".txtar", ".mjs", ".tla", ".cfg", ".yaml", ".yml", ".sh", ".py", ".ts", ".js":
		return true
	}
	return filepath.Dir(path) == "scripts" || filepath.Base(path) == "Containerfile"
}

func TestCitationsResolve(t *testing.T) {
	outlines := map[string]outline{}
	for name, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (the repository carries its own %s)", path, err, name)
		}
		outlines[name] = parseOutline(string(b))
		if len(outlines[name].sections) == 0 {
			t.Fatalf("%s has no numbered sections", path)
		}
	}
	selfOf := map[string]string{}
	for name, path := range docs {
		selfOf[path] = name
	}
	count := map[string]int{}
	keep := func(path string) bool {
		return scanned(path) && path != "citations_test.go" // its examples are not citations
	}
	scanFiles(t, keep, func(path, text string) {
		cites, err := findCitations(path, text, selfOf[path])
		if err != nil {
			t.Error(err)
			return
		}
		for _, c := range cites {
			count[c.doc]++
			o := outlines[c.doc]
			if !o.sections[c.section] {
				t.Errorf("%s:%d: %q cites %s §%s, which %s does not have", c.file, c.line, c.text, c.doc, c.section, docs[c.doc])
				continue
			}
			if c.item > 0 && !o.items[c.section][c.item] {
				t.Errorf("%s:%d: %q cites item %d of %s §%s, which has no such item", c.file, c.line, c.text, c.item, c.doc, c.section)
			}
		}
	})
	// The code cites both documents well over a hundred times in all; a
	// scan that finds few has stopped reading them.
	if count["CONTRACT"] < 100 || count["DESIGN"] < 15 {
		t.Errorf("found %d CONTRACT and %d DESIGN citations; the scanner is missing them", count["CONTRACT"], count["DESIGN"])
	}
}

// TestCitationParsing pins the forms the scanner understands, including
// the ones it must not read as citations.
func TestCitationParsing(t *testing.T) {
	for _, tt := range []struct {
		text, self string
		want       []string // doc§section[#item]
	}{
		{"// see CONTRACT §12.", "", []string{"CONTRACT§12"}},
		{"(CONTRACT §9, §12)", "", []string{"CONTRACT§9", "CONTRACT§12"}},
		{"CONTRACT §8 and §11", "", []string{"CONTRACT§8", "CONTRACT§11"}},
		{"(CONTRACT §2–§5): requests", "", []string{"CONTRACT§2", "CONTRACT§3", "CONTRACT§4", "CONTRACT§5"}},
		{"CONTRACT §3-5", "", []string{"CONTRACT§3", "CONTRACT§4", "CONTRACT§5"}},
		{"CONTRACT §9.1 says", "", []string{"CONTRACT§9.1"}},
		{"(CONTRACT\n\t// §10): the policy", "", []string{"CONTRACT§10"}},
		{"# CONTRACT\n# §14 in a script", "", []string{"CONTRACT§14"}},
		{"(CONTRACT §12; DESIGN §2)", "", []string{"CONTRACT§12", "DESIGN§2"}},
		{"ours (DESIGN §3 item 11) and", "", []string{"DESIGN§3#11"}},
		{"CONTRACT.md §10", "", []string{"CONTRACT§10"}},
		{"CONTRACT §5: messages ≤ 1 KiB, 2 more", "", []string{"CONTRACT§5"}},
		{"the CONTRACT says so; DESIGN is a file", "", nil},
		{"a bare §7 in code", "", nil},
		{"mapped in §15 and §8, see DESIGN §2", "CONTRACT", []string{"DESIGN§2", "CONTRACT§15", "CONTRACT§8"}},
	} {
		cites, err := findCitations("x", tt.text, tt.self)
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		var got []string
		for _, c := range cites {
			s := c.doc + "§" + c.section
			if c.item > 0 {
				s += "#" + strconv.Itoa(c.item)
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: citations %q, want %q", tt.text, got, tt.want)
		}
	}
	if _, err := findCitations("x", "CONTRACT §5–§3", ""); err == nil {
		t.Error("a backwards range was accepted")
	}
	o := parseOutline("# T\n## 1. One\n1. a\n2. b\n```\n## 7. in a fence\n```\n### 1.2. Sub\n## 3 Three\n")
	for _, s := range []string{"1", "1.2", "3"} {
		if !o.sections[s] {
			t.Errorf("outline lacks section %s: %v", s, o.sections)
		}
	}
	if o.sections["7"] || !o.items["1"][2] || o.items["1"][3] {
		t.Errorf("outline: sections %v, items %v", o.sections, o.items)
	}
}

// The README and the topic documents under docs/ link to each other, to
// their sections ("protocol.md#event-types") and to files of the
// repository. TestDocLinksResolve fails when a relative link names a file
// that does not exist or a section its document does not have.

var (
	// mdLinkRE finds a Markdown link's target: [text](target).
	mdLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// mdHeadingRE finds a heading of any level.
	mdHeadingRE = regexp.MustCompile(`^#{1,6}[ \t]+(.*?)[ \t]*#*$`)
	// slugDropRE is what a heading's anchor drops: everything but letters,
	// digits, spaces, hyphens and underscores (GitHub's rule).
	slugDropRE = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchors returns the section anchors of a Markdown document as GitHub
// names them: the heading lower-cased, punctuation dropped, spaces as
// hyphens, and "-1", "-2", … after a repeated one.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		m := mdHeadingRE.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		a := strings.ReplaceAll(slugDropRE.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// links returns the relative link targets of a Markdown document outside
// its code blocks, with the line each is on.
func links(text string) (targets []string, lines []int) {
	inFence := false
	n := 0
	for line := range strings.Lines(text) {
		n++
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
			t := m[1]
			if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			targets, lines = append(targets, t), append(lines, n)
		}
	}
	return targets, lines
}

func TestDocLinksResolve(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		targets, lines := links(string(b))
		for i, target := range targets {
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: %v", file, lines[i], target, err)
					continue
				}
			}
			checked++
			if frag == "" {
				continue
			}
			if filepath.Ext(dest) != ".md" {
				t.Errorf("%s:%d: link %q names a section of a file that is not Markdown", file, lines[i], target)
				continue
			}
			db, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", file, lines[i], target, err)
				continue
			}
			if !anchors(string(db))[frag] {
				t.Errorf("%s:%d: link %q: %s has no section #%s", file, lines[i], target, dest, frag)
			}
		}
	}
	// The README alone links to every topic document; a check that finds
	// few links has stopped reading them.
	if checked < 30 {
		t.Errorf("checked %d links; the scanner is missing them", checked)
	}
}

func TestAnchors(t *testing.T) {
	got := anchors("# Title\n## The `octet` CLI: print mode and RPC mode\n```\n## not a heading\n```\n### Run error codes (`final_result.data.error.code`)\n## Dup\n## Dup\n")
	for _, want := range []string{"title", "the-octet-cli-print-mode-and-rpc-mode", "run-error-codes-final_resultdataerrorcode", "dup", "dup-1"} {
		if !got[want] {
			t.Errorf("anchors lack %q: %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a code block was read as a heading")
	}
}
