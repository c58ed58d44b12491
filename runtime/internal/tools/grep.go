package tools

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"octet.dev/host/runtime/internal/confine"
)

var grepTool = &tool{
	name:   "grep",
	effect: EffectWorkspaceRead,
	description: "Search file contents in the workspace for a regular expression (RE2 syntax) or, with literal, a plain string. " +
		"Prints path:line:text for each matching line, sorted by path (context lines as path-line-text, groups separated by --). " +
		"Skips .git, binary files, files ignored by .gitignore files, and symbolic links. Lines longer than 500 bytes are cut.",
	params: []param{
		{name: "pattern", kind: kindString, required: true, nonEmpty: true,
			description: "Regular expression (RE2 syntax), matched against each line; or a plain string when literal is true."},
		{name: "path", kind: kindString, path: true,
			description: "File or directory to search, relative to the workspace root. Default: the workspace root."},
		{name: "glob", kind: kindString,
			description: "Only search files whose name matches this glob, e.g. \"*.go\" (a glob with \"/\" is matched against the workspace-relative path)."},
		{name: "ignore_case", kind: kindBoolean,
			description: "Match case-insensitively. Default false."},
		{name: "literal", kind: kindBoolean,
			description: "Treat pattern as a plain string, not a regular expression. Default false."},
		{name: "context", kind: kindInteger, min: 0,
			description: "Number of lines of context to show before and after each match. Default 0."},
		{name: "limit", kind: kindInteger, min: 1,
			description: "Maximum number of matching lines to report. Default 200."},
	},
	run: runGrep,
}

const (
	// grepLineBytes bounds each line grep prints.
	grepLineBytes = 500
	// grepMaxFileBytes is the largest file grep reads; larger ones are
	// skipped and counted.
	grepMaxFileBytes = 32 << 20
	// grepKeepBufBytes is the largest read buffer a worker keeps between
	// files.
	grepKeepBufBytes = 4 << 20
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

// fileHits is what a worker found in one file.
type fileHits struct {
	rel     string
	matches []lineMatch // bounds refer to data, which is not kept
	lines   map[int]string
	skipped bool // larger than grepMaxFileBytes
}

// collect keeps, for the first limit matches, the matching lines and ctx
// lines around them, so the file's data can be dropped.
func collect(rel string, data []byte, matches []lineMatch, ctx int) *fileHits {
	h := &fileHits{rel: rel, matches: matches, lines: map[int]string{}}
	for _, m := range matches {
		h.lines[m.num] = cleanLine(data[m.start:m.end], grepLineBytes)
		// Context before.
		s := m.start
		for n := m.num - 1; n >= m.num-ctx && s > 0; n-- {
			e := s - 1
			s = bytes.LastIndexByte(data[:e], '\n') + 1
			if _, ok := h.lines[n]; !ok {
				h.lines[n] = cleanLine(data[s:e], grepLineBytes)
			}
		}
		// Context after.
		e := m.end
		for n := m.num + 1; n <= m.num+ctx && e < len(data); n++ {
			s := e + 1
			if s == len(data) {
				break // the final newline ends the file
			}
			e = len(data)
			if i := bytes.IndexByte(data[s:], '\n'); i >= 0 {
				e = s + i
			}
			if _, ok := h.lines[n]; !ok {
				h.lines[n] = cleanLine(data[s:e], grepLineBytes)
			}
		}
	}
	return h
}

// gather orders the workers' results by the walk's sequence numbers and
// cancels the search once the files before the first unfinished one hold
// limit matches: the first limit matches in path order are then known.
type gather struct {
	mu     sync.Mutex
	res    map[int]*fileHits
	next   int // every file before next is done
	count  int // matches in files before next
	limit  int
	full   bool
	cancel context.CancelFunc
}

func (g *gather) done(seq int, h *fileHits) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.res[seq] = h
	for {
		x, ok := g.res[g.next]
		if !ok {
			return
		}
		if x != nil {
			g.count += len(x.matches)
		}
		g.next++
		if g.count >= g.limit && !g.full {
			g.full = true
			g.cancel()
		}
	}
}

type grepJob struct {
	seq int
	rel string
}

func runGrep(ctx context.Context, env Env, a *args) (Result, error) {
	limit, ctxLines := a.int("limit", 200), a.int("context", 0)
	s, err := newSearcher(a.string("pattern", ""), a.bool("literal"), a.bool("ignore_case"))
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return Result{}, invalidArgs("pattern is not a valid RE2 regular expression: %s (use literal=true for a plain string)", truncate(se.Error(), 300))
		}
		return Result{}, invalidArgs("pattern: %s", truncate(err.Error(), 300))
	}
	var glob *matcher
	if g := a.string("glob", ""); g != "" {
		if glob, err = newMatcher(g); err != nil {
			return Result{}, invalidArgs("glob: %s", err)
		}
	}
	root := env.Root
	start, err := root.Rel(a.string("path", "."))
	if err != nil {
		return Result{}, err
	}
	fi, err := root.Stat(start)
	if err != nil {
		return Result{}, err
	}

	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &gather{res: map[int]*fileHits{}, limit: limit, cancel: cancel}

	if !fi.IsDir() {
		// An explicitly named file is searched whatever the ignore rules
		// and the glob say, and a binary one is an error.
		h, err := grepFile(root, s, start, &scratch{}, limit, ctxLines, true)
		if err != nil {
			return Result{}, err
		}
		g.done(0, h)
	} else {
		if err := grepTree(gctx, root, s, glob, start, g, limit, ctxLines); err != nil {
			return Result{}, err
		}
	}
	if ctx.Err() != nil {
		return Result{}, canceled()
	}
	if env.prefix != "" { // a skill folder's files are named by their skill path
		for _, h := range g.res {
			if h != nil {
				h.rel = env.prefix + h.rel
			}
		}
	}
	return Result{}.withOutput(formatGrep(g, limit, ctxLines, env.maxOutput())), nil
}

