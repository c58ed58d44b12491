package tools

import (
	"bytes"
	"context"
	"errors"
	"io"
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
		"Skips .git, binary files, files ignored by .gitignore files, and symbolic links. Lines longer than 500 bytes are cut in the output; a line longer than 256 KiB is searched in its first 256 KiB only.",
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
	// grepBufBytes is each worker's read buffer. A file is searched one
	// buffer of whole lines at a time, so a longer line is searched in its
	// first grepBufBytes bytes only (the output says how many were).
	grepBufBytes = 256 << 10
	// grepStepBytes is about how much of a region grep searches between
	// two checks of its context.
	grepStepBytes = 32 << 10
	// grepMaxWorkers bounds the files searched at once, and with it the
	// buffers.
	grepMaxWorkers = 4
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
	matches []int          // numbers of the matching lines, at most limit
	lines   map[int]string // matching and context lines, cleaned
	stored  int            // bytes of text in lines
	// overflow means the lines to show exceeded the output bound, so the
	// file's search stopped there: lines holds the first of them only.
	overflow bool
	// long counts lines longer than grepBufBytes, searched in their first
	// grepBufBytes bytes only.
	long    int
	skipped bool // larger than grepMaxFileBytes
}

// fileSearch searches one file a region of whole lines at a time and keeps
// the matches and the lines to show around them, so that no more than one
// buffer of the file is ever held.
type fileSearch struct {
	ctx             context.Context
	s               *searcher
	h               *fileHits
	limit, ctxLines int
	budget          int // bytes of line text a file may store: the output bound
	after           int // lines of after-context still to store
	// ring holds the last ctxLines lines (cleaned) before the current
	// region, the first of them numbered ringFirst, for before-context;
	// at most budget bytes of them (ringBytes).
	ring      []string
	ringFirst int
	ringBytes int
}

// store keeps line n's text unless it is kept already; it reports false
// when the file's stored text exceeds the budget.
func (fs *fileSearch) store(n int, line []byte) bool {
	if _, ok := fs.h.lines[n]; ok {
		return true
	}
	text := cleanLine(line, grepLineBytes)
	fs.h.lines[n] = text
	fs.h.stored += len(text)
	if fs.h.stored > fs.budget {
		fs.h.overflow = true
		return false
	}
	return true
}

// region searches data, whole lines the first numbered first (the last
// may lack its newline), and returns the number of lines it holds and
// whether the file's search is over (the limit or the budget reached).
// low is scratch space for the searcher.
func (fs *fileSearch) region(data []byte, first int, low *[]byte) (int, bool) {
	if fs.h.lines == nil {
		fs.h.lines = map[int]string{}
	}
	// Lines of after-context left over from the previous region.
	s, n := 0, first
	for ; fs.after > 0 && s < len(data); n++ {
		e := len(data)
		if i := bytes.IndexByte(data[s:], '\n'); i >= 0 {
			e = s + i
		}
		if !fs.store(n, data[s:e]) {
			return 0, true
		}
		fs.after--
		s = e + 1
	}
	var found []lineMatch
	if len(fs.h.matches) < fs.limit {
		var ok bool
		if found, ok = fs.find(data, low); !ok {
			return 0, true // canceled
		}
	}
	for _, m := range found {
		num := first + m.num - 1
		fs.h.matches = append(fs.h.matches, num)
		if !fs.store(num, data[m.start:m.end]) {
			return 0, true
		}
		// Context before: in data, then in the ring.
		s := m.start
		for n := num - 1; n >= num-fs.ctxLines && n >= 1; n-- {
			if s > 0 {
				e := s - 1
				s = bytes.LastIndexByte(data[:e], '\n') + 1
				if !fs.store(n, data[s:e]) {
					return 0, true
				}
				continue
			}
			if n < fs.ringFirst {
				// Dropped from the ring for its size: more lines than
				// the output can show.
				fs.h.overflow = true
				return 0, true
			}
			if _, ok := fs.h.lines[n]; !ok {
				text := fs.ring[n-fs.ringFirst]
				fs.h.lines[n] = text
				if fs.h.stored += len(text); fs.h.stored > fs.budget {
					fs.h.overflow = true
					return 0, true
				}
			}
		}
		// Context after: in data, the rest in the next regions.
		e, left := m.end, fs.ctxLines
		for n := num + 1; left > 0 && e < len(data) && e+1 < len(data); n++ {
			s := e + 1
			e = len(data)
			if i := bytes.IndexByte(data[s:], '\n'); i >= 0 {
				e = s + i
			}
			if !fs.store(n, data[s:e]) {
				return 0, true
			}
			left--
		}
		fs.after = max(fs.after, left)
	}
	lines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	if len(fs.h.matches) >= fs.limit && fs.after == 0 {
		return lines, true // the after-context of the last match is kept too
	}
	fs.keepTail(data, first, lines)
	return lines, false
}

