package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"octet.dev/host/internal/textutil"
)

var readTool = &tool{
	name:   "read",
	effect: EffectWorkspaceRead,
	description: "Read a text file in the workspace. Each output line is the line number, a tab, and the line's text. " +
		"Long files are shown in pages: use offset and limit, and follow the note at the end of the output. " +
		"Binary files and symbolic links are refused.",
	params: []param{
		{name: "path", kind: kindString, required: true, nonEmpty: true, path: true,
			description: "Path of the file, relative to the workspace root (an absolute path inside the workspace is accepted)."},
		{name: "offset", kind: kindInteger, min: 1,
			description: "Number of the first line to show, counting from 1. Default 1."},
		{name: "limit", kind: kindInteger, min: 1,
			description: "Maximum number of lines to show. Default 2000."},
	},
	run: runRead,
}

// readNoteRoom is kept free of lines in read's output for the notes that
// follow them.
const readNoteRoom = 200

func runRead(ctx context.Context, env Env, a *args) (Result, error) {
	offset, limit := a.int("offset", 1), a.int("limit", 2000)
	f, _, err := env.Root.OpenRegular(a.string("path", ""))
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	rel := f.Name()
	br := bufio.NewReaderSize(f, 64<<10)
	head, herr := br.Peek(sniffBytes)
	if herr != nil && herr != io.EOF && herr != bufio.ErrBufferFull {
		return Result{}, herr
	}
	if isBinary(head, herr == io.EOF) {
		return Result{}, newError(CodeBinaryFile, rel+" is a binary file (NUL bytes or invalid UTF-8)")
	}

	budget := max(0, env.maxOutput()-readNoteRoom)
	last := offset + limit - 1 // the window's last line
	if last < offset {
		last = math.MaxInt
	}
	lr := lineReader{br: br, pace: newPacer(ctx)}

	// The lines before the window are read through, not kept: reaching
	// line offset takes reading the lines before it (this is the one part
	// of the work not bounded by what read returns, and it checks ctx as
	// it goes).
	for lr.lines < offset-1 && !lr.eof {
		if _, _, err := lr.piece(); err != nil {
			return Result{}, err
		}
	}

	// The window: lines offset to last, as many as fit in budget.
	var (
		body      []byte
		line      []byte
		shownLast int  // number of the last line shown whole
		cutLine   int  // the line shown cut, if any
		full      bool // a window line did not fit
		total     int  // bytes the whole window would take, as far as measured
		openLen   int  // bytes read of the line being read, when it has not ended
	)
	for !full && !lr.eof && lr.lines < last {
		num := lr.lines + 1
		keep := budget + 1 // a longer line cannot fit: stop reading it there
		line, openLen = line[:0], 0
		ended := false
		for !ended && openLen <= keep && !lr.eof {
			data, e, err := lr.piece()
			if err != nil {
				return Result{}, err
			}
			if room := keep - len(line); room > 0 {
				line = append(line, data[:min(room, len(data))]...)
			}
			openLen += len(data)
			ended = e
		}
		if !ended && openLen == 0 {
			break // the end of the file
		}
		prefix := fmt.Sprintf("%6d\t", num)
		if ended {
			total += len(prefix) + openLen + 1
		}
		text := prefix + cleanLine(line, 0) + "\n"
		if !ended || len(line) < openLen || len(body)+len(text) > budget {
			full = true
			if shownLast == 0 {
				// Not even the first line fits: show its beginning.
				body = append(body, text[:textutil.CutLen(text, budget)]...)
				cutLine = num
			}
		} else {
			body = append(body, text...)
			shownLast = num
		}
		if ended {
			openLen = 0
		}
	}
	if offset > 1 && lr.lines < offset && lr.cur == 0 { // no line offset, not even one begun
		return Result{}, invalidArgs("offset %d is beyond the end of %s (%s)", offset, rel, plural(lr.lines, "line", "lines"))
	}

	// A bounded scan past what is shown counts the lines that follow and
	// measures the rest of the window, up to readScanBytes; past it the
	// counts are lower bounds.
	scanned := 0
	step := func() error {
		data, ended, err := lr.piece()
		if err != nil {
			return err
		}
		scanned += len(data) + 1
		openLen += len(data)
		if ended {
			if full && lr.lines <= last {
				total += len(fmt.Sprintf("%6d\t", lr.lines)) + openLen + 1
			}
			openLen = 0
		}
		return nil
	}
	for !lr.eof && scanned < readScanBytes {
		if err := step(); err != nil {
			return Result{}, err
		}
	}
	if !lr.eof {
		if _, err := br.Peek(1); err == io.EOF {
			if err := step(); err != nil { // the end, right at the scan's bound
				return Result{}, err
			}
		}
	}
	exact := lr.eof
	// The file has lines lines if exact, else at least lines (a byte
	// follows the last counted line).
	lines := lr.lines
	if !exact {
		lines++
		if full && lr.lines < last {
			total += len(fmt.Sprintf("%6d\t", lr.lines+1)) + openLen
		}
	}
	moreLines := func(n, from int) string {
		if exact {
			return fmt.Sprintf("... %d more %s; use offset=%d to continue", n, noun(n, "line", "lines"), from)
		}
		return fmt.Sprintf("... at least %d more %s (the rest of the file was not counted); use offset=%d to continue", n, noun(n, "line", "lines"), from)
	}

	out := strings.TrimSuffix(string(body), "\n")
	switch {
	case lines == 0:
		out = "(empty file)"
	case full:
		if out != "" {
			out += "\n"
		}
		out += truncationMarker(len(body), total, !exact && lr.lines < last) + "\n"
		if cutLine > 0 {
			out += fmt.Sprintf("... line %d is longer than the output bound and was cut", cutLine)
			switch {
			case lines > cutLine:
				out += fmt.Sprintf("; use offset=%d to continue after it", cutLine+1)
			case !exact:
				out += fmt.Sprintf("; if more lines follow, use offset=%d to continue after it", cutLine+1)
			}
		} else {
			out += moreLines(lines-shownLast, shownLast+1)
		}
	case lines > last:
		out += "\n" + moreLines(lines-last, last+1)
	}
	return Result{Output: out, Truncated: full}, nil
}

