package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/docs"
	"octet.dev/host/runtime/internal/resources"
)

// ResourceRootsFromEnv splits OCTET_RESOURCE_ROOTS, a list of absolute
// directories separated by ':' (empty elements ignored), the environment's
// explicit resource roots (CONTRACT §18).
func ResourceRootsFromEnv(getenv func(string) string) ([]string, error) {
	var roots []string
	for _, r := range filepath.SplitList(getenv("OCTET_RESOURCE_ROOTS")) {
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			return nil, errors.New("OCTET_RESOURCE_ROOTS: " + r + " is not an absolute path")
		}
		roots = append(roots, filepath.Clean(r))
	}
	return roots, nil
}

// errDocsUnavailable is what a tool reports when the octet-docs files
// cannot be written or opened; the log has the cause.
var errDocsUnavailable = errors.New("the octet documentation cannot be written to the host's data directory; the host's log says why")

// DocsSkill is the name of the built-in skill that points the model at the
// documentation the binary carries.
const DocsSkill = "octet-docs"

const docsSkillDescription = "Documentation of octet-host, the host that runs you: its protocol, run fields, events, tools, " +
	"tool policy, error codes and configuration (~/.octet, skills, AGENTS.md). Read it only when asked about octet or octet-host itself."

// docsFiles returns what the documentation directory holds: every file of
// Options.Docs under its own path, ERRORS.md (the code tables of the
// documents) and the octet-docs skill's SKILL.md.
func (a *Agent) docsFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(a.opts.Docs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(a.opts.Docs, p)
		files[p] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files)+2)
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if t := errorTables(names, files); len(t) > 0 {
		files["ERRORS.md"] = t
		names = append(names, "ERRORS.md")
		slices.Sort(names)
	}
	var b strings.Builder
	// A double-quoted YAML scalar (the description holds ": ").
	b.WriteString("---\nname: " + DocsSkill + "\ndescription: " + strconv.Quote(docsSkillDescription) + "\n---\n\n")
	b.WriteString("# octet-host documentation (version " + a.version() + ")\n\n")
	b.WriteString("The files of this folder, read with the read tool as skill://" + DocsSkill + "/<file> " +
		"(grep and find take path skill://" + DocsSkill + " to search them):\n\n")
	for _, n := range names {
		b.WriteString("- " + n + docsBlurb(n, files[n]) + "\n")
	}
	files["SKILL.md"] = []byte(b.String())
	return files, nil
}

func docsBlurb(name string, content []byte) string {
	switch {
	case name == "README.md":
		return ": what octet-host is, how to build and run it, and the map of the documentation"
	case name == "ERRORS.md":
		return ": every error-code table of the documentation, on its own"
	case strings.HasPrefix(name, "docs/") && strings.HasSuffix(name, ".md"):
		// The document's title says what it covers.
		for line := range bytes.Lines(content) {
			if t, ok := bytes.CutPrefix(line, []byte("# ")); ok {
				return ": " + string(bytes.TrimSpace(t))
			}
		}
	case strings.HasSuffix(name, "CONTRACT.md"):
		return ": the contract, section by section: what the host promises about the protocol"
	case strings.HasSuffix(name, ".json"):
		return ": the JSON Schema of every request and event"
	}
	return ""
}

// errorTables extracts the code-table sections (level-3 headings whose
// title says "codes") of the Markdown documents among names, in order,
// into a document of their own.
func errorTables(names []string, files map[string][]byte) []byte {
	var out bytes.Buffer
	out.WriteString("# octet-host error codes\n\nThe code tables of the documentation.\n")
	found := false
	for _, n := range names {
		if !strings.HasSuffix(n, ".md") {
			continue
		}
		in := false
		for line := range bytes.Lines(files[n]) {
			if bytes.HasPrefix(line, []byte("#")) {
				h := string(bytes.TrimSpace(line))
				in = strings.HasPrefix(h, "### ") && strings.Contains(strings.ToLower(h), "codes")
				if in {
					found = true
					out.WriteString("\n")
				}
			}
			if in {
				out.Write(line)
			}
		}
	}
	if !found {
		return nil
	}
	return out.Bytes()
}

func (a *Agent) version() string {
	if a.opts.Version == "" {
		return "(devel)"
	}
	return a.opts.Version
}

