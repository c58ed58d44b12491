package resources

import (
	"bytes"
	"errors"
	"io/fs"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"octet.dev/host/runtime/internal/confine"
)

// Skill limits, from the Agent Skills format and ours.
const (
	MaxSkillName        = 64
	MaxSkillDescription = 1024 // characters
	// MaxSkills bounds the skills offered to one run; the rest are left out
	// with a DiagSkillsTruncated diagnostic.
	MaxSkills = 200
	// maxExamined bounds the SKILL.md files one resolution parses, so a
	// root of thousands of broken skills costs bounded time too.
	maxExamined = 4 * MaxSkills
	// MaxSkillFileBytes caps a SKILL.md; a larger one is skipped.
	MaxSkillFileBytes = 256 << 10
	// maxFrontMatterBytes bounds the front matter: it must close within the
	// file's first 16 KiB.
	maxFrontMatterBytes = 16 << 10
)

// SkillScheme prefixes the path by which the model reads a skill's files
// with the read, ls, find and grep tools: skill://<name>/SKILL.md.
const SkillScheme = "skill://"

// SkillsDir is the folder of a layer that holds skills: skills/<name>/SKILL.md.
const SkillsDir = "skills"

// Skill is one skill offered to the model.
type Skill struct {
	Name        string
	Description string // one line: runs of white space folded to one space
	Layer       string // Layer.Name
	open        func() (*confine.Root, error)
}

// Path is the path by which the model reads the skill's SKILL.md.
func (k Skill) Path() string { return SkillScheme + k.Name + "/SKILL.md" }

// OpenDir opens the skill's folder as a root of its own, read through
// package confine like every layer file.
func (k Skill) OpenDir() (*confine.Root, error) { return k.open() }

// Builtin is a skill the binary carries. It has the lowest precedence: a
// layer's skill of the same name shadows it. open opens its folder.
func Builtin(name, description string, open func() (*confine.Root, error)) Skill {
	return Skill{Name: name, Description: oneLine(description), Layer: LayerBuiltin, open: open}
}

// candidate is a skill folder of one layer, not yet parsed.
type candidate struct {
	layer   *Layer
	builtin *Skill
}

// Skills returns the skills to offer, sorted by name: for each folder name,
// the highest layer's valid skill (builtins lowest). Lower layers' folders
// of the same name are reported shadowed; invalid ones are reported and
// skipped. At most MaxSkills are returned.
func (s *Set) Skills(builtins ...Skill) []Skill {
	byName := map[string][]candidate{}
	for i := range builtins {
		byName[builtins[i].Name] = append(byName[builtins[i].Name], candidate{builtin: &builtins[i]})
	}
	for i := range s.Layers {
		l := &s.Layers[i]
		if l.Root == nil {
			continue
		}
		ents, err := s.readDir(l, SkillsDir)
		if err != nil {
			if d, report := fileDiag(l.Name, SkillsDir, err); report {
				s.add(d)
			}
			continue
		}
		for _, e := range ents {
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				s.add(Diagnostic{Layer: l.Name, Path: SkillsDir + "/" + e.Name(), Code: DiagSymlink,
					Message: "skill folder " + quote(e.Name()) + " is a symbolic link, which is not followed"})
			case e.IsDir():
				byName[e.Name()] = append(byName[e.Name()], candidate{layer: l})
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)

	var out []Skill
	examined := 0
	var buf []byte // the SKILL.md heads the loop reads itself, in turn
	// The highest layer's SKILL.md of the next names is parsed ahead, in
	// parallel (pre[i-from] for names[i]); the loop below decides in name
	// order, so the outcome is the same as parsing one by one.
	var pre []parsed
	from := 0
	for i, name := range names {
		if len(out) == MaxSkills || examined >= maxExamined {
			s.add(Diagnostic{Code: DiagSkillsTruncated, Message: strconv.Itoa(len(names)-i) + " more skill folders were not offered: at most " +
				strconv.Itoa(MaxSkills) + " skills are offered to a run (and at most " + strconv.Itoa(maxExamined) + " examined); the first by name were"})
			break
		}
		if i >= from+len(pre) {
			n := min(MaxSkills-len(out), maxExamined-examined, len(names)-i)
			from, pre = i, s.prefetch(names[i:i+n], byName)
		}
		cands := byName[name]
		var won *Skill
		for j := len(cands) - 1; j >= 0; j-- {
			c := cands[j]
			if won != nil {
				s.add(Diagnostic{Layer: c.layerName(), Path: c.path(name), Code: DiagShadowed,
					Message: "skill " + quote(name) + " is shadowed by the one in " + won.label(s)})
				continue
			}
			if c.builtin != nil {
				k := *c.builtin
				won = &k
				continue
			}
			examined++
			var k Skill
			var d *Diagnostic
			if p := pre[i-from]; j == len(cands)-1 && p.done {
				k, d = p.k, p.d
			} else {
				k, d = s.skill(c.layer, name, &buf)
			}
			if d != nil {
				s.add(*d)
				continue
			}
			won = &k
		}
		if won != nil {
			out = append(out, *won)
		}
	}
	return out
}

// parsed is a SKILL.md parsed ahead.
type parsed struct {
	k    Skill
	d    *Diagnostic
	done bool
}

// prefetch parses the highest layer's SKILL.md of each of names (builtins
// need none) on up to GOMAXPROCS goroutines. It adds no diagnostic: the
// caller takes them in order.
func (s *Set) prefetch(names []string, byName map[string][]candidate) []parsed {
	out := make([]parsed, len(names))
	var next atomic.Int64
	work := func() {
		var buf []byte // allocated when a SKILL.md is read, not served from the cache
		for {
			i := int(next.Add(1)) - 1
			if i >= len(names) {
				return
			}
			cands := byName[names[i]]
			if c := cands[len(cands)-1]; c.builtin == nil {
				out[i].k, out[i].d = s.skill(c.layer, names[i], &buf)
				out[i].done = true
			}
		}
	}
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), 8, len(names)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return out
}

