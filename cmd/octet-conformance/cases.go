package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"octet.dev/host/runtime/fakeprovider"
)

// The cases are embedded, so the kit is one self-contained binary; -cases
// DIR reads another set from a folder instead.
//
//go:embed cases/*.txtar
var caseFiles embed.FS

// A case file is a txtar archive (see archive): its comment says in prose
// what the case checks, and its sections are
//
//	meta              required: "key: value" lines (below)
//	transcript        required: the request lines and expectations (below)
//	script.json       the fake provider's script (fakeprovider.Script)
//	faults            the fake provider's next answers, one a line:
//	                  status C [retry_after_ms=N] (HTTP status C)
//	workspace/NAME    a file of the case's workspace, with this text
//
// meta keys:
//
//	rule: TEXT        the rule the case checks, as a citation
//	                  (CONTRACT §N of spec/CONTRACT.md); required
//	level: L          protocol (the protocol source fixes it) or contract
//	                  (a decision of this project: skipped by -level
//	                  protocol); required
//	requires: P…      prerequisites: when the case providing one failed,
//	                  this case is skipped, with that reason
//	provides: P…      the prerequisites this case establishes when it passes
//
// transcript lines, in order:
//
//	# text                 a comment
//	> LINE                 a request line, sent as is after substituting
//	                       {{workspace}}, {{session_dir}}, {{base_url}},
//	                       {{api_key}}
//	>q "LINE"              a request line given Go-quoted (for bytes that
//	                       are not UTF-8)
//	>big N                 a request line of N bytes of 'x' (plus newline)
//	< EXPECTATION          what answers the request line above it
//	exit N                 close stdin; the host must exit with status N
//
// An expectation is ID (a request_id, or null) then one of:
//
//	hello | models | shutdown          that command's answer, shape checked
//	protocol_error CODE                a single protocol_error
//	refused CODE                       a run refused: a single final_result,
//	                                   status error, with that error code
//	run STATUS [code=C] [has=T1,T2] [output="TEXT"]
//	                                   a run through its lifecycle to a
//	                                   final_result with STATUS, whose
//	                                   events include T1, T2 in that order
//
// or the word none: the request line gets no answer (the host stopped
// reading after shutdown). A request line with no expectation after it is
// an error of the case file. docs/conformance.md describes the format for
// host authors.

// kcase is one case: a host session driven through steps.
type kcase struct {
	name     string
	desc     string // the archive's comment
	rule     string
	contract bool // a decision of this project's contract (level contract)
	requires []string
	provides []string
	script   *fakeprovider.Script
	faults   []fakeprovider.Fault
	files    map[string]string
	steps    []step
	exit     *int
}

func (c kcase) level() string {
	if c.contract {
		return "contract"
	}
	return "protocol"
}

// step is one request line and what must answer it.
type step struct {
	src  int    // line number in the case file, for messages
	line []byte // before placeholder substitution
	exp  expect
}

// expect is what answers one request line.
type expect struct {
	none   bool
	id     *string
	kind   string // hello, models, shutdown, protocol_error, refused, run
	code   string
	status string
	has    []string
	output *string
}

func (e expect) String() string {
	if e.none {
		return "no answer"
	}
	id := "null"
	if e.id != nil {
		id = strconv.Quote(*e.id)
	}
	s := e.kind + " for request_id " + id
	if e.status != "" {
		s += ", status " + e.status
	}
	if e.code != "" {
		s += ", code " + e.code
	}
	return s
}

// The prerequisites the kit knows of. A case may provide others, which
// cases of the same set may then require.
const (
	prereqHandshake = "handshake" // hello is answered with a valid handshake, seq 1, one terminal event
	prereqRun       = "run"       // a run is answered with numbered events up to its one final_result
	prereqFraming   = "framing"   // a malformed line gets its protocol_error and the host goes on
)

// caseExt is the file name extension of a case file.
const caseExt = ".txtar"

// loadCases parses every embedded case file, in name order.
func loadCases() ([]kcase, error) {
	sub, err := fs.Sub(caseFiles, "cases")
	if err != nil {
		return nil, err
	}
	return loadCaseFS(sub)
}

// loadCaseDir parses the case files of a folder.
func loadCaseDir(dir string) ([]kcase, error) {
	return loadCaseFS(os.DirFS(dir))
}

