package resources

import (
	"errors"
	"path/filepath"
	"strconv"

	"octet.dev/host/runtime/internal/confine"
)

// Layer names (Layer.Name). An explicit root is "root:N", N counting from 1
// in the order given.
const (
	LayerUser      = "user"
	LayerWorkspace = "workspace"
	LayerBuiltin   = "builtin" // resources the binary carries (the octet-docs skill)
)

// Layer is one resource layer, opened.
type Layer struct {
	// Name identifies the layer in diagnostics and events: "user",
	// "workspace" or "root:N".
	Name string
	// Label names the layer to the model and in messages, never by its
	// absolute path: "~/.octet", "the workspace's .octet", "resource
	// root 1".
	Label string
	// Root is the layer's directory, or nil when it does not exist.
	Root *confine.Root

	id layerID // Root's device and inode when Options.Cache is set
}

// Options say which layers exist.
type Options struct {
	// Home is the user's home directory; its .octet is the user layer. ""
	// means no user layer.
	Home string
	// Workspace is the open workspace. Its .octet is opened beneath it,
	// without following a link, when TrustWorkspace is set.
	Workspace      *confine.Root
	TrustWorkspace bool
	// Roots are the explicit roots, absolute, in order (the operator's:
	// --resource-root, OCTET_RESOURCE_ROOTS, Options.ResourceRoots).
	Roots []string
	// Cache, when set, keeps what the layers' skills and extensions were
	// between resolutions (an agent's runs); see Cache.
	Cache *Cache
}

// Diagnostic is one finding about a layer's resources. It never holds an
// absolute host path: Path is relative to the layer.
type Diagnostic struct {
	Layer   string // Layer.Name
	Code    string // one of the Diag constants
	Path    string // relative to the layer, "" when about the layer itself
	Message string
}

// Diagnostic codes: the resources' own vocabulary, logged with the run
// (extension findings carry protocol codes instead), not protocol codes.
const (
	DiagShadowed         = "shadowed"          // a later layer's resource of the same name wins
	DiagSymlink          = "symlink_skipped"   // a link where a file or folder was expected
	DiagTooLarge         = "too_large"         // a file over its cap
	DiagInvalidUTF8      = "invalid_utf8"      // a file that is not UTF-8 text
	DiagNotRegular       = "not_regular"       // a device, FIFO, socket or directory where a file was expected
	DiagUnreadable       = "unreadable"        // an I/O error
	DiagSkillInvalid     = "skill_invalid"     // SKILL.md front matter missing or breaking a rule
	DiagSkillsTruncated  = "skills_truncated"  // more skills than MaxSkills (or than the examination bound)
	DiagContextTruncated = "context_truncated" // an AGENTS.md over MaxContextBytes, cut
	DiagRootMissing      = "root_missing"      // an explicit root that cannot be opened
	DiagTruncated        = "truncated"         // more diagnostics than MaxDiagnostics
)

// MaxDiagnostics bounds the diagnostics of one resolution; the rest are
// counted in one DiagTruncated diagnostic.
const MaxDiagnostics = 64

// Set is the resolved layers of one run. Close releases their descriptors.
type Set struct {
	Layers []Layer
	cache  *Cache
	diags  []Diagnostic
	lost   int // diagnostics over MaxDiagnostics
}

// Resolve opens the layers of opts, lowest precedence first. A layer whose
// directory does not exist is kept with a nil Root (it has nothing to
// offer); an explicit root that cannot be opened is reported. Resolve
// reads no file: what a layer holds is read by Contexts and Skills.
func Resolve(opts Options) *Set {
	s := &Set{cache: opts.Cache}
	defer func() {
		if s.cache == nil {
			return
		}
		for i := range s.Layers {
			if s.Layers[i].Root != nil {
				s.Layers[i].id = idOf(s.Layers[i].Root)
			}
		}
	}()
	if opts.Home != "" {
		l := Layer{Name: LayerUser, Label: "~/.octet"}
		if r, err := confine.Open(filepath.Join(opts.Home, ".octet")); err == nil {
			l.Root = r
		} else if !errors.Is(err, confine.ErrWorkspaceNotFound) {
			s.add(Diagnostic{Layer: l.Name, Code: DiagUnreadable, Message: "~/.octet cannot be opened as a directory"})
		}
		s.Layers = append(s.Layers, l)
	}
	if opts.TrustWorkspace && opts.Workspace != nil {
		l := Layer{Name: LayerWorkspace, Label: "the workspace's .octet"}
		r, err := opts.Workspace.OpenDir(".octet")
		switch {
		case err == nil:
			l.Root = r
		case errors.Is(err, confine.ErrNotFound):
		case errors.Is(err, confine.ErrSymlink):
			s.add(Diagnostic{Layer: l.Name, Code: DiagSymlink, Message: "the workspace's .octet is a symbolic link, which is not followed"})
		default:
			s.add(Diagnostic{Layer: l.Name, Code: DiagUnreadable, Message: "the workspace's .octet cannot be opened as a directory"})
		}
		s.Layers = append(s.Layers, l)
	}
	for i, dir := range opts.Roots {
		n := strconv.Itoa(i + 1)
		l := Layer{Name: "root:" + n, Label: "resource root " + n}
		r, err := confine.Open(dir)
		if err != nil {
			s.add(Diagnostic{Layer: l.Name, Code: DiagRootMissing, Message: "resource root " + n + " cannot be opened as a directory"})
		}
		l.Root = r
		s.Layers = append(s.Layers, l)
	}
	return s
}

// Close releases every layer's descriptor.
func (s *Set) Close() {
	if s == nil {
		return
	}
	for i := range s.Layers {
		if s.Layers[i].Root != nil {
			s.Layers[i].Root.Close()
			s.Layers[i].Root = nil
		}
	}
}

// Diagnostics returns what the resolution and the reads so far found, at
// most MaxDiagnostics of them and then one DiagTruncated.
func (s *Set) Diagnostics() []Diagnostic {
	out := append([]Diagnostic(nil), s.diags...)
	if s.lost > 0 {
		out = append(out, Diagnostic{Code: DiagTruncated, Message: strconv.Itoa(s.lost) + " more resource diagnostics were left out"})
	}
	return out
}

func (s *Set) add(d Diagnostic) {
	// The count of skills left out is kept whatever came before it.
	if len(s.diags) >= MaxDiagnostics && d.Code != DiagSkillsTruncated {
		s.lost++
		return
	}
	s.diags = append(s.diags, d)
}

// layer returns the layer named name.
func (s *Set) layer(name string) *Layer {
	for i := range s.Layers {
		if s.Layers[i].Name == name {
			return &s.Layers[i]
		}
	}
	return nil
}

// fileDiag turns an error of opening or reading a file of a layer into a
// diagnostic, or reports false for a file that does not exist.
func fileDiag(layer, rel string, err error) (Diagnostic, bool) {
	d := Diagnostic{Layer: layer, Path: rel}
	switch {
	case errors.Is(err, confine.ErrNotFound):
		return d, false
	case errors.Is(err, confine.ErrSymlink):
		d.Code, d.Message = DiagSymlink, rel+" is or passes through a symbolic link, which is not followed"
	case errors.Is(err, confine.ErrTooLarge):
		d.Code, d.Message = DiagTooLarge, rel+" is over its size cap"
	case errors.Is(err, confine.ErrIsDir), errors.Is(err, confine.ErrNotRegular), errors.Is(err, confine.ErrNotDir):
		d.Code, d.Message = DiagNotRegular, rel+" is not a regular file"
	default:
		d.Code, d.Message = DiagUnreadable, rel+" cannot be read"
	}
	return d, true
}