func (c candidate) layerName() string {
	if c.builtin != nil {
		return LayerBuiltin
	}
	return c.layer.Name
}

func (c candidate) path(name string) string {
	if c.builtin != nil {
		return ""
	}
	return SkillsDir + "/" + name
}

func (k *Skill) label(s *Set) string {
	if l := s.layer(k.Layer); l != nil {
		return l.Label
	}
	return k.Layer
}

// parseSkill reads and checks skills/<name>/SKILL.md of layer l.
func (s *Set) parseSkill(l *Layer, name string, buf []byte) (Skill, *Diagnostic) {
	dir := SkillsDir + "/" + name
	rel := dir + "/SKILL.md"
	invalid := func(msg string) (Skill, *Diagnostic) {
		return Skill{}, &Diagnostic{Layer: l.Name, Path: rel, Code: DiagSkillInvalid, Message: "skill " + quote(name) + ": " + msg}
	}
	if err := CheckName(name); err != nil {
		return invalid("the folder name " + err.Error())
	}
	head, size, err := readHeadInto(l.Root, rel, buf, maxFrontMatterBytes)
	if err != nil {
		d, report := fileDiag(l.Name, rel, err)
		if !report {
			return invalid("the folder has no SKILL.md")
		}
		return Skill{}, &d
	}
	if size > MaxSkillFileBytes {
		return Skill{}, &Diagnostic{Layer: l.Name, Path: rel, Code: DiagTooLarge,
			Message: "skill " + quote(name) + ": SKILL.md is " + strconv.FormatInt(size, 10) + " bytes; the cap is " + strconv.Itoa(MaxSkillFileBytes)}
	}
	fm, err := frontMatter(head, size > int64(len(head)))
	if err != nil {
		return invalid(err.Error())
	}
	if !utf8.Valid(fm) {
		return Skill{}, &Diagnostic{Layer: l.Name, Path: rel, Code: DiagInvalidUTF8, Message: "skill " + quote(name) + ": the front matter is not valid UTF-8"}
	}
	var meta map[string]any
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return invalid("the front matter is not valid YAML")
	}
	n, ok := meta["name"].(string)
	if !ok {
		return invalid("the front matter needs name, a string")
	}
	if n != name {
		return invalid("name " + quote(truncate(n, 80)) + " differs from its folder's name")
	}
	desc, ok := meta["description"].(string)
	if !ok || strings.TrimSpace(desc) == "" {
		return invalid("the front matter needs description, a non-empty string")
	}
	if c := utf8.RuneCountInString(desc); c > MaxSkillDescription {
		return invalid("description is " + strconv.Itoa(c) + " characters; the limit is " + strconv.Itoa(MaxSkillDescription))
	}
	root := l.Root
	return Skill{Name: name, Description: oneLine(desc), Layer: l.Name,
		open: func() (*confine.Root, error) { return root.OpenDir(dir) }}, nil
}

