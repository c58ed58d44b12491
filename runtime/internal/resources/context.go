package resources

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"octet.dev/host/runtime/internal/confine"
)

// ContextFile is the name of a context file: the convention Codex, pi,
// opencode and others read.
const ContextFile = "AGENTS.md"

// MaxContextBytes caps one context file. Past it the head is kept, cut at
// a character boundary, and a marker line says so.
const MaxContextBytes = 32 << 10

// Context is one context file for the system prompt.
type Context struct {
	Layer string // Layer.Name, or LayerWorkspace for the workspace root's file
	// Label names where the file comes from, never by an absolute path.
	Label     string
	Text      string // valid UTF-8; when Truncated, ends with the marker
	Truncated bool
	Size      int64 // bytes of the whole file
}

// Contexts reads AGENTS.md from the user layer, from the workspace root
// (workspace: repository content the model could read anyway, so no trust
// is needed) and from each explicit root, in that order. A file that is a
// link, not regular or not UTF-8 is skipped with a diagnostic; one over
// MaxContextBytes is cut, with a DiagContextTruncated diagnostic.
func (s *Set) Contexts(workspace *confine.Root) []Context {
	type source struct {
		layer, label string
		root         *confine.Root
	}
	var srcs []source
	if l := s.layer(LayerUser); l != nil {
		srcs = append(srcs, source{l.Name, "~/.octet/AGENTS.md (user)", l.Root})
	}
	if workspace != nil {
		srcs = append(srcs, source{LayerWorkspace, "AGENTS.md at the workspace root", workspace})
	}
	for _, l := range s.Layers {
		if strings.HasPrefix(l.Name, "root:") {
			srcs = append(srcs, source{l.Name, "AGENTS.md of " + l.Label, l.Root})
		}
	}
	var out []Context
	for _, src := range srcs {
		if src.root == nil {
			continue
		}
		c, ok := s.readContext(src.root, src.layer)
		if !ok {
			continue
		}
		c.Layer, c.Label = src.layer, src.label
		out = append(out, c)
	}
	return out
}

func (s *Set) readContext(root *confine.Root, layer string) (Context, bool) {
	text, size, err := readHead(root, ContextFile, MaxContextBytes)
	if err != nil {
		if d, report := fileDiag(layer, ContextFile, err); report {
			s.add(d)
		}
		return Context{}, false
	}
	c := Context{Size: size}
	if size > int64(len(text)) {
		text = cutRune(text)
		c.Truncated = true
	}
	if !utf8.Valid(text) {
		s.add(Diagnostic{Layer: layer, Path: ContextFile, Code: DiagInvalidUTF8, Message: "AGENTS.md is not valid UTF-8; it is left out"})
		return Context{}, false
	}
	c.Text = string(text)
	if c.Truncated {
		c.Text = strings.TrimRight(c.Text, "\n") + "\n\n[AGENTS.md truncated: the first " + strconv.Itoa(len(text)) +
			" of " + strconv.FormatInt(size, 10) + " bytes are shown]"
		s.add(Diagnostic{Layer: layer, Path: ContextFile, Code: DiagContextTruncated,
			Message: "AGENTS.md is " + strconv.FormatInt(size, 10) + " bytes; only the first " + strconv.Itoa(MaxContextBytes) + " reach the model"})
	}
	return c, true
}

// readHead reads at most max bytes of the regular file rel beneath root and
// returns them with the file's size.
func readHead(root *confine.Root, rel string, max int) ([]byte, int64, error) {
	return readHeadInto(root, rel, nil, max)
}

// readHeadInto is readHead reading into buf (grown when needed), so one
// buffer serves many files.
func readHeadInto(root *confine.Root, rel string, buf []byte, max int) ([]byte, int64, error) {
	f, fi, err := root.OpenRegular(rel)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	n := int(min(fi.Size(), int64(max)))
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	m, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, 0, err
	}
	return buf[:m], fi.Size(), nil
}

// cutRune drops an incomplete UTF-8 sequence at the end of b (a cut
// through a character).
func cutRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
