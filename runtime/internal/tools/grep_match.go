package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// searcher finds matching lines in a file's contents. It is immutable and
// shared by the workers.
//
// Strategy, fastest first: a pattern that is a plain case-sensitive string
// is searched with a rare-byte memchr and needs no regexp; otherwise a
// literal every match must contain (the longest one found in the parsed
// pattern; lower-cased under ignore_case) finds candidate lines, and the
// regexp only checks those; with no usable literal, the pattern in
// multi-line mode scans the whole file to jump to candidate lines.
type searcher struct {
	// lit, when non-nil, is a literal that every matching line contains.
	lit []byte
	// fold means lit is lower-case ASCII and is searched in a lower-cased
	// copy of the data.
	fold bool
	// exact means a line contains lit if and only if it matches.
	exact bool
	// rare is the index in lit of its least common byte, searched first.
	rare int
	// line is the pattern as given, matched against one line at a time; it
	// decides every match unless exact.
	line *regexp.Regexp
	// scan, when non-nil, is the pattern in multi-line mode, run over the
	// whole file when there is no lit. It may match where line does not (a
	// match spanning lines) but never misses a line that line matches.
	scan *regexp.Regexp
}

func newSearcher(pattern string, literal, ignoreCase bool) (*searcher, error) {
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	flags := ""
	if ignoreCase {
		flags = "(?i)"
	}
	line, err := regexp.Compile(flags + expr)
	if err != nil {
		return nil, err
	}
	s := &searcher{line: line}
	if prefix, complete := line.LiteralPrefix(); complete && prefix != "" {
		s.lit, s.exact = []byte(prefix), true
		s.rare = rarestByte(s.lit)
		return s, nil
	}
	// Parsed in multi-line mode so that ^ and $ are line anchors and only
	// \A and \z remain text anchors.
	re, err := syntax.Parse("(?m)"+flags+expr, syntax.Perl)
	if err != nil {
		return s, nil // compiled above, so this does not happen
	}
	re = re.Simplify()
	if lit, fold := requiredLiteral(re); len(lit) >= 2 {
		s.lit, s.fold = []byte(lit), fold
		s.rare = rarestByte(s.lit)
		return s, nil
	}
	// \A and \z mean line start and end to line but file start and end in
	// a whole-file scan; with them the scan could miss lines, so go line by
	// line instead.
	if !hasTextAnchor(re) {
		s.scan, _ = regexp.Compile("(?m)" + flags + expr)
	}
	return s, nil
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if hasTextAnchor(sub) {
			return true
		}
	}
	return false
}

// requiredLiteral returns the longest literal that every match of re must
// contain, and whether it is to be matched case-insensitively (then it is
// lower-case ASCII). It returns "" when it finds none it can use.
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune), false
		}
		// Folded: a rune is usable when it folds only within ASCII, so
		// that byte-wise lower-casing finds all its case variants (this
		// excludes k and s, which fold to the Kelvin sign and the long s).
		// The longest run of usable runes is required too.
		var best, run []byte
		for _, r := range re.Rune {
			if !asciiFoldOnly(r) {
				run = run[:0]
				continue
			}
			run = append(run, byte(unicode.ToLower(r)))
			if len(run) > len(best) {
				best = append(best[:0], run...)
			}
		}
		return string(best), true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, sub := range re.Sub {
			if lit, fold := requiredLiteral(sub); len(lit) > len(best) {
				best, bestFold = lit, fold
			}
		}
		return best, bestFold
	}
	return "", false
}

// asciiFoldOnly reports whether r and every rune it case-folds to are
// ASCII.
func asciiFoldOnly(r rune) bool {
	for f := r; ; {
		if f >= utf8.RuneSelf {
			return false
		}
		if f = unicode.SimpleFold(f); f == r {
			return true
		}
	}
}

// rarestByte returns the index of the byte of lit least likely to occur in
// source code and prose, so that memchr on it stops at few false
// candidates.
func rarestByte(lit []byte) int {
	best, bestRank := 0, 1<<30
	for i, c := range lit {
		if r := byteRank(c); r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// byteRank is a rough frequency rank of a byte in text: higher is more
// common.
func byteRank(c byte) int {
	const letters = "etaoinsrhldcumfpgwybvkxjqz"
	switch {
	case c == ' ':
		return 300
	case c >= 'a' && c <= 'z':
		return 250 - 4*strings.IndexByte(letters, c)
	case c == '\n' || c == '\t':
		return 200
	case strings.IndexByte(".,;:()_\"'=-/{}*#<>[]", c) >= 0:
		return 120
	case c >= 'A' && c <= 'Z':
		return 100 - 2*strings.IndexByte(letters, c+'a'-'A')
	case c >= '0' && c <= '9':
		return 60
	}
	return 10
}

// index returns the first index of s.lit in h, or -1, by looking for the
// literal's rarest byte with memchr and checking the rest around it.
func (s *searcher) index(h []byte) int {
	n, k := len(s.lit), s.rare
	c := s.lit[k]
	for i := 0; i+n <= len(h); {
		j := bytes.IndexByte(h[i+k:len(h)-n+k+1], c)
		if j < 0 {
			return -1
		}
		at := i + j
		if bytes.Equal(h[at:at+n], s.lit) {
			return at
		}
		i = at + 1
	}
	return -1
}

// lowerASCII appends data with ASCII letters lower-cased to dst; other
// bytes, including those of multi-byte characters, are unchanged, so
// offsets in the copy are offsets in data.
func lowerASCII(dst, data []byte) []byte {
	dst = slices.Grow(dst[:0], len(data))[:len(data)]
	for i, c := range data {
		if c-'A' < 26 {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}

// lineMatch is a matching line: its number and its bounds in the data.
type lineMatch struct {
	num        int
	start, end int
}

// find returns up to limit matching lines of data. low is scratch space
// for the lower-cased copy a folded literal needs.
func (s *searcher) find(data []byte, limit int, low *[]byte) []lineMatch {
	var out []lineMatch
	if len(data) == 0 || s.lit != nil && bytes.IndexByte(s.lit, '\n') >= 0 {
		return nil // no lines, or no single line can hold a newline
	}
	hay := data
	if s.fold {
		*low = lowerASCII(*low, data)
		hay = *low
	}
	pos, num := 0, 1 // num is the number of the line holding pos
	for pos <= len(data) && len(out) < limit {
		var at int
		switch {
		case s.lit != nil:
			at = s.index(hay[pos:])
		case s.scan != nil:
			loc := s.scan.FindIndex(data[pos:])
			at = -1
			if loc != nil {
				at = loc[0]
			}
		default:
			at = 0 // test every line
		}
		if at < 0 {
			break
		}
		at += pos
		start := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		num += bytes.Count(data[pos:start], []byte{'\n'})
		end := len(data)
		if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
			end = at + i
		}
		if start == len(data) {
			break // past the final newline: not a line
		}
		if s.exact || s.line.Match(data[start:end]) {
			out = append(out, lineMatch{num: num, start: start, end: end})
		}
		pos, num = end+1, num+1
	}
	return out
}