// readScanBytes bounds how far read reads past the lines it shows to count
// those that follow (and measure the rest of a cut window).
const readScanBytes = 1 << 20

// lineReader reads a file a piece of a line at a time, counting lines and
// checking its context through pace.
type lineReader struct {
	br    *bufio.Reader
	pace  pacer
	lines int  // lines ended so far
	cur   int  // bytes read of the line not yet ended
	eof   bool // the end of the file was reached
}

// piece reads the next piece of the current line: up to and including its
// newline, or a buffer's worth. It returns the piece without the newline
// (valid until the next call) and whether the line ended with it, at its
// newline or at the end of the file (a last line without a newline counts).
func (r *lineReader) piece() ([]byte, bool, error) {
	chunk, err := r.br.ReadSlice('\n')
	if perr := r.pace.add(len(chunk)); perr != nil {
		return nil, false, perr
	}
	switch {
	case err == nil:
		r.lines, r.cur = r.lines+1, 0
		return chunk[:len(chunk)-1], true, nil
	case errors.Is(err, bufio.ErrBufferFull):
		r.cur += len(chunk)
		return chunk, false, nil
	case err == io.EOF:
		r.eof = true
		ended := r.cur+len(chunk) > 0
		if ended {
			r.lines++
		}
		r.cur = 0
		return chunk, ended, nil
	default:
		return nil, false, err
	}
}

// cancelCheckBytes is how much a tool reads or scans between two checks of
// its context: a few tens of microseconds of work, so a cancellation is
// noticed well within 100 ms whatever the input, at no measurable cost.
const cancelCheckBytes = 64 << 10

// pacer checks a context once per cancelCheckBytes of work, so that the
// check is cheap per byte and prompt per call.
type pacer struct {
	ctx  context.Context
	work int
}

// newPacer returns a pacer whose first add checks.
func newPacer(ctx context.Context) pacer { return pacer{ctx: ctx, work: cancelCheckBytes} }

// add counts n bytes of work (at least one, so that empty lines count) and
// returns a canceled error when a check finds the context done.
func (p *pacer) add(n int) error {
	p.work += max(n, 1)
	if p.work < cancelCheckBytes {
		return nil
	}
	p.work = 0
	if p.ctx.Err() != nil {
		return canceled()
	}
	return nil
}
