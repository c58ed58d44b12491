package tools

import (
	"bytes"
	"context"
	"io"
	"sync"
)

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

// scratch is a worker's memory: a read buffer of grepBufBytes, and as much
// again for the lower-cased copy a folded literal needs.
type scratch struct {
	buf, low []byte
}

// scratchPool keeps scratch between calls; it holds at most as many as
// workers ran at once.
var scratchPool = sync.Pool{New: func() any { return &scratch{buf: make([]byte, grepBufBytes)} }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

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