// find returns the matches in data, up to the limit, searching it in
// steps of about grepStepBytes of whole lines and checking the context
// between steps, so that even a slow regular expression notices a
// cancellation promptly. It returns false when the context is done.
func (fs *fileSearch) find(data []byte, low *[]byte) ([]lineMatch, bool) {
	var out []lineMatch
	lines := 0 // lines before s
	for s := 0; s < len(data) && len(fs.h.matches)+len(out) < fs.limit; {
		if fs.ctx.Err() != nil {
			return nil, false
		}
		e := len(data)
		if s+grepStepBytes < len(data) {
			if i := bytes.LastIndexByte(data[s:s+grepStepBytes], '\n'); i >= 0 {
				e = s + i + 1
			} else if i := bytes.IndexByte(data[s+grepStepBytes:], '\n'); i >= 0 {
				e = s + grepStepBytes + i + 1 // one line longer than a step
			}
		}
		for _, m := range fs.s.find(data[s:e], fs.limit-len(fs.h.matches)-len(out), low) {
			out = append(out, lineMatch{num: lines + m.num, start: s + m.start, end: s + m.end})
		}
		if e < len(data) {
			lines += bytes.Count(data[s:e], []byte{'\n'})
		}
		s = e
	}
	return out, true
}

// keepTail puts the last ctxLines lines of data (holding lines numbered
// first to first+lines-1) into the ring.
func (fs *fileSearch) keepTail(data []byte, first, lines int) {
	if fs.ctxLines == 0 || lines == 0 {
		return
	}
	k := min(fs.ctxLines, lines)
	e := len(data)
	if data[e-1] == '\n' {
		e--
	}
	tail := make([]string, k)
	end := e
	for i := k - 1; i >= 0; i-- {
		start := bytes.LastIndexByte(data[:end], '\n') + 1
		tail[i] = cleanLine(data[start:end], grepLineBytes)
		end = start - 1
	}
	if k >= fs.ctxLines {
		fs.ring, fs.ringBytes = fs.ring[:0], 0
	}
	fs.ring = append(fs.ring, tail...)
	for _, t := range tail {
		fs.ringBytes += len(t)
	}
	drop := max(0, len(fs.ring)-fs.ctxLines)
	for _, t := range fs.ring[:drop] {
		fs.ringBytes -= len(t)
	}
	for drop < len(fs.ring) && fs.ringBytes > fs.budget {
		fs.ringBytes -= len(fs.ring[drop])
		drop++
	}
	fs.ring = append(fs.ring[:0], fs.ring[drop:]...)
	fs.ringFirst = first + lines - len(fs.ring)
}