// loadCaseFS parses the *.txtar files at the top of fsys, in name order,
// and checks that every prerequisite a case requires is known.
func loadCaseFS(fsys fs.FS) ([]kcase, error) {
	names, err := fs.Glob(fsys, "*"+caseExt)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no case files (*%s)", caseExt)
	}
	slices.Sort(names)
	var cs []kcase
	known := map[string]bool{prereqHandshake: true, prereqRun: true, prereqFraming: true}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		c, err := parseCase("transcript/"+strings.TrimSuffix(path.Base(n), caseExt), data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		for _, p := range c.provides {
			known[p] = true
		}
		cs = append(cs, c)
	}
	for _, c := range cs {
		for _, p := range c.requires {
			if !known[p] {
				return nil, fmt.Errorf("%s: requires %q, which no case provides", c.name, p)
			}
		}
	}
	return cs, nil
}

var prereqName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// parseCase parses one case file (a txtar archive).
func parseCase(name string, data []byte) (kcase, error) {
	a := parseTxtar(data)
	c := kcase{name: name, desc: strings.TrimSpace(string(a.comment)), files: map[string]string{}}
	var meta, transcript *section
	for i := range a.sections {
		s := &a.sections[i]
		bad := func(format string, args ...any) (kcase, error) {
			return kcase{}, fmt.Errorf("line %d: section %q: %s", s.line, s.name, fmt.Sprintf(format, args...))
		}
		switch {
		case s.name == "meta" && meta == nil:
			meta = s
		case s.name == "transcript" && transcript == nil:
			transcript = s
		case s.name == "script.json" && c.script == nil:
			sc, err := fakeprovider.ParseScript(s.data)
			if err != nil {
				return bad("%v", err)
			}
			c.script = &sc
		case s.name == "faults" && c.faults == nil:
			for j, l := range strings.Split(strings.TrimSuffix(string(s.data), "\n"), "\n") {
				if strings.TrimSpace(l) == "" {
					continue
				}
				f, err := parseFault(l)
				if err != nil {
					return bad("line %d: %v", s.line+1+j, err)
				}
				c.faults = append(c.faults, f)
			}
			if c.faults == nil {
				c.faults = []fakeprovider.Fault{}
			}
		case strings.HasPrefix(s.name, "workspace/"):
			fname := strings.TrimPrefix(s.name, "workspace/")
			if fname == "" || fname == "." || fname == ".." || strings.ContainsAny(fname, "/\\") {
				return bad("a workspace file needs a plain name")
			}
			if _, dup := c.files[fname]; dup {
				return bad("a second section of this name")
			}
			c.files[fname] = string(s.data)
		default:
			return bad("unknown or repeated section")
		}
	}
	if meta == nil {
		return kcase{}, errors.New("no meta section")
	}
	if err := c.parseMeta(meta); err != nil {
		return kcase{}, err
	}
	if transcript == nil {
		return kcase{}, errors.New("no transcript section")
	}
	if err := c.parseTranscript(transcript); err != nil {
		return kcase{}, err
	}
	return c, nil
}

// parseMeta reads the meta section's "key: value" lines.
func (c *kcase) parseMeta(s *section) error {
	seen := map[string]bool{}
	for j, l := range strings.Split(strings.TrimSuffix(string(s.data), "\n"), "\n") {
		n := s.line + 1 + j
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" {
			return fmt.Errorf("line %d: meta lines are \"key: value\"", n)
		}
		if seen[key] {
			return fmt.Errorf("line %d: meta key %q given twice", n, key)
		}
		seen[key] = true
		switch key {
		case "rule":
			if val == "" {
				return fmt.Errorf("line %d: rule is empty", n)
			}
			c.rule = val
		case "level":
			if val != "protocol" && val != "contract" {
				return fmt.Errorf("line %d: level must be protocol or contract", n)
			}
			c.contract = val == "contract"
		case "requires", "provides":
			names := strings.Fields(val)
			for _, p := range names {
				if !prereqName.MatchString(p) {
					return fmt.Errorf("line %d: %s: %q is not a prerequisite name (lower-case letters, digits, _)", n, key, p)
				}
			}
			if key == "requires" {
				c.requires = names
			} else {
				c.provides = names
			}
		default:
			return fmt.Errorf("line %d: unknown meta key %q", n, key)
		}
	}
	for _, k := range []string{"rule", "level"} {
		if !seen[k] {
			return fmt.Errorf("meta has no %s", k)
		}
	}
	for _, p := range c.provides {
		if slices.Contains(c.requires, p) {
			return fmt.Errorf("the case both requires and provides %q", p)
		}
	}
	return nil
}

