package tools

import (
	"context"
	"sync"
)

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
