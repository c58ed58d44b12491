package confine

import (
	"errors"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrProtected means a mutation was aimed at a protected directory (see
// Guard) or at something inside it. A *ProtectedError carries it.
var ErrProtected = errors.New("protected directory")

// ProtectedError is Guard.Check's refusal. Path is the workspace path of
// the refused mutation; Dir is the protected directory's display name
// (ProtectedDir.Name), never its host path.
type ProtectedError struct {
	Path, Dir string
}

func (e *ProtectedError) Error() string {
	return e.Path + " is in " + e.Dir + ", the operator's configuration; edit and write never change it"
}

func (e *ProtectedError) Is(target error) bool { return target == ErrProtected }

// ProtectedDir is a host directory that mutations through a Root must not
// reach, wherever it lies relative to the workspace.
type ProtectedDir struct {
	// Path is absolute; the directory need not exist (yet).
	Path string
	// Name names it in errors, e.g. "~/.octet".
	Name string
}

// fileID is a file's identity: device and inode numbers. Unlike a path it
// does not depend on spelling, case folding, symbolic links or bind
// mounts.
type fileID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), st.Ino} }

// mark is one protected directory as the guard recognizes it: its own
// identity when it exists (rest empty), else the identity of its nearest
// existing ancestor and the names below that ancestor which would create
// it, compared case-insensitively.
type mark struct {
	id   fileID
	rest []string
	name string
}

// Guard refuses mutations of protected directories through one Root. It is
// made once per run (Root.Guard) and is safe for concurrent use. A nil
// *Guard protects nothing.
type Guard struct {
	r     *Root
	marks []mark
}

// Guard resolves dirs and returns the guard of r. Each directory is
// resolved as the host resolves it when it reads the operator's files:
// symbolic links followed, missing components remembered by name below
// the nearest existing directory. A directory that cannot be resolved
// (a component is a file, or cannot be read) cannot be read by the host
// either, and is left out.
func (r *Root) Guard(dirs ...ProtectedDir) *Guard {
	g := &Guard{r: r}
	for _, d := range dirs {
		if id, rest, ok := anchor(d.Path); ok {
			g.marks = append(g.marks, mark{id: id, rest: rest, name: d.Name})
		}
	}
	return g
}

// Check returns a *ProtectedError when a mutation of the workspace path p
// (create, replace, mkdir) would change a protected directory: when p is
// one, lies below one, or would create one, or when the workspace itself
// lies inside one. It opens p's existing directories one by one beneath
// the root, without following links, and compares each directory's
// identity with the protected ones, so no spelling (case, "..", a link,
// a bind mount, a HOME inside the workspace) gets past it. Errors of p's
// normalization are Rel's; a component that is missing or not a directory
// ends the walk, since nothing below it exists to be protected.
//
// The check runs right before the mutation; a concurrent process that
// moves directories between the two (only a command the operator allowed
// could) is outside what it guarantees.
func (g *Guard) Check(p string) error {
	if g == nil || len(g.marks) == 0 {
		return nil
	}
	rel, err := g.r.Rel(p)
	if err != nil {
		return err
	}
	if name := g.aroundRoot(); name != "" {
		return &ProtectedError{Path: rel, Dir: name}
	}
	var comps []string
	if rel != "." {
		comps = strings.Split(rel, "/")
	}
	dir := g.r.fd
	defer func() {
		if dir != g.r.fd {
			unix.Close(dir)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return pathErr("check", ".", err)
	}
	for i := 0; ; i++ {
		if name := g.match(idOf(&st), comps[i:]); name != "" {
			return &ProtectedError{Path: rel, Dir: name}
		}
		if i == len(comps) {
			return nil
		}
		next, err := openRetry(dir, comps[i], unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // missing, or unreadable: the mutation finds out
		}
		if err := unix.Fstat(next, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(next)
			return nil
		}
		if dir != g.r.fd {
			unix.Close(dir)
		}
		dir = next
	}
}

// match returns the name of a protected directory that a path continuing
// with tail from the directory id reaches, or "".
func (g *Guard) match(id fileID, tail []string) string {
	for _, m := range g.marks {
		if m.id != id || len(tail) < len(m.rest) {
			continue
		}
		same := true
		for k, name := range m.rest {
			if !strings.EqualFold(name, tail[k]) {
				same = false
				break
			}
		}
		if same {
			return m.name
		}
	}
	return ""
}

// aroundRoot returns the name of an existing protected directory that
// contains the workspace root (or is it), or "". It climbs from the root
// descriptor with "..", comparing identities, up to the file system root.
func (g *Guard) aroundRoot() string {
	dir := g.r.fd
	defer func() {
		if dir != g.r.fd {
			unix.Close(dir)
		}
	}()
	var st unix.Stat_t
	if unix.Fstat(dir, &st) != nil {
		return ""
	}
	for range 4096 {
		id := idOf(&st)
		for _, m := range g.marks {
			if len(m.rest) == 0 && m.id == id {
				return m.name
			}
		}
		up, err := openRetry(dir, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return ""
		}
		if dir != g.r.fd {
			unix.Close(dir)
		}
		dir = up
		if unix.Fstat(dir, &st) != nil || idOf(&st) == id {
			return "" // "/" is its own parent
		}
	}
	return ""
}

// maxLinks bounds the links anchor follows, as the kernel does (ELOOP).
const maxLinks = 40

// anchor resolves the absolute path p component by component, following
// symbolic links as the kernel would (a link's ".." applies to where the
// link led), and returns the identity of p when it exists, or of its
// deepest existing directory and the remaining names.
func anchor(p string) (fileID, []string, bool) {
	if !filepath.IsAbs(p) {
		return fileID{}, nil, false
	}
	todo := strings.Split(p, "/")
	cur, links := "/", 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		var st unix.Stat_t
		err := unix.Lstat(next, &st)
		switch {
		case err == unix.ENOENT:
			return missing(cur, append([]string{c}, todo...))
		case err != nil:
			return fileID{}, nil, false
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			links++
			target, err := readlink(next)
			if err != nil || links > maxLinks {
				return fileID{}, nil, false
			}
			if strings.HasPrefix(target, "/") {
				cur = "/"
			}
			todo = append(strings.Split(target, "/"), todo...)
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			cur = next
		default:
			return fileID{}, nil, false // a file: nothing lies below it
		}
	}
	var st unix.Stat_t
	if unix.Stat(cur, &st) != nil {
		return fileID{}, nil, false
	}
	return idOf(&st), nil, true
}

// missing anchors the not yet existing names rest below the existing
// directory dir. ".." among them climbs dir once the names before it are
// created as directories, which is what a lexical clean computes.
func missing(dir string, rest []string) (fileID, []string, bool) {
	clean := path.Clean(strings.Join(rest, "/"))
	for clean == ".." || strings.HasPrefix(clean, "../") {
		dir = path.Dir(dir)
		clean = strings.TrimPrefix(strings.TrimPrefix(clean, ".."), "/")
		if clean == "" {
			clean = "."
		}
	}
	var names []string
	if clean != "." {
		names = strings.Split(clean, "/")
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return fileID{}, nil, false
	}
	return idOf(&st), names, true
}

// readlink returns the target of the link at p.
func readlink(p string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlink(p, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
