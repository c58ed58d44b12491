package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
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

	max := env.maxOutput()
	budget := max - readNoteRoom
	if budget < 0 {
		budget = 0
	}
	var (
		body      []byte
		line      []byte
		lineNo    int  // lines read so far
		shownLast int  // number of the last line shown whole
		full      bool // a window line did not fit
		cutLine   int  // the line shown cut, if any
		total     int  // bytes the whole window would take
		more      bool // the window ended before the end of the file
	)
	pace := newPacer(ctx)
	for {
		if lineNo+1 >= offset+limit {
			more = true
			break
		}
		keep := 0
		if lineNo+1 >= offset && !full {
			keep = budget + 1
		}
		var n int
		var ok bool
		line, n, ok, err = readLine(br, line[:0], keep, &pace)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			break
		}
		lineNo++
		if lineNo < offset {
			continue
		}
		prefix := fmt.Sprintf("%6d\t", lineNo)
		total += len(prefix) + n + 1
		if full {
			continue
		}
		text := prefix + cleanLine(line, 0) + "\n"
		switch {
		case len(line) < n || len(body)+len(text) > budget:
			full = true
			if shownLast == 0 {
				// Not even the first line fits: show its beginning.
				body = append(body, text[:utf8Cut(text, budget)]...)
				cutLine = lineNo
			}
		default:
			body = append(body, text...)
			shownLast = lineNo
		}
	}
	if offset > 1 && offset > lineNo {
		return Result{}, invalidArgs("offset %d is beyond the end of %s (%s)", offset, rel, plural(lineNo, "line", "lines"))
	}
	remaining := 0
	if more {
		if remaining, err = countLines(br, &pace); err != nil {
			return Result{}, err
		}
		more = remaining > 0
	}

	out := strings.TrimSuffix(string(body), "\n")
	switch {
	case lineNo == 0:
		out = "(empty file)"
	case full:
		if out != "" {
			out += "\n"
		}
		out += truncationMarker(len(body), total, false) + "\n"
		if cutLine > 0 {
			out += fmt.Sprintf("... line %d is longer than the output bound and was cut", cutLine)
			if cutLine < lineNo+remaining {
				out += fmt.Sprintf("; use offset=%d to continue after it", cutLine+1)
			}
		} else {
			n := lineNo + remaining - shownLast
			out += fmt.Sprintf("... %d more %s; use offset=%d to continue", n, noun(n, "line", "lines"), shownLast+1)
		}
	case more:
		out += fmt.Sprintf("\n... %d more %s; use offset=%d to continue", remaining, noun(remaining, "line", "lines"), lineNo+1)
	}
	return Result{Output: out, Truncated: full}, nil
}

// readLine reads one line (without its newline) from br, appending at most
// keep bytes of it to dst. It returns the extended dst, the full length of
// the line, and whether there was a line at all (false at end of input).
func readLine(br *bufio.Reader, dst []byte, keep int, pace *pacer) ([]byte, int, bool, error) {
	n, any := 0, false
	for {
		chunk, err := br.ReadSlice('\n')
		if perr := pace.add(len(chunk)); perr != nil {
			return dst, n, any, perr
		}
		any = any || len(chunk) > 0
		data := chunk
		if err == nil {
			data = chunk[:len(chunk)-1]
		}
		if room := keep - len(dst); room > 0 {
			dst = append(dst, data[:min(room, len(data))]...)
		}
		n += len(data)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			return dst, n, true, nil
		case err == io.EOF:
			return dst, n, any, nil
		default:
			return dst, n, any, err
		}
	}
}

// countLines counts the lines left in br (a last line without a newline
// counts).
func countLines(br *bufio.Reader, pace *pacer) (int, error) {
	var buf [64 << 10]byte
	n, last := 0, byte('\n')
	for {
		m, err := br.Read(buf[:])
		if perr := pace.add(m); perr != nil {
			return 0, perr
		}
		if m > 0 {
			n += bytes.Count(buf[:m], []byte{'\n'})
			last = buf[m-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
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
