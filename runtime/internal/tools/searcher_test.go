package tools

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// naiveFind is the definition find must agree with: split into lines (a
// final newline ends the last line) and match each line on its own.
func naiveFind(re *regexp.Regexp, data string, limit int) []int {
	if data == "" {
		return nil
	}
	var out []int
	for i, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		if len(out) == limit {
			break
		}
		if re.MatchString(line) {
			out = append(out, i+1)
		}
	}
	return out
}

func TestSearcherStrategy(t *testing.T) {
	tests := []struct {
		pattern             string
		literal, ignoreCase bool
		lit                 string
		fold, exact, scan   bool
	}{
		{pattern: "needle", lit: "needle", exact: true},
		{pattern: "a.b", literal: true, lit: "a.b", exact: true},
		{pattern: "NeedLE", ignoreCase: true, lit: "needle", fold: true},
		{pattern: "kelvin", ignoreCase: true, lit: "elvin", fold: true},
		{pattern: `func [A-Z][a-z]+Handler\(`, lit: "Handler(", fold: false},
		{pattern: `^\s*return (nil|err)$`, lit: "return ", fold: false},
		{pattern: `(foo|bar)baz+`, lit: "ba"},
		{pattern: `[0-9]+`, scan: true},
		{pattern: `\Afoo|bar\z`, scan: false},
	}
	for _, tt := range tests {
		s, err := newSearcher(tt.pattern, tt.literal, tt.ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		if string(s.lit) != tt.lit || s.fold != tt.fold || s.exact != tt.exact || (s.scan != nil) != tt.scan {
			t.Errorf("newSearcher(%q, %v, %v) = lit %q fold %v exact %v scan %v", tt.pattern, tt.literal, tt.ignoreCase,
				s.lit, s.fold, s.exact, s.scan != nil)
		}
	}
}

// TestSearcherAgreesWithNaive checks every strategy against matching each
// line on its own, on text built from characters that stress them: case
// variants (including the Kelvin sign and the long s, which fold to k and
// s), newlines and CRs, and multi-byte characters.
func TestSearcherAgreesWithNaive(t *testing.T) {
	patterns := []struct {
		p                   string
		literal, ignoreCase bool
	}{
		{"ab", false, false}, {"ab", false, true}, {"ks", false, true}, {"sk", true, true},
		{"a.b", true, false}, {"a.b", false, false}, {"^ab", false, false}, {"b$", false, false},
		{`\Aa`, false, false}, {`b\z`, false, false}, {`a\sb`, false, false}, {"(?s)a.b", false, false},
		{"a+b+k", false, true}, {"(ab|ba)K", false, true}, {"é", false, true}, {"É", false, true},
		{"^$", false, false}, {"x*", false, false}, {`\bab\b`, false, false}, {"[^a]b", false, false},
		{"ab\nb", true, false}, {"abc", false, false}, {"A.?B", false, true},
	}
	rapid.Check(t, func(t *rapid.T) {
		pc := rapid.SampledFrom(patterns).Draw(t, "pattern")
		alphabet := []string{"a", "b", "A", "B", "k", "K", "\u212a", "s", "S", "\u017f", "\n", "\r", " ", "é", "É", "x", "c"}
		parts := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 60).Draw(t, "text")
		data := strings.Join(parts, "")
		limit := rapid.IntRange(1, 10).Draw(t, "limit")
		s, err := newSearcher(pc.p, pc.literal, pc.ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		var low []byte
		var got []int
		for _, m := range s.find([]byte(data), limit, &low) {
			got = append(got, m.num)
			if line := data[m.start:m.end]; strings.Contains(line, "\n") {
				t.Fatalf("match bounds %d:%d span a newline", m.start, m.end)
			}
		}
		want := naiveFind(s.line, data, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %q (literal %v, ignore case %v) on %q: find = %v, naive = %v",
				pc.p, pc.literal, pc.ignoreCase, data, got, want)
		}
	})
}