// gather orders the workers' results by the walk's sequence numbers and
// cancels the search once the files before the first unfinished one hold
// limit matches (the first limit matches in path order are then known), or
// more text than the output can show.
type gather struct {
	mu     sync.Mutex
	res    map[int]*fileHits
	next   int // every file before next is done
	count  int // matches in files before next
	stored int // bytes of line text in files before next
	limit  int
	max    int // the output bound
	full   bool
	// over means the files before next hold more text than the output
	// bound, or one of them stopped at it: the output is cut, and its
	// size past the cut is not known.
	over   bool
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
			g.stored += x.stored
			g.over = g.over || x.overflow || g.stored > g.max
		}
		g.next++
		if (g.count >= g.limit || g.over) && !g.full {
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
	g := &gather{res: map[int]*fileHits{}, limit: limit, max: env.maxOutput(), cancel: cancel}
	job := grepParams{root: root, s: s, limit: limit, ctxLines: ctxLines, budget: env.maxOutput()}

	if !fi.IsDir() {
		// An explicitly named file is searched whatever the ignore rules
		// and the glob say, and a binary one is an error.
		sc := getScratch()
		h, err := job.file(gctx, start, sc, true)
		putScratch(sc)
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, canceled()
			}
			return Result{}, err
		}
		g.done(0, h)
	} else {
		if err := grepTree(gctx, job, glob, start, g); err != nil {
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

// grepParams is what every file's search shares.
type grepParams struct {
	root            *confine.Root
	s               *searcher
	limit, ctxLines int
	budget          int // the output bound
}

// grepWorkers returns how many files grep searches at once: one per
// processor, at most grepMaxWorkers, so that memory does not grow with
// GOMAXPROCS.
func grepWorkers() int { return min(runtime.GOMAXPROCS(0), grepMaxWorkers) }

// grepTree walks start on the calling goroutine and searches its files on
// grepWorkers workers. It returns after every worker has finished.
func grepTree(ctx context.Context, job grepParams, glob *matcher, start string, g *gather) error {
	root := job.root
	workers := grepWorkers()
	jobs := make(chan grepJob, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			sc := getScratch()
			defer putScratch(sc)
			for j := range jobs {
				var h *fileHits
				if ctx.Err() == nil {
					// Errors (a file removed or replaced since the
					// walk listed it, a binary file, the search
					// canceled) only skip it.
					h, _ = job.file(ctx, j.rel, sc, false)
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

// scratch is a worker's memory: a read buffer of grepBufBytes, and as much
// again for the lower-cased copy a folded literal needs.
type scratch struct {
	buf, low []byte
}

// scratchPool keeps scratch between calls; it holds at most as many as
// workers ran at once.
var scratchPool = sync.Pool{New: func() any { return &scratch{buf: make([]byte, grepBufBytes)} }}

func getScratch() *scratch   { return scratchPool.Get().(*scratch) }
func putScratch(sc *scratch) { scratchPool.Put(sc) }

// file searches the file rel, streaming it through sc a region of whole
// lines at a time, checking ctx before each region. A nil result with a nil
// error means the file was skipped as binary (explicit reports that as an
// error instead); a canceled search returns ctx's error.
func (p grepParams) file(ctx context.Context, rel string, sc *scratch, explicit bool) (*fileHits, error) {
	f, fi, err := p.root.OpenRegular(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > grepMaxFileBytes {
		return &fileHits{rel: rel, skipped: true}, nil
	}
	h := &fileHits{rel: rel}
	fs := fileSearch{ctx: ctx, s: p.s, h: h, limit: p.limit, ctxLines: p.ctxLines, budget: p.budget}
	if p.s.lit != nil && bytes.IndexByte(p.s.lit, '\n') >= 0 {
		return h, nil // no single line can hold a newline
	}
	buf := sc.buf
	n, first := 0, 1 // bytes held in buf; number of the line at buf[0]
	eof, sniffed := false, false
	for {
		for n < len(buf) && !eof {
			m, err := f.Read(buf[n:])
			n += m
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !sniffed {
			sniffed = true
			if isBinary(buf[:n], eof) {
				if explicit {
					return nil, newError(CodeBinaryFile, rel+" is a binary file (NUL bytes or invalid UTF-8)")
				}
				return nil, nil
			}
		}
		if n == 0 {
			return h, nil
		}
		end := n // the region: whole lines, the last one cut only at the end of the file
		if !eof {
			end = bytes.LastIndexByte(buf[:n], '\n') + 1
		}
		if end > 0 {
			lines, stop := fs.region(buf[:end], first, &sc.low)
			if err := ctx.Err(); stop && err != nil {
				return nil, err
			}
			if stop || eof {
				return h, nil
			}
			first += lines
			n = copy(buf, buf[end:n])
			continue
		}
		// A line longer than the buffer: search its first grepBufBytes
		// bytes, then read on to its end.
		h.long++
		if _, stop := fs.region(buf[:n], first, &sc.low); stop {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return h, nil
		}
		first++
		for n = 0; ; {
			m, err := f.Read(buf)
			if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
				n = copy(buf, buf[i+1:m])
				break
			}
			if err == io.EOF || m == 0 && err == nil {
				return h, nil
			}
			if err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
}

// formatGrep prints the first limit matches of the finished prefix of g.
func formatGrep(g *gather, limit, ctxLines, max int) *output {
	out := newOutput(max)
	out.atLeast = g.over
	shown, skipped, long := 0, 0, 0
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
		long += h.long
		ms := h.matches[:min(len(h.matches), limit-shown)]
		shown += len(ms)
		if len(ms) == 0 {
			continue
		}
		path := cleanLine([]byte(h.rel), 0)
		isMatch := map[int]bool{}
		for _, m := range ms {
			isMatch[m] = true
		}
		prev := -1
		for _, m := range ms {
			from, to := m-ctxLines, m+ctxLines
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
	case g.full && !g.over:
		// The search stopped at the limit; later files were not read.
		out.Printf("[stopped at the match limit of %d; narrow the search or raise limit]\n", limit)
	}
	if long > 0 {
		out.Printf("[%s longer than %d KiB searched in their first %d KiB only]\n", plural(long, "line", "lines"), grepBufBytes>>10, grepBufBytes>>10)
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