// grepTree walks start on the calling goroutine and searches its files on
// GOMAXPROCS workers. It returns after every worker has finished.
func grepTree(ctx context.Context, root *confine.Root, s *searcher, glob *matcher, start string, g *gather, limit, ctxLines int) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan grepJob, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var sc scratch
			for j := range jobs {
				var h *fileHits
				if ctx.Err() == nil {
					// Errors (a file removed or replaced since the
					// walk listed it, a binary file) only skip it.
					h, _ = grepFile(root, s, j.rel, &sc, limit, ctxLines, false)
				}
				g.done(j.seq, h)
			}
		})
	}
	ig := newIgnorer(root)
	ig.loadAncestors(start)
	seq := 0
	err := root.Walk(start, func(rel string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			if rel == start {
				return err
			}
			return nil // an unreadable subdirectory is skipped
		}
		if rel != start && (d.Name() == ".git" || ig.ignored(rel, d.IsDir())) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			ig.load(rel)
			return nil
		}
		if !d.Type().IsRegular() || glob != nil && !glob.match(rel) {
			return nil
		}
		select {
		case jobs <- grepJob{seq: seq, rel: rel}:
			seq++
			return nil
		case <-ctx.Done():
			return fs.SkipAll
		}
	})
	close(jobs)
	wg.Wait()
	return err
}

// scratch is a worker's reusable memory.
type scratch struct {
	data, low []byte
}

// grepFile searches one file, reading it into sc (whose buffers are kept
// between files up to grepKeepBufBytes). A nil result with a nil error
// means the file was skipped as binary (explicit reports that as an error
// instead).
func grepFile(root *confine.Root, s *searcher, rel string, sc *scratch, limit, ctxLines int, explicit bool) (*fileHits, error) {
	data, err := root.ReadFileInto(rel, sc.data, grepMaxFileBytes)
	if errors.Is(err, confine.ErrTooLarge) {
		return &fileHits{rel: rel, skipped: true}, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if cap(data) <= grepKeepBufBytes {
			sc.data = data
		}
		if cap(sc.low) > grepKeepBufBytes {
			sc.low = nil
		}
	}()
	if isBinary(data, true) {
		if explicit {
			return nil, newError(CodeBinaryFile, rel+" is a binary file (NUL bytes or invalid UTF-8)")
		}
		return nil, nil
	}
	matches := s.find(data, limit, &sc.low)
	if len(matches) == 0 {
		return &fileHits{rel: rel}, nil
	}
	return collect(rel, data, matches, ctxLines), nil
}

// formatGrep prints the first limit matches of the finished prefix of g.
func formatGrep(g *gather, limit, ctxLines, max int) *output {
	out := newOutput(max)
	shown, skipped := 0, 0
	lastFile := false // a group has been printed, so the next needs "--"
	for seq := 0; seq < g.next && shown < limit; seq++ {
		h := g.res[seq]
		if h == nil {
			continue
		}
		if h.skipped {
			skipped++
			continue
		}
		ms := h.matches[:min(len(h.matches), limit-shown)]
		shown += len(ms)
		if len(ms) == 0 {
			continue
		}
		path := cleanLine([]byte(h.rel), 0)
		isMatch := map[int]bool{}
		for _, m := range ms {
			isMatch[m.num] = true
		}
		prev := -1
		for _, m := range ms {
			from, to := m.num-ctxLines, m.num+ctxLines
			if from < 1 {
				from = 1
			}
			if from <= prev {
				from = prev + 1
			}
			if ctxLines > 0 && (prev < 0 && lastFile || prev >= 0 && from > prev+1) {
				out.WriteString("--\n")
			}
			for n := from; n <= to; n++ {
				text, ok := h.lines[n]
				if !ok {
					break // past the end of the file
				}
				sep := "-"
				if isMatch[n] {
					sep = ":"
				}
				out.Printf("%s%s%d%s%s\n", path, sep, n, sep, text)
				prev = n
			}
		}
		lastFile = true
	}
	switch {
	case shown == 0:
		out.WriteString("(no matches)\n")
	case g.full:
		// The search stopped at the limit; later files were not read.
		out.Printf("[stopped at the match limit of %d; narrow the search or raise limit]\n", limit)
	}
	if skipped > 0 {
		out.Printf("[skipped %s larger than %d MiB]\n", plural(skipped, "file", "files"), grepMaxFileBytes>>20)
	}
	return out
}

// withOutput sets the result's output from o.
func (r Result) withOutput(o *output) Result {
	r.Output, r.Truncated = o.result()
	return r
}
