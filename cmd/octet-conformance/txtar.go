package main

import (
	"bytes"
	"strings"
)

// archive is one parsed txtar file: a free-text comment, then named
// sections. The format is the plain one of Go's own test data: a line
// "-- NAME --" starts the section NAME, which holds every line up to the
// next such line or the end of the file; what comes before the first
// marker is the comment. A section's text always ends in a newline (one
// is added when the file's last line has none). Nothing is escaped: a
// section cannot hold a line that looks like a marker.
type archive struct {
	comment  []byte
	sections []section
}

type section struct {
	name string
	line int // line number of its marker, for messages
	data []byte
}

// marker returns the section name of a marker line, or "" if line is not
// one.
func marker(line []byte) string {
	s := string(bytes.TrimSuffix(line, []byte("\r")))
	if len(s) < len("-- x --") || !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") {
		return ""
	}
	return strings.TrimSpace(s[3 : len(s)-3])
}

// parseTxtar splits data into its comment and sections. It never fails:
// any text is a valid archive (possibly one without sections).
func parseTxtar(data []byte) archive {
	var a archive
	cur := &a.comment
	n := 0
	for len(data) > 0 {
		n++
		line, rest, found := bytes.Cut(data, []byte("\n"))
		data = rest
		if name := marker(line); name != "" {
			a.sections = append(a.sections, section{name: name, line: n})
			cur = &a.sections[len(a.sections)-1].data
			continue
		}
		*cur = append(*cur, line...)
		if found || len(line) > 0 {
			*cur = append(*cur, '\n')
		}
	}
	return a
}

// formatTxtar is the inverse of parseTxtar, for tests and tools that
// write case files.
func formatTxtar(a archive) []byte {
	var b bytes.Buffer
	b.Write(a.comment)
	for _, s := range a.sections {
		b.WriteString("-- " + s.name + " --\n")
		b.Write(s.data)
		if len(s.data) > 0 && s.data[len(s.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