// parseTranscript reads the transcript section's directives.
func (c *kcase) parseTranscript(s *section) error {
	pending := -1 // index of a step still waiting for its expectation
	lines := strings.Split(strings.TrimSuffix(string(s.data), "\n"), "\n")
	for i, text := range lines {
		n := s.line + 1 + i
		word, rest, _ := strings.Cut(text, " ")
		bad := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, args...))
		}
		if pending >= 0 && word != "<" {
			return bad("request line %d has no expectation (< …) after it", c.steps[pending].src)
		}
		if c.exit != nil && text != "" {
			return bad("nothing may follow exit")
		}
		switch word {
		case "", "#":
			if text != "" && !strings.HasPrefix(text, "# ") && text != "#" {
				return bad("unknown directive %q", text)
			}
		case ">":
			c.steps = append(c.steps, step{src: n, line: []byte(rest)})
			pending = len(c.steps) - 1
		case ">q":
			s, err := strconv.Unquote(rest)
			if err != nil {
				return bad(">q needs a Go-quoted line: %v", err)
			}
			c.steps = append(c.steps, step{src: n, line: []byte(s)})
			pending = len(c.steps) - 1
		case ">big":
			size, err := strconv.Atoi(rest)
			if err != nil || size < 0 || size > 64<<20 {
				return bad(">big needs a size in bytes up to 64 MiB")
			}
			c.steps = append(c.steps, step{src: n, line: bytes.Repeat([]byte("x"), size)})
			pending = len(c.steps) - 1
		case "<":
			if pending < 0 {
				return bad("an expectation without a request line before it")
			}
			exp, err := parseExpect(rest)
			if err != nil {
				return bad("%v", err)
			}
			c.steps[pending].exp = exp
			pending = -1
		case "exit":
			code, err := strconv.Atoi(rest)
			if err != nil {
				return bad("exit needs a status")
			}
			c.exit = &code
		default:
			return bad("unknown directive %q", word)
		}
	}
	if pending >= 0 {
		return fmt.Errorf("request line %d has no expectation (< …) after it", c.steps[pending].src)
	}
	if len(c.steps) == 0 {
		return errors.New("no request lines")
	}
	return nil
}

func parseFault(s string) (fakeprovider.Fault, error) {
	f := strings.Fields(s)
	if len(f) < 2 || f[0] != "status" {
		return nil, errors.New(`want "status CODE [retry_after_ms=N]"`)
	}
	code, err := strconv.Atoi(f[1])
	if err != nil || code < 400 || code > 599 {
		return nil, fmt.Errorf("status %q is not 400..599", f[1])
	}
	fs := fakeprovider.FaultStatus{Code: code}
	for _, opt := range f[2:] {
		v, ok := strings.CutPrefix(opt, "retry_after_ms=")
		if !ok {
			return nil, fmt.Errorf("unknown option %q", opt)
		}
		fs.RetryAfterMS = v
	}
	return fs, nil
}

// parseExpect parses what follows "< ".
func parseExpect(s string) (expect, error) {
	toks, err := tokens(s)
	if err != nil {
		return expect{}, err
	}
	if len(toks) == 1 && toks[0] == "none" {
		return expect{none: true}, nil
	}
	if len(toks) < 2 {
		return expect{}, errors.New("an expectation is ID KIND … or none")
	}
	e := expect{kind: toks[1]}
	if toks[0] != "null" {
		id := toks[0]
		e.id = &id
	}
	args := toks[2:]
	switch e.kind {
	case "hello", "models", "shutdown":
		if len(args) != 0 {
			return expect{}, fmt.Errorf("%s takes no arguments", e.kind)
		}
	case "protocol_error", "refused":
		if len(args) != 1 {
			return expect{}, fmt.Errorf("%s takes one code", e.kind)
		}
		e.code = args[0]
	case "run":
		if len(args) < 1 || !slices.Contains(runStatuses, args[0]) {
			return expect{}, fmt.Errorf("run needs a status, one of %q", runStatuses)
		}
		e.status = args[0]
		for _, a := range args[1:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "code":
				e.code = v
			case "has":
				e.has = strings.Split(v, ",")
			case "output":
				e.output = &v
			default:
				return expect{}, fmt.Errorf("unknown run option %q", a)
			}
		}
	default:
		return expect{}, fmt.Errorf("unknown expectation %q", e.kind)
	}
	return e, nil
}

// tokens splits s at spaces; a token may end in a Go-quoted string
// (output="a b"), which is unquoted.
func tokens(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		i := strings.IndexAny(s, " \"")
		if i < 0 {
			out = append(out, s)
			break
		}
		if s[i] == ' ' {
			out = append(out, s[:i])
			s = s[i:]
			continue
		}
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil {
			return nil, fmt.Errorf("bad quoted string in %q", s)
		}
		u, _ := strconv.Unquote(q)
		out = append(out, s[:i]+u)
		s = s[i+len(q):]
	}
	return out, nil
}
