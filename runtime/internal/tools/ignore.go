package tools

import (
	"bytes"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"octet.dev/host/runtime/internal/confine"
)

// globRegexp translates a glob to an anchored regular expression over
// slash-separated paths. "*" matches any run of characters other than "/",
// "?" one such character, "[…]" a class ("[!…]" or "[^…]" negated; never
// "/"), and "\" quotes the next character. "**" as a whole path element
// matches any number of elements: "**/x" matches x at any depth, "a/**"
// everything inside a, "a/**/b" b at any depth below a. A "**" inside an
// element acts like "*". These are the rules of gitignore(5).
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); {
		c := glob[i]
		switch c {
		case '*':
			j := i
			for j < len(glob) && glob[j] == '*' {
				j++
			}
			elemStart := i == 0 || glob[i-1] == '/'
			elemEnd := j == len(glob) || glob[j] == '/'
			switch {
			case j-i >= 2 && elemStart && j == len(glob):
				b.WriteString(".*")
			case j-i >= 2 && elemStart && elemEnd:
				b.WriteString("(?:.*/)?")
				j++ // the slash is part of the optional group
			default:
				b.WriteString("[^/]*")
			}
			i = j
		case '?':
			b.WriteString("[^/]")
			i++
		case '[':
			if class, n := globClass(glob[i:]); n > 0 {
				b.WriteString(class)
				i += n
			} else {
				b.WriteString(`\[`)
				i++
			}
		case '\\':
			if i+1 < len(glob) {
				_, size := utf8.DecodeRuneInString(glob[i+1:])
				b.WriteString(regexp.QuoteMeta(glob[i+1 : i+1+size]))
				i += 1 + size
			} else {
				b.WriteString(`\\`)
				i++
			}
		default:
			_, size := utf8.DecodeRuneInString(glob[i:])
			b.WriteString(regexp.QuoteMeta(glob[i : i+size]))
			i += size
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// globClass translates the bracket expression at the start of s. It
// returns the regexp class and the number of bytes of s it used, or 0 when
// s has no closing "]" (the "[" is then literal).
func globClass(s string) (string, int) {
	i := 1
	var b strings.Builder
	b.WriteString("[")
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteString("^/")
		i++
	}
	first := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == ']' && !first:
			b.WriteString("]")
			return b.String(), i + 1
		case c == '\\' && i+1 < len(s):
			i++
			c = s[i]
			fallthrough
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case c == '-' && !first && i+1 < len(s) && s[i+1] != ']':
				b.WriteByte('-')
			case r < utf8.RuneSelf && !isAlnum(byte(r)):
				b.WriteByte('\\')
				b.WriteByte(byte(r))
			default:
				b.WriteString(s[i : i+size])
			}
			i += size
		}
		first = false
	}
	return "", 0
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// matcher matches a glob against a path: against the base name when the
// glob has no "/" (so "*.go" finds Go files at any depth), else against the
// whole path (a leading "/" or "./" is dropped).
type matcher struct {
	re       *regexp.Regexp
	basename bool
}

func newMatcher(glob string) (*matcher, error) {
	g := strings.TrimPrefix(strings.TrimPrefix(glob, "./"), "/")
	re, err := globRegexp(g)
	if err != nil {
		return nil, err
	}
	return &matcher{re: re, basename: !strings.Contains(g, "/")}, nil
}

func (m *matcher) match(rel string) bool {
	if m.basename {
		return m.re.MatchString(path.Base(rel))
	}
	return m.re.MatchString(rel)
}

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	re       *regexp.Regexp
	negate   bool // "!pattern": re-include
	dirOnly  bool // "pattern/": directories only
	anchored bool // contains "/": relative to the .gitignore's directory
}

// parseIgnore parses a .gitignore file: blank lines and "#" comments are
// skipped, "\#" and "\!" quote a leading character, unquoted trailing spaces
// are dropped, "!" negates, a trailing "/" restricts the rule to
// directories, and a "/" elsewhere anchors it to the file's directory (an
// unanchored rule matches the base name at any depth). Lines that do not
// compile are skipped, as git skips them.
func parseIgnore(data []byte) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		r.anchored = strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		re, err := globRegexp(line)
		if err != nil {
			continue
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules
}

// maxIgnoreFileBytes bounds the .gitignore files that are read.
const maxIgnoreFileBytes = 1 << 20

// ignorer applies the .gitignore files of a tree (CONTRACT §10 grep/find).
// A file applies to its directory's subtree; a deeper file's matching rule
// beats a shallower one's, and within a file the last matching rule wins.
// An ignored directory is not entered, so, as in git, nothing inside it can
// be re-included. The repository's .git/info/exclude and the user's global
// excludes are not read. An ignorer is used by one goroutine.
type ignorer struct {
	root  *confine.Root
	rules map[string][]ignoreRule // by workspace-relative directory
}

func newIgnorer(root *confine.Root) *ignorer {
	return &ignorer{root: root, rules: map[string][]ignoreRule{}}
}

// load reads dir/.gitignore, if it is a regular file of sensible size.
// Called for the start of a search's ancestors and for each directory the
// walk enters, before its entries.
func (ig *ignorer) load(dir string) {
	name := ".gitignore"
	if dir != "." {
		name = dir + "/.gitignore"
	}
	f, fi, err := ig.root.OpenRegular(name)
	if err != nil {
		return
	}
	defer f.Close()
	if fi.Size() > maxIgnoreFileBytes {
		return
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return
	}
	if rules := parseIgnore(buf.Bytes()); len(rules) > 0 {
		ig.rules[dir] = rules
	}
}

// loadAncestors loads the .gitignore files of the directories above rel
// (not of rel itself), so that a search starting in a subdirectory obeys
// the files of its parents.
func (ig *ignorer) loadAncestors(rel string) {
	if rel == "." {
		return
	}
	dir := path.Dir(rel)
	for {
		ig.load(dir)
		if dir == "." {
			return
		}
		dir = path.Dir(dir)
	}
}

// ignored reports whether the workspace-relative path rel is ignored.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	if len(ig.rules) == 0 {
		return false
	}
	base := path.Base(rel)
	for dir := path.Dir(rel); ; dir = path.Dir(dir) {
		if rules := ig.rules[dir]; rules != nil {
			sub := rel
			if dir != "." {
				sub = rel[len(dir)+1:]
			}
			for i := len(rules) - 1; i >= 0; i-- {
				r := &rules[i]
				if r.dirOnly && !isDir {
					continue
				}
				target := base
				if r.anchored {
					target = sub
				}
				if r.re.MatchString(target) {
					return !r.negate
				}
			}
		}
		if dir == "." {
			return false
		}
	}
}
