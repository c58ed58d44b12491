package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"octet.dev/host/internal/textutil"
)

// TestReadAgreesWithReference: on files that end within the bounded scan,
// read's output is exactly that of the former read, which counted every
// line to the end of the file (referenceRead, below).
func TestReadAgreesWithReference(t *testing.T) {
	env, ws, _ := newEnv(t, nil)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		lines := rapid.IntRange(0, 40).Draw(rt, "lines")
		for range lines {
			b.WriteString(strings.Repeat(rapid.SampledFrom([]string{"a", "é", "xyz ", "\r"}).Draw(rt, "piece"), rapid.IntRange(0, 120).Draw(rt, "len")))
			b.WriteString("\n")
		}
		b.WriteString(strings.Repeat("z", rapid.IntRange(0, 3).Draw(rt, "tail")))
		n++
		name := fmt.Sprintf("f%d.txt", n)
		writeTree(t, ws, map[string]string{name: b.String()})
		args := fmt.Sprintf(`{"path":%q,"offset":%d,"limit":%d}`, name, rapid.IntRange(1, 45).Draw(rt, "offset"), rapid.IntRange(1, 45).Draw(rt, "limit"))
		env.MaxOutputBytes = rapid.IntRange(200, 3000).Draw(rt, "max")
		got, gerr := Run(context.Background(), env, "read", []byte(args))
		a, err := decodeArgs([]byte(args), readTool.params)
		if err != nil {
			rt.Fatal(err)
		}
		want, werr := referenceRead(context.Background(), env, a)
		if codeOf(gerr) != codeOf(werr) || got.Output != want.Output || got.Truncated != want.Truncated {
			rt.Fatalf("read %s of %q:\n%v %q\nreference:\n%v %q", args, b.String(), gerr, got.Output, werr, want.Output)
		}
	})
}

// referenceRead is read as it was before the bounded scan, kept as the
// reference for the files it answered exactly.
func referenceRead(ctx context.Context, env Env, a *args) (Result, error) {
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
	for {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return Result{}, canceled()
		}
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
		line, n, ok, err = refReadLine(br, line[:0], keep)
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
				body = append(body, text[:textutil.CutLen(text, budget)]...)
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
		if remaining, err = refCountLines(br); err != nil {
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
func refReadLine(br *bufio.Reader, dst []byte, keep int) ([]byte, int, bool, error) {
	n, any := 0, false
	for {
		chunk, err := br.ReadSlice('\n')
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
func refCountLines(br *bufio.Reader) (int, error) {
	var buf [64 << 10]byte
	n, last := 0, byte('\n')
	for {
		m, err := br.Read(buf[:])
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