// DocsDir materializes the documentation of Options.Docs in the one
// managed folder ${XDG_DATA_HOME:-$HOME/.local/share}/octet/docs/ when it
// is not there yet or holds other content (another build's), atomically,
// and returns the folder. It fails when Options.Docs is nil, or when the
// folder cannot be written (the error names it).
func (a *Agent) DocsDir() (string, error) {
	if a.opts.Docs == nil {
		return "", errors.New("runtime: no documentation: Options.Docs is nil")
	}
	a.docsMu.Lock()
	defer a.docsMu.Unlock()
	if a.docsDir != "" && docs.Complete(a.docsDir) {
		return a.docsDir, nil // written by this process and still there
	}
	base := a.opts.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) { // unset, or relative: the XDG rules ignore it
		base = filepath.Join(a.opts.Home, ".local", "share")
	}
	files, err := a.docsFiles()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "octet", "docs")
	if err := docs.Materialize(dir, files); err != nil {
		return "", fmt.Errorf("the documentation folder %s cannot be written: %w", dir, err)
	}
	a.docsDir = dir
	return dir, nil
}

// loadResources resolves the run's resource layers (CONTRACT §18) and reads
// the context files and skills it offers: it sets p.resources (closed with
// p), p.skills and p.resourcePrompt. Nothing here refuses a run: what
// cannot be read is skipped and logged.
func (a *Agent) loadResources(p *prepared, trusted bool) {
	set := resources.Resolve(resources.Options{Home: a.opts.Home, Workspace: p.root, TrustWorkspace: trusted, Roots: a.opts.ResourceRoots, Cache: a.resCache})
	p.resources = set
	contexts := set.Contexts(p.root)
	var builtins []resources.Skill
	if a.opts.Docs != nil {
		builtins = append(builtins, resources.Builtin(DocsSkill, docsSkillDescription, func() (*confine.Root, error) {
			// The model hears only that it failed: the error names host paths.
			dir, err := a.DocsDir()
			if err != nil {
				a.log.LogAttrs(context.Background(), slog.LevelWarn, "the documentation cannot be materialized", slog.String("error", err.Error()))
				return nil, errDocsUnavailable
			}
			r, err := confine.Open(dir)
			if err != nil {
				a.log.LogAttrs(context.Background(), slog.LevelWarn, "the documentation directory cannot be opened", slog.String("error", err.Error()))
				return nil, errDocsUnavailable
			}
			return r, nil
		}))
	}
	skills := set.Skills(builtins...)
	p.skills = resources.NewCatalog(skills)
	p.skillNames = make([]string, len(skills))
	for i, k := range skills {
		p.skillNames[i] = k.Name
	}
	p.resourcePrompt = resources.Prompt(contexts, skills)
	p.extensions = a.discoverExtensions(set, p.req.RunID)
	// An override is the layers working as meant (info); everything else
	// was skipped or cut (warn). Messages and paths are relative to layers.
	for _, d := range set.Diagnostics() {
		lvl := slog.LevelWarn
		if d.Code == resources.DiagShadowed {
			lvl = slog.LevelInfo
		}
		a.log.LogAttrs(context.Background(), lvl, d.Message, slog.String("run_id", p.req.RunID), slog.String("layer", d.Layer),
			slog.String("code", d.Code), slog.String("path", d.Path))
	}
}

// discoverExtensions reads the layers' extension manifests (CONTRACT §18)
// and returns the findings a run reports right after started. Nothing is
// started: the Controlled policy forbids executable extensions, and
// protocol 1 has no opt-in. A broken or unsupported manifest is logged as a
// warning too; the informational findings (not_started, shadowed) only at
// debug level, since every run repeats them.
func (a *Agent) discoverExtensions(set *resources.Set, runID string) []protocol.ExtensionNotification {
	found := set.Extensions()
	if len(found) == 0 {
		return nil
	}
	out := make([]protocol.ExtensionNotification, len(found))
	for i, f := range found {
		out[i] = protocol.ExtensionNotification{Extension: f.Extension, Layer: f.Layer, Level: f.Level, Code: f.Code, Message: f.Message}
		lvl := slog.LevelWarn
		if f.Level == protocol.LevelInfo {
			lvl = slog.LevelDebug
		}
		a.log.LogAttrs(context.Background(), lvl, f.Message, slog.String("run_id", runID), slog.String("layer", f.Layer),
			slog.String("code", string(f.Code)), slog.String("path", f.Path))
	}
	return out
}

// reportExtensions sends the run's extension findings. The driver calls it
// right after started, before the first model call.
func (d *driver) reportExtensions() {
	for i := range d.p.extensions {
		d.stream(protocol.TypeExtensionNotification, &d.p.extensions[i])
	}
}