// frontMatter returns the YAML between a first line "---" and the next
// line "---" (or "..."). more reports that head is not the whole file.
func frontMatter(head []byte, more bool) ([]byte, error) {
	head = bytes.TrimPrefix(head, []byte("\uFEFF"))
	first, rest, ok := bytes.Cut(head, []byte("\n"))
	if !ok || string(bytes.TrimRight(first, " \t\r")) != "---" {
		return nil, errors.New("SKILL.md does not start with a front matter line \"---\"")
	}
	body := rest
	for len(rest) > 0 {
		line, next, found := bytes.Cut(rest, []byte("\n"))
		if !found && more {
			break // a line cut by the head's end
		}
		if t := string(bytes.TrimRight(line, " \t\r")); t == "---" || t == "..." {
			return body[:len(body)-len(rest)], nil
		}
		rest = next
	}
	if more {
		return nil, errors.New("the front matter does not end (\"---\") within the first " + strconv.Itoa(maxFrontMatterBytes) + " bytes")
	}
	return nil, errors.New("the front matter does not end with a line \"---\"")
}

// CheckName checks a skill name: 1 to 64 lowercase letters, digits and
// hyphens, neither starting nor ending with a hyphen, without two hyphens
// in a row (the Agent Skills rules).
func CheckName(n string) error {
	switch {
	case n == "":
		return errors.New("is empty")
	case len(n) > MaxSkillName:
		return errors.New("is longer than 64 characters")
	case n[0] == '-' || n[len(n)-1] == '-' || strings.Contains(n, "--"):
		return errors.New("may not start or end with a hyphen or hold two in a row")
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return errors.New("may hold only lowercase letters, digits and hyphens")
		}
	}
	return nil
}

// oneLine folds runs of white space and control characters to one space
// and trims them at both ends.
func oneLine(s string) string {
	blank := func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
	clean := true // already one line: single spaces between words only
	prev := ' '
	for _, r := range s {
		if blank(r) && (r != ' ' || prev == ' ') {
			clean = false
			break
		}
		prev = r
	}
	if clean && !strings.HasSuffix(s, " ") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, w := range strings.FieldsFunc(s, blank) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

func quote(s string) string { return strconv.Quote(truncate(s, 80)) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Catalog finds the offered skills by name, for the tools' skill paths.
type Catalog struct {
	skills map[string]Skill
}

// NewCatalog indexes skills.
func NewCatalog(skills []Skill) *Catalog {
	c := &Catalog{skills: make(map[string]Skill, len(skills))}
	for _, k := range skills {
		c.skills[k.Name] = k
	}
	return c
}

// ErrNoSkill is returned by Resolve for a skill path that names no offered
// skill. It matches confine.ErrNotFound, so a tool reports not_found.
var ErrNoSkill error = noSkill{}

type noSkill struct{}

func (noSkill) Error() string {
	return "no skill of that name is offered to this run; the skills list in the system prompt gives their paths"
}
func (noSkill) Is(target error) bool { return target == confine.ErrNotFound }

// Resolve maps a tool path to a skill's folder: for p of the form
// skill://<name>[/<rest>], it opens the skill's folder and returns it with
// rest ("." for the folder itself) and the prefix ("skill://<name>/") by
// which tool output names the folder's files. For any other p it returns a
// nil root and no error. The caller closes the root.
func (c *Catalog) Resolve(p string) (root *confine.Root, rel, prefix string, err error) {
	after, ok := strings.CutPrefix(p, SkillScheme)
	if !ok || c == nil {
		return nil, "", "", nil
	}
	name, rest, _ := strings.Cut(after, "/")
	k, ok := c.skills[name]
	if !ok {
		return nil, "", "", ErrNoSkill
	}
	r, err := k.OpenDir()
	if err != nil {
		return nil, "", "", err
	}
	if rest == "" {
		rest = "."
	}
	return r, rest, SkillScheme + name + "/", nil
}
