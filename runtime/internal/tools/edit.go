package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

var editTool = &tool{
	name:   "edit",
	effect: EffectWorkspaceMutation,
	description: "Replace text in a file in the workspace: old_text must occur exactly once in the file and is replaced by new_text. " +
		"Copy old_text exactly from the file (without read's line-number prefixes), with enough surrounding lines to make it unique. " +
		"The file is replaced atomically and keeps its permissions.",
	params: []param{
		{name: "path", kind: kindString, required: true, nonEmpty: true, path: true,
			description: "Path of the file, relative to the workspace root."},
		{name: "old_text", kind: kindString, required: true, nonEmpty: true,
			description: "Exact text to replace; must occur exactly once in the file."},
		{name: "new_text", kind: kindString, required: true,
			description: "Text to put in its place (may be empty to delete old_text)."},
	},
	run: runEdit,
}

func runEdit(ctx context.Context, env Env, a *args) (Result, error) {
	oldText, newText := a.string("old_text", ""), a.string("new_text", "")
	if oldText == newText {
		return Result{}, newError(CodeNoChange, "old_text and new_text are identical; nothing to change")
	}
	rel, err := mutableTarget(env, a.string("path", ""))
	if err != nil {
		return Result{}, err
	}
	data, err := readForEdit(ctx, env, rel)
	if err != nil {
		return Result{}, err
	}
	if isBinary(data, true) {
		return Result{}, newError(CodeBinaryFile, rel+" is a binary file (NUL bytes or invalid UTF-8); edit only changes text files")
	}
	old, repl := []byte(oldText), []byte(newText)
	n := bytes.Count(data, old)
	if n == 0 && bytes.Contains(data, []byte("\r\n")) && strings.Contains(oldText, "\n") && !strings.Contains(oldText, "\r") {
		// read shows CRLF lines without their CR, so a model copying from
		// it sends LF; match the file's line ends instead.
		old = []byte(strings.ReplaceAll(oldText, "\n", "\r\n"))
		if !strings.Contains(newText, "\r") {
			repl = []byte(strings.ReplaceAll(newText, "\n", "\r\n"))
		}
		n = bytes.Count(data, old)
	}
	switch {
	case n == 0:
		return Result{}, newError(CodeNotFound, "old_text was not found in "+rel+"; it must match the file exactly, including whitespace and indentation")
	case n > 1:
		return Result{}, newError(CodeNotUnique, fmt.Sprintf("old_text occurs %d times in %s; include more surrounding text so that it occurs exactly once", n, rel))
	}
	if ctx.Err() != nil {
		// The last point to honour a cancellation: the atomic
		// replacement runs to its end once begun.
		return Result{}, canceled()
	}
	at := bytes.Index(data, old)
	out := make([]byte, 0, len(data)-len(old)+len(repl))
	out = append(out, data[:at]...)
	out = append(out, repl...)
	out = append(out, data[at+len(old):]...)
	if err := env.Root.WriteFileAtomic(rel, out, 0o644); err != nil {
		return Result{}, err
	}
	line := 1 + bytes.Count(data[:at], []byte{'\n'})
	return Result{
		Output: fmt.Sprintf("edited %s at line %d: replaced %s with %s",
			rel, line, plural(lineCount(old), "line", "lines"), plural(lineCount(repl), "line", "lines")),
		Changed: []string{rel},
	}, nil
}

// lineCount is the number of lines text spans (0 for empty text).
func lineCount(text []byte) int {
	if len(text) == 0 {
		return 0
	}
	return 1 + bytes.Count(bytes.TrimSuffix(text, []byte{'\n'}), []byte{'\n'})
}

// editMaxFileBytes bounds the file edit changes: edit holds it and its new
// content in memory, and reads it in one go.
const editMaxFileBytes = 32 << 20

// readForEdit reads the file rel whole, refusing one larger than
// editMaxFileBytes before reading it, and checks ctx between reads of
// editReadChunk.
func readForEdit(ctx context.Context, env Env, rel string) ([]byte, error) {
	f, fi, err := env.Root.OpenRegular(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := fi.Size()
	if size > editMaxFileBytes {
		return nil, newError(CodeFileTooLarge, fmt.Sprintf("%s is %d bytes; edit changes files of at most %d MiB", rel, size, editMaxFileBytes>>20))
	}
	// Read what fstat reported: a file growing meanwhile is read up to
	// that size.
	data := make([]byte, size)
	n := 0
	for n < len(data) {
		if ctx.Err() != nil {
			return nil, canceled()
		}
		m, err := f.Read(data[n:min(len(data), n+editReadChunk)])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return data[:n], nil
}

// editReadChunk is how much edit reads between two checks of its context.
const editReadChunk = 1 << 20
